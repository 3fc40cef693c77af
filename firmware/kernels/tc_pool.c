/* tinycompile runtime: int8 pooling, AVERAGE_POOL_2D and MAX_POOL_2D (see tc_pool.h). Written
 * from TFLM's reference semantics (reference_integer_ops::AveragePool / MaxPool); the loops are
 * our own: the clipped window is computed once per output position and channels are processed
 * four at a time. The two operators share that window clipping and loop structure, so they stay
 * one family file. Cortex-M4/M7 (TC_DSP): four channels per word, MAX_POOL_2D with SSUB8/SEL per
 * tap, AVERAGE_POOL_2D summing SXTB16 halves with SADD16 (windows of at most 256 taps, so the
 * 16-bit lane sums cannot overflow), rounded four lanes at a time without a division for
 * windows of at most 16 taps (tc_avg4_recip_dsp), else per channel; full 2x2 windows unrolled;
 * channel counts not a multiple of 4 (but at least 4) end with a word overlapping the one
 * before. Cortex-M55 (Helium, TC_MVE): the whole int8 layer runs tc_pool_mve.h's walks (16
 * channels per vector for MAX_POOL_2D, VMAX.S8 per tap; 8 per vector for AVERAGE_POOL_2D of at
 * most 256 taps, VLDRB.S16 + VADD.I16 per tap and the rounding division by a reciprocal
 * multiply, exact), channel tails predicated. ARMv6-M: windows of up to 64 taps run
 * tc_pool_m0.c's loops (the whole layer).
 * tc_avgpool_s16 / tc_maxpool_s16 (16x8): the same arithmetic on int16 (TFLM's int16
 * AveragePool / MaxPool: int32 sum, max from -32768), channel by channel. */
#include <stdint.h>

#include "tc_kernel_util.h"
#if defined(__ARM_ARCH_6M__)
#include "tc_m0.h"
#endif
#include "tc_pool.h"
#include "tc_pool_mve.h"
#include "tc_qmath.h"

/* Clip a window starting at origin (size k) to [0, size): taps [*lo, *hi). */
static void tc_pool_range(int32_t origin, int32_t k, int32_t size, int32_t *lo, int32_t *hi)
{
    int32_t a = origin < 0 ? -origin : 0;
    int32_t b = size - origin < k ? size - origin : k;
    *lo = a;
    *hi = b > a ? b : a;
}

/* TFLM's rounding: (acc +- count / 2) / count with C's truncating division. For a count that
 * is a power of two (sh >= 0, count == 1 << sh) the same value comes from shifting the magnitude,
 * which avoids a division (a library call on Cortex-M0+) per output. */
TC_INLINE int32_t tc_avg_round(int32_t acc, int32_t count, int32_t sh)
{
    if (sh >= 0) {
        return acc > 0 ? (acc + count / 2) >> sh : -((count / 2 - acc) >> sh);
    }
    return acc > 0 ? (acc + count / 2) / count : (acc - count / 2) / count;
}

/* log2(count) when count is a power of two, else -1. */
static int32_t tc_pow2_shift(int32_t count)
{
    int32_t sh = 0;
    if (count <= 0 || (count & (count - 1)) != 0) {
        return -1;
    }
    while ((1 << sh) < count) {
        sh++;
    }
    return sh;
}

#if TC_DSP && !TC_MVE /* the Cortex-M55 takes tc_pool_mve.h's paths */
/* Bytewise signed max / min of four int8 lanes (SSUB8 sets GE where a >= b, SEL picks). */
TC_INLINE uint32_t tc_max8x4(uint32_t a, uint32_t b)
{
    uint32_t t;
    __asm__("ssub8 %0, %1, %2\n\tsel %1, %1, %2" : "=&r"(t), "+r"(a) : "r"(b) : "cc");
    return a;
}

TC_INLINE uint32_t tc_min8x4(uint32_t a, uint32_t b)
{
    uint32_t t;
    __asm__("ssub8 %0, %1, %2\n\tsel %1, %2, %1" : "=&r"(t), "+r"(a) : "r"(b) : "cc");
    return a;
}

/* Channels [0, nc rounded down to 4) of one max-pool output: rows x cols taps from org (taps C
 * bytes apart, rows rs), clamped to [lo4, hi4] bytewise when clamp. Returns the channels done. */
TC_INLINE int32_t tc_maxpool_px_dsp(const int8_t *org, int32_t rows, int32_t cols, int32_t C,
                                 int32_t nc, int32_t rs, uint32_t lo4, uint32_t hi4, int clamp,
                                 int8_t *out)
{
    int32_t c, y, x;
    if (rows == 2 && cols == 2) { /* the common full 2x2 window: three SSUB8/SEL pairs */
        for (c = 0; c + 4 <= nc; c += 4) {
            const int8_t *a = org + c;
            uint32_t m = tc_max8x4(tc_max8x4(tc_ld32(a), tc_ld32(a + C)),
                                   tc_max8x4(tc_ld32(a + rs), tc_ld32(a + rs + C)));
            if (clamp) {
                m = tc_min8x4(tc_max8x4(m, lo4), hi4);
            }
            memcpy(out + c, &m, 4);
        }
        return c;
    }
    for (c = 0; c + 4 <= nc; c += 4) {
        const int8_t *row = org + c;
        uint32_t m = 0x80808080u; /* -128 in every lane */
        for (y = 0; y < rows; y++, row += rs) {
            const int8_t *xp = row;
            for (x = cols; x >= 2; x -= 2, xp += 2 * C) { /* two taps per pass */
                m = tc_max8x4(tc_max8x4(m, tc_ld32(xp)), tc_ld32(xp + C));
            }
            if (x) {
                m = tc_max8x4(m, tc_ld32(xp));
            }
        }
        if (clamp) {
            m = tc_min8x4(tc_max8x4(m, lo4), hi4);
        }
        memcpy(out + c, &m, 4);
    }
    return c;
}

/* tc_avg_round without branches (the divide is SDIV here): with h = count / 2,
 * (acc + h) / count truncated for acc > 0; for acc <= 0, (acc - h) / count truncated equals
 * (acc + h - 1) >> sh when count = 2^sh (floor((acc - h) / count) rounded toward zero is
 * ceil, and ceil(a / c) = floor((a + c - 1) / c) with c - h = h for even c; sh = 0: h = 0, so
 * acc + h - 1 would be off: handled by the h = 0 case below adding nothing). */
TC_INLINE int32_t tc_avg_round_dsp(int32_t acc, int32_t count, int32_t sh)
{
    const int32_t h = count >> 1, s = acc >> 31;
    if (sh >= 0) {
        return (acc + h + (h ? s : 0)) >> sh;
    }
    return (acc + ((h ^ s) - s)) / count;
}

/* SMULWB / SMULWT: (a * the bottom / top 16-bit lane of b) >> 16. */
TC_INLINE uint32_t tc_smulwb(int32_t a, uint32_t b)
{
    uint32_t r;
    __asm__("smulwb %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));
    return r;
}

TC_INLINE uint32_t tc_smulwt(int32_t a, uint32_t b)
{
    uint32_t r;
    __asm__("smulwt %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));
    return r;
}

/* The rounded averages of four channels' sums (16-bit lanes: se channels 0 and 2, so 1 and 3)
 * over d = count <= 16 taps, as one word, without a division. TFLM's (acc + d / 2) / d for
 * acc > 0 and (acc - d / 2) / d (truncated, so a ceiling) for acc <= 0 are both
 * floor((acc + c) / d), c = d / 2 where acc >= 0 and d - 1 - d / 2 where acc < 0 (both give 0
 * at acc = 0). Per lane N = acc + c + 128 d is in [0, 255 d + d / 2] (|acc| <= 128 d), below
 * 2^15; SSUB16 sets GE where acc >= 0 and SEL picks kp or kn, the two values of c + 128 d.
 * SMULWB/SMULWT by m16 = ceil(2^16 / d) = (2^16 + e) / d (0 <= e < d) give floor(N / d):
 * with N = q d + r, N m16 / 2^16 = q + (r + N e / 2^16) / d and N e < 255.5 d^2 <= 65408 <
 * 2^16 (d <= 16), so the floor is q = TFLM's average + 128, in [0, 255]; bytes packed, flipped
 * by 0x80 back to int8, clamped to [lo4, hi4] bytewise when clamp (tests/test_kernels_fast_mul.py
 * checks every d and N). */
TC_INLINE uint32_t tc_avg4_recip_dsp(uint32_t se, uint32_t so, uint32_t kp, uint32_t kn,
                                     int32_t m16, uint32_t lo4, uint32_t hi4, int clamp)
{
    uint32_t t, w, e, o;
    __asm__("ssub16 %[t], %[s], %[z]\n\tsel %[t], %[p], %[n]\n\tsadd16 %[s], %[s], %[t]"
            : [s] "+r"(se), [t] "=&r"(t)
            : [z] "r"(0), [p] "r"(kp), [n] "r"(kn)
            : "cc");
    __asm__("ssub16 %[t], %[s], %[z]\n\tsel %[t], %[p], %[n]\n\tsadd16 %[s], %[s], %[t]"
            : [s] "+r"(so), [t] "=&r"(t)
            : [z] "r"(0), [p] "r"(kp), [n] "r"(kn)
            : "cc");
    e = tc_pkhbt16(tc_smulwb(m16, se), tc_smulwt(m16, se));
    o = tc_pkhbt16(tc_smulwb(m16, so), tc_smulwt(m16, so));
    w = (e | (o << 8)) ^ 0x80808080u;
    if (clamp) {
        w = tc_min8x4(tc_max8x4(w, lo4), hi4);
    }
    return w;
}

/* Channels [0, C) of one average-pool output (none when C < 4; when C is not a multiple of 4,
 * a last word overlaps the one before, its channels recomputed alike; count <= 256 taps;
 * m16 > 0: count <= 16, rounded by tc_avg4_recip_dsp with its constants kp, kn). */
static int32_t tc_avgpool_px_dsp(const int8_t *org, int32_t rows, int32_t cols, int32_t C,
                                 int32_t rs, int32_t count, int32_t sh, int32_t lo, int32_t hi,
                                 int32_t m16, uint32_t kp, uint32_t kn, int8_t *out)
{
    const uint32_t lo4 = (uint8_t)lo * 0x01010101u, hi4 = (uint8_t)hi * 0x01010101u;
    const int clamp = lo > -128 || hi < 127;
    int32_t c, y, x;
    for (c = 0;; c += 4) {
        if (c + 4 > C) { /* a last word overlapping the one before */
            if (c >= C || C < 4) {
                break;
            }
            c = C - 4;
        }
        const int8_t *row = org + c;
        uint32_t se = 0, so = 0;
        int32_t nr = rows;
        if (rows == 2 && cols == 2) { /* the common full 2x2 window, unrolled */
            const uint32_t w0 = tc_ld32(row), w1 = tc_ld32(row + C);
            const uint32_t w2 = tc_ld32(row + rs), w3 = tc_ld32(row + rs + C);
            se = (uint32_t)__sadd16((int16x2_t)tc_sxtb16_lo(w0), (int16x2_t)tc_sxtb16_lo(w1));
            so = (uint32_t)__sadd16((int16x2_t)tc_sxtb16_hi(w0), (int16x2_t)tc_sxtb16_hi(w1));
            se = (uint32_t)__sadd16((int16x2_t)se, (int16x2_t)tc_sxtb16_lo(w2));
            so = (uint32_t)__sadd16((int16x2_t)so, (int16x2_t)tc_sxtb16_hi(w2));
            se = (uint32_t)__sadd16((int16x2_t)se, (int16x2_t)tc_sxtb16_lo(w3));
            so = (uint32_t)__sadd16((int16x2_t)so, (int16x2_t)tc_sxtb16_hi(w3));
            nr = 0; /* done: skip the loop below */
        }
        for (y = 0; y < nr; y++, row += rs) {
            const int8_t *xp = row;
            for (x = 0; x < cols; x++, xp += C) {
                const uint32_t w = tc_ld32(xp);
                se = (uint32_t)__sadd16((int16x2_t)se, (int16x2_t)tc_sxtb16_lo(w));
                so = (uint32_t)__sadd16((int16x2_t)so, (int16x2_t)tc_sxtb16_hi(w));
            }
        }
        if (m16 > 0) {
            const uint32_t w = tc_avg4_recip_dsp(se, so, kp, kn, m16, lo4, hi4, clamp);
            memcpy(out + c, &w, 4);
            continue;
        }
        out[c] = (int8_t)tc_clamp(tc_avg_round_dsp((int16_t)se, count, sh), lo, hi);
        out[c + 1] = (int8_t)tc_clamp(tc_avg_round_dsp((int16_t)so, count, sh), lo, hi);
        out[c + 2] = (int8_t)tc_clamp(tc_avg_round_dsp((int32_t)se >> 16, count, sh), lo, hi);
        out[c + 3] = (int8_t)tc_clamp(tc_avg_round_dsp((int32_t)so >> 16, count, sh), lo, hi);
    }
    return c;
}

/* The last four channels of a max-pool output when C is not a multiple of 4 (a word overlapping
 * the one before, its channels recomputed alike): out of line, so the main loop stays as it
 * compiles alone. */
__attribute__((noinline)) static void tc_maxpool_tail_dsp(const int8_t *org, int32_t rows,
                                                          int32_t cols, int32_t C, int32_t rs,
                                                          uint32_t lo4, uint32_t hi4, int clamp,
                                                          int8_t *out)
{
    (void)tc_maxpool_px_dsp(org + C - 4, rows, cols, C, 4, rs, lo4, hi4, clamp, out + C - 4);
}
#endif

void tc_avgpool_s8(const tc_pool_params_t *p, const int8_t *in, int8_t *out)
{
    const int32_t H = p->in_h, W = p->in_w, C = p->channels;
    int32_t n, oy, ox, c;
#if defined(__ARM_ARCH_6M__)
    if (p->f_h * p->f_w <= TC_POOL_M0_MAXTAPS) {
        tc_avgpool_s8_m0(p, in, out);
        return;
    }
#endif
#if TC_MVE
    if (p->f_h * p->f_w <= 256) { /* every clipped window too: the sums fit int16 lanes */
        tc_pool_groups_mve(p, in, out, 8, tc_avgpool_g4_mve, tc_avgpool_g1_mve,
                           tc_avgpool_t1_mve);
        return;
    }
#endif
    for (n = 0; n < p->batches; n++) {
        const int8_t *img = in + n * H * W * C;
        for (oy = 0; oy < p->out_h; oy++) {
            const int32_t iy0 = oy * p->stride_h - p->pad_h;
            int32_t fy0, fy1;
            tc_pool_range(iy0, p->f_h, H, &fy0, &fy1);
            for (ox = 0; ox < p->out_w; ox++) {
                const int32_t ix0 = ox * p->stride_w - p->pad_w;
                int32_t fx0, fx1;
                tc_pool_range(ix0, p->f_w, W, &fx0, &fx1);
                {
                    const int32_t count = (fy1 - fy0) * (fx1 - fx0);
                    const int32_t sh = tc_pow2_shift(count);
                    const int8_t *org = img + ((iy0 + fy0) * W + ix0 + fx0) * C;
                    const int32_t rows = fy1 - fy0, cols = fx1 - fx0;
                    int32_t y, x;
                    if (count == 0) { /* unreachable: the compiler rejects empty windows */
                        for (c = 0; c < C; c++) {
                            *out++ = 0;
                        }
                        continue;
                    }
                    c = 0;
#if TC_DSP && !TC_MVE
                    if (count <= 256) {
                        int32_t m16 = 0;
                        uint32_t kp = 0, kn = 0;
                        if (count <= 16) { /* tc_avg4_recip_dsp's constants */
                            const int32_t h = count >> 1, b = 128 * count;
                            m16 = (65535 + count) / count;
                            kp = (uint32_t)(b + h) * 0x10001u;
                            kn = (uint32_t)(b + count - 1 - h) * 0x10001u;
                        }
                        c = tc_avgpool_px_dsp(org, rows, cols, C, W * C, count, sh, p->act_min,
                                              p->act_max, m16, kp, kn, out);
                        out += c;
                    }
#endif
                    for (; c + 3 < C; c += 4) {
                        int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
                        for (y = 0; y < rows; y++) {
                            const int8_t *xp = org + y * W * C + c;
                            for (x = 0; x < cols; x++) {
                                s0 += xp[0];
                                s1 += xp[1];
                                s2 += xp[2];
                                s3 += xp[3];
                                xp += C;
                            }
                        }
                        out[0] = (int8_t)tc_clamp(tc_avg_round(s0, count, sh), p->act_min,
                                                  p->act_max);
                        out[1] = (int8_t)tc_clamp(tc_avg_round(s1, count, sh), p->act_min,
                                                  p->act_max);
                        out[2] = (int8_t)tc_clamp(tc_avg_round(s2, count, sh), p->act_min,
                                                  p->act_max);
                        out[3] = (int8_t)tc_clamp(tc_avg_round(s3, count, sh), p->act_min,
                                                  p->act_max);
                        out += 4;
                    }
                    for (; c < C; c++) {
                        int32_t s = 0;
                        for (y = 0; y < rows; y++) {
                            const int8_t *xp = org + y * W * C + c;
                            for (x = 0; x < cols; x++) {
                                s += *xp;
                                xp += C;
                            }
                        }
                        *out++ = (int8_t)tc_clamp(tc_avg_round(s, count, sh), p->act_min,
                                                  p->act_max);
                    }
                }
            }
        }
    }
}

TC_INLINE int32_t tc_max32(int32_t a, int32_t b)
{
    return a > b ? a : b;
}

void tc_maxpool_s8(const tc_pool_params_t *p, const int8_t *in, int8_t *out)
{
    const int32_t H = p->in_h, W = p->in_w, C = p->channels;
    int32_t n, oy, ox, c;
#if defined(__ARM_ARCH_6M__)
    if (p->f_h * p->f_w <= TC_POOL_M0_MAXTAPS) {
        tc_maxpool_s8_m0(p, in, out);
        return;
    }
#endif
#if TC_MVE
    tc_pool_groups_mve(p, in, out, 16, tc_maxpool_g4_mve, tc_maxpool_g1_mve, tc_maxpool_t1_mve);
    return;
#endif
#if TC_DSP && !TC_MVE
    const uint32_t lo4 = (uint8_t)p->act_min * 0x01010101u;
    const uint32_t hi4 = (uint8_t)p->act_max * 0x01010101u;
    const int clamp = p->act_min > -128 || p->act_max < 127;
#endif
    for (n = 0; n < p->batches; n++) {
        const int8_t *img = in + n * H * W * C;
        for (oy = 0; oy < p->out_h; oy++) {
            const int32_t iy0 = oy * p->stride_h - p->pad_h;
            int32_t fy0, fy1;
            tc_pool_range(iy0, p->f_h, H, &fy0, &fy1);
            for (ox = 0; ox < p->out_w; ox++) {
                const int32_t ix0 = ox * p->stride_w - p->pad_w;
                int32_t fx0, fx1;
                tc_pool_range(ix0, p->f_w, W, &fx0, &fx1);
                {
                    const int8_t *org = img + ((iy0 + fy0) * W + ix0 + fx0) * C;
                    const int32_t rows = fy1 - fy0, cols = fx1 - fx0;
                    int32_t y, x;
                    c = 0;
#if TC_DSP && !TC_MVE
                    if (rows > 0 && cols > 0) {
                        c = tc_maxpool_px_dsp(org, rows, cols, C, C, W * C, lo4, hi4, clamp,
                                              out);
                        if (c < C && C >= 4) {
                            tc_maxpool_tail_dsp(org, rows, cols, C, W * C, lo4, hi4, clamp, out);
                            c = C;
                        }
                        out += c;
                    }
#endif
                    for (; c + 3 < C; c += 4) {
                        int32_t m0 = -128, m1 = -128, m2 = -128, m3 = -128;
                        for (y = 0; y < rows; y++) {
                            const int8_t *xp = org + y * W * C + c;
                            for (x = 0; x < cols; x++) {
                                m0 = tc_max32(m0, xp[0]);
                                m1 = tc_max32(m1, xp[1]);
                                m2 = tc_max32(m2, xp[2]);
                                m3 = tc_max32(m3, xp[3]);
                                xp += C;
                            }
                        }
                        out[0] = (int8_t)tc_clamp(m0, p->act_min, p->act_max);
                        out[1] = (int8_t)tc_clamp(m1, p->act_min, p->act_max);
                        out[2] = (int8_t)tc_clamp(m2, p->act_min, p->act_max);
                        out[3] = (int8_t)tc_clamp(m3, p->act_min, p->act_max);
                        out += 4;
                    }
                    for (; c < C; c++) {
                        int32_t m = -128;
                        for (y = 0; y < rows; y++) {
                            const int8_t *xp = org + y * W * C + c;
                            for (x = 0; x < cols; x++) {
                                m = tc_max32(m, *xp);
                                xp += C;
                            }
                        }
                        *out++ = (int8_t)tc_clamp(m, p->act_min, p->act_max);
                    }
                }
            }
        }
    }
}

#if defined(__ARM_ARCH_6M__)
/* tc_avgpool_s16's channels two at a time (C even, org word-aligned): one LDR per tap gives
 * both int16 lanes (SXTH and ASRS split them), a third of the loads and loop steps of the
 * channel-by-channel walk. Returns the channels done (all of them). */
static int32_t tc_avgpool_s16_pairs_m0(const tc_pool_params_t *p, const int16_t *org,
                                       int32_t rows, int32_t cols, int32_t count, int32_t sh,
                                       int16_t *out)
{
    const int32_t C = p->channels, words = C >> 1, row_words = p->in_w * words;
    const int32_t *base = (const int32_t *)__builtin_assume_aligned(org, 4);
    int32_t c, y, x;
    for (c = 0; c < words; c++) {
        int32_t s0 = 0, s1 = 0;
        for (y = 0; y < rows; y++) {
            const int32_t *xp = base + y * row_words + c;
            for (x = 0; x < cols; x++) {
                int32_t w;
                memcpy(&w, xp, 4); /* word-aligned: checked by the caller */
                s0 += (int16_t)w;
                s1 += w >> 16;
                xp += words;
            }
        }
        out[0] = (int16_t)tc_clamp(tc_avg_round(s0, count, sh), p->act_min, p->act_max);
        out[1] = (int16_t)tc_clamp(tc_avg_round(s1, count, sh), p->act_min, p->act_max);
        out += 2;
    }
    return C;
}
#endif

void tc_avgpool_s16(const tc_pool_params_t *p, const int16_t *in, int16_t *out)
{
    const int32_t H = p->in_h, W = p->in_w, C = p->channels;
    int32_t n, oy, ox, c, y, x;
    for (n = 0; n < p->batches; n++) {
        const int16_t *img = in + n * H * W * C;
        for (oy = 0; oy < p->out_h; oy++) {
            const int32_t iy0 = oy * p->stride_h - p->pad_h;
            int32_t fy0, fy1;
            tc_pool_range(iy0, p->f_h, H, &fy0, &fy1);
            for (ox = 0; ox < p->out_w; ox++) {
                const int32_t ix0 = ox * p->stride_w - p->pad_w;
                int32_t fx0, fx1, count, sh;
                const int16_t *org;
                tc_pool_range(ix0, p->f_w, W, &fx0, &fx1);
                count = (fy1 - fy0) * (fx1 - fx0);
                sh = tc_pow2_shift(count);
                org = img + ((iy0 + fy0) * W + ix0 + fx0) * C;
                c = 0;
#if defined(__ARM_ARCH_6M__)
                if (count > 0 && (C & 1) == 0 && ((uintptr_t)org & 3) == 0) {
                    c = tc_avgpool_s16_pairs_m0(p, org, fy1 - fy0, fx1 - fx0, count, sh, out);
                    out += c;
                }
#endif
                for (; c < C; c++) {
                    int32_t s = 0;
                    for (y = 0; y < fy1 - fy0; y++) {
                        const int16_t *xp = org + y * W * C + c;
                        for (x = 0; x < fx1 - fx0; x++) {
                            s += *xp;
                            xp += C;
                        }
                    }
                    /* count >= 1: the compiler rejects windows entirely in the padding */
                    *out++ = (int16_t)tc_clamp(count ? tc_avg_round(s, count, sh) : 0, p->act_min,
                                               p->act_max);
                }
            }
        }
    }
}

void tc_maxpool_s16(const tc_pool_params_t *p, const int16_t *in, int16_t *out)
{
    const int32_t H = p->in_h, W = p->in_w, C = p->channels;
    int32_t n, oy, ox, c, y, x;
    for (n = 0; n < p->batches; n++) {
        const int16_t *img = in + n * H * W * C;
        for (oy = 0; oy < p->out_h; oy++) {
            const int32_t iy0 = oy * p->stride_h - p->pad_h;
            int32_t fy0, fy1;
            tc_pool_range(iy0, p->f_h, H, &fy0, &fy1);
            for (ox = 0; ox < p->out_w; ox++) {
                const int32_t ix0 = ox * p->stride_w - p->pad_w;
                int32_t fx0, fx1;
                const int16_t *org;
                tc_pool_range(ix0, p->f_w, W, &fx0, &fx1);
                org = img + ((iy0 + fy0) * W + ix0 + fx0) * C;
                for (c = 0; c < C; c++) {
                    int32_t m = -32768;
                    for (y = 0; y < fy1 - fy0; y++) {
                        const int16_t *xp = org + y * W * C + c;
                        for (x = 0; x < fx1 - fx0; x++) {
                            m = tc_max32(m, *xp);
                            xp += C;
                        }
                    }
                    *out++ = (int16_t)tc_clamp(m, p->act_min, p->act_max);
                }
            }
        }
    }
}
