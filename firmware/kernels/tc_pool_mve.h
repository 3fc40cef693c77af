/* tinycompile runtime, internal: the Helium (MVE, Cortex-M55: TC_MVE) int8 pooling layers of
 * tc_pool.c (tc_pool_groups_mve), static; on other cores this header declares nothing. Same
 * windows (clipped to the image) and results as the portable loops, byte for byte. The
 * channels go in groups, each group walking every output pixel: 4 vectors, then 1, then the
 * last one under a VCTP predicate (one walk function each, so each keeps its own registers):
 *   - MAX_POOL_2D: 16 channels per vector, VMAX.S8 over the window's taps from -128 (a full
 *     2x2 window unrolled), then the activation clamp (VMAX/VMIN) and one store;
 *   - AVERAGE_POOL_2D (windows of at most 256 taps, so the sums fit int16 lanes: |sum| <=
 *     128 * 256; larger ones keep the portable loop): VLDRB.S16 (8 channels widened) and
 *     VADD.I16 per tap, then TFLM's rounding division exactly, 8 channels at a time:
 *     (sum + d/2) / d for sum > 0 and (sum - d/2) / d truncated otherwise are both
 *     floor((sum + k) / d) with k = d/2 (sum >= 0) or d - 1 - d/2 (sum < 0); with
 *     N = sum + k + 128 d in [0, 255 d + d/2] (below 2^16), floor(N / d) is the high word of
 *     N * M, M = ceil(2^32 / d) = (2^32 - 1) / d + 1 (d >= 2): N M / 2^32 = N / d + N e /
 *     (d 2^32) with e = M d - 2^32 < d and N e < 2^24, so the fraction (N mod d) / d gains
 *     less than 1 / d and the floor is exact (VMULH.U32 on the widened halves; d = 1: the sum
 *     itself); minus 128, clamped. */
#ifndef TC_POOL_MVE_H
#define TC_POOL_MVE_H

#include "tc_kernel_util.h"
#include "tc_pool.h"

#if TC_MVE

/* ---------------------------------------------------------------------------- max pool */

/* Vector v of a block at xp: 16 channels, the lanes of pr only when it is the block's last
 * and tail (the others read as zeros). */
TC_INLINE int8x16_t tc_mp_ld(const int8_t *xp, const int v, const int nv, mve_pred16_t pr,
                             const int tail)
{
    return (tail && v == nv - 1) ? vldrbq_z_s8(xp + 16 * v, pr) : vldrbq_s8(xp + 16 * v);
}

/* The max of vector v over a full 2x2 window at a (taps C bytes apart, rows rs). */
TC_INLINE int8x16_t tc_mp_2x2(const int8_t *a, int32_t C, int32_t rs, const int v, const int nv,
                              mve_pred16_t pr, const int tail)
{
    return vmaxq_s8(vmaxq_s8(tc_mp_ld(a, v, nv, pr, tail), tc_mp_ld(a + C, v, nv, pr, tail)),
                    vmaxq_s8(tc_mp_ld(a + rs, v, nv, pr, tail),
                             tc_mp_ld(a + rs + C, v, nv, pr, tail)));
}

/* Vector v's result, clamped to [lo, hi], stored (the lanes of pr when last and tail). */
TC_INLINE void tc_mp_st(int8_t *out, int8x16_t m, int8x16_t lo, int8x16_t hi, const int v,
                        const int nv, mve_pred16_t pr, const int tail)
{
    m = vminq_s8(vmaxq_s8(m, lo), hi);
    if (tail && v == nv - 1) {
        vstrbq_p_s8(out + 16 * v, m, pr);
    } else {
        vstrbq_s8(out + 16 * v, m);
    }
}

/* nv (1 to 4) vectors of channels from org: the max over rows x cols taps (C bytes apart,
 * rows rs), clamped to [lo, hi], stored at out; the last vector's lanes limited by pr when
 * tail. A full 2x2 window is unrolled. */
TC_INLINE void tc_maxpool_block_mve(const int8_t *org, int32_t rows, int32_t cols, int32_t C,
                                    int32_t rs, int8x16_t lo, int8x16_t hi, int8_t *out,
                                    const int nv, mve_pred16_t pr, const int tail)
{
    int8x16_t m0 = vdupq_n_s8(-128), m1 = m0, m2 = m0, m3 = m0;
    const int8_t *row = org;
    int32_t y, x;
    if (rows == 2 && cols == 2) {
        m0 = tc_mp_2x2(org, C, rs, 0, nv, pr, tail);
        if (nv > 1) {
            m1 = tc_mp_2x2(org, C, rs, 1, nv, pr, tail);
        }
        if (nv > 2) {
            m2 = tc_mp_2x2(org, C, rs, 2, nv, pr, tail);
        }
        if (nv > 3) {
            m3 = tc_mp_2x2(org, C, rs, 3, nv, pr, tail);
        }
        rows = 0;
    }
    for (y = 0; y < rows; y++, row += rs) {
        const int8_t *xp = row;
        for (x = 0; x < cols; x++, xp += C) {
            m0 = vmaxq_s8(m0, tc_mp_ld(xp, 0, nv, pr, tail));
            if (nv > 1) {
                m1 = vmaxq_s8(m1, tc_mp_ld(xp, 1, nv, pr, tail));
            }
            if (nv > 2) {
                m2 = vmaxq_s8(m2, tc_mp_ld(xp, 2, nv, pr, tail));
            }
            if (nv > 3) {
                m3 = vmaxq_s8(m3, tc_mp_ld(xp, 3, nv, pr, tail));
            }
        }
    }
    tc_mp_st(out, m0, lo, hi, 0, nv, pr, tail);
    if (nv > 1) {
        tc_mp_st(out, m1, lo, hi, 1, nv, pr, tail);
    }
    if (nv > 2) {
        tc_mp_st(out, m2, lo, hi, 2, nv, pr, tail);
    }
    if (nv > 3) {
        tc_mp_st(out, m3, lo, hi, 3, nv, pr, tail);
    }
}

/* ------------------------------------------------------------------------ average pool */

/* The rounding division's constants for a window of d taps (tc_pool_mve.h's header). */
typedef struct {
    int16x8_t kp, kn;  /* k + 128 d for sums >= 0 and < 0 */
    uint32_t m;        /* ceil(2^32 / d); 0 when d == 1 */
    int16x8_t lo, hi;  /* the activation clamp */
} tc_avg_mve_t;

/* 8 channels' averages from their int16 sums s, stored at out (the lanes of pr when tail). */
TC_INLINE void tc_avg_fin_mve(const tc_avg_mve_t *k, int16x8_t s, int8_t *out, mve_pred16_t pr,
                              const int tail)
{
    const mve_pred16_t nonneg = vcmpgeq_n_s16(s, 0);
    uint16x8_t n = vreinterpretq_u16_s16(vaddq_s16(s, vpselq_s16(k->kp, k->kn, nonneg)));
    int16x8_t q;
    if (k->m) {
        const uint32x4_t e = vmulhq_u32(vmovlbq_u16(n), vdupq_n_u32(k->m));
        const uint32x4_t o = vmulhq_u32(vmovltq_u16(n), vdupq_n_u32(k->m));
        n = vmovntq_u32(vmovnbq_u32(n, e), o);
    }
    q = vsubq_s16(vreinterpretq_s16_u16(n), vdupq_n_s16(128));
    q = vminq_s16(vmaxq_s16(q, k->lo), k->hi);
    if (tail) {
        vstrbq_p_s16(out, q, pr);
    } else {
        vstrbq_s16(out, q);
    }
}

/* nv (1 to 4) vectors of 8 channels from org: the sums over rows x cols taps, then the
 * averages; the last vector's lanes limited by pr when tail. */
TC_INLINE void tc_avgpool_block_mve(const tc_avg_mve_t *k, const int8_t *org, int32_t rows,
                                    int32_t cols, int32_t C, int32_t rs, int8_t *out,
                                    const int nv, mve_pred16_t pr, const int tail)
{
    int16x8_t s0 = vdupq_n_s16(0), s1 = s0, s2 = s0, s3 = s0;
    const int8_t *row = org;
    int32_t y, x;
#define TC_AP_LD(v)                                                                             \
    ((tail && (v) == nv - 1) ? vldrbq_z_s16(xp + 8 * (v), pr) : vldrbq_s16(xp + 8 * (v)))
    for (y = 0; y < rows; y++, row += rs) {
        const int8_t *xp = row;
        for (x = 0; x < cols; x++, xp += C) {
            s0 = vaddq_s16(s0, TC_AP_LD(0));
            if (nv > 1) {
                s1 = vaddq_s16(s1, TC_AP_LD(1));
            }
            if (nv > 2) {
                s2 = vaddq_s16(s2, TC_AP_LD(2));
            }
            if (nv > 3) {
                s3 = vaddq_s16(s3, TC_AP_LD(3));
            }
        }
    }
#undef TC_AP_LD
    tc_avg_fin_mve(k, s0, out, pr, tail && nv == 1);
    if (nv > 1) {
        tc_avg_fin_mve(k, s1, out + 8, pr, tail && nv == 2);
    }
    if (nv > 2) {
        tc_avg_fin_mve(k, s2, out + 16, pr, tail && nv == 3);
    }
    if (nv > 3) {
        tc_avg_fin_mve(k, s3, out + 24, pr, tail && nv == 4);
    }
}

/* The rounding constants of a window of d <= 256 taps into *k (lo, hi set by the caller). */
TC_INLINE void tc_avg_mve_consts(tc_avg_mve_t *k, int32_t d)
{
    const int32_t h = d >> 1;
    k->kp = vdupq_n_s16((int16_t)(128 * d + h));
    k->kn = vdupq_n_s16((int16_t)(128 * d + d - 1 - h));
    k->m = d > 1 ? 0xFFFFFFFFu / (uint32_t)d + 1u : 0u;
}

/* ------------------------------------------------------------------------------ layers */

/* One channel group of a whole int8 pooling layer (max: MAX_POOL_2D, else AVERAGE_POOL_2D with
 * f_h * f_w <= 256): nv vectors of channels from in / out (already offset to the group; pixels
 * C bytes apart), the last one's lanes limited by pr when tail. The params are read once (the
 * stores could alias them); each window is clipped to the image as tc_pool.c's tc_pool_range
 * does; the rounding constants are recomputed only when the tap count changes. */
TC_INLINE void tc_pool_walk_mve(const tc_pool_params_t *p, const int8_t *in, int8_t *out,
                                mve_pred16_t pr, const int max, const int nv, const int tail)
{
    const int32_t H = p->in_h, W = p->in_w, C = p->channels, OH = p->out_h, OW = p->out_w;
    const int32_t fh = p->f_h, fw = p->f_w, sh = p->stride_h, sw = p->stride_w;
    const int32_t ph = p->pad_h, pw = p->pad_w, rs = W * C, nb = p->batches;
    const int8x16_t lo8 = vdupq_n_s8((int8_t)p->act_min), hi8 = vdupq_n_s8((int8_t)p->act_max);
    tc_avg_mve_t k;
    int32_t n, oy, ox, d = -1;
    k.lo = vdupq_n_s16((int16_t)p->act_min);
    k.hi = vdupq_n_s16((int16_t)p->act_max);
    k.kp = k.kn = k.lo;
    k.m = 0;
    for (n = 0; n < nb; n++) {
        const int8_t *img = in + n * H * rs;
        for (oy = 0; oy < OH; oy++) {
            const int32_t iy0 = oy * sh - ph;
            const int32_t y0 = iy0 < 0 ? 0 : iy0, y1 = iy0 + fh < H ? iy0 + fh : H;
            const int32_t rows = y1 > y0 ? y1 - y0 : 0;
            const int8_t *band = img + y0 * rs;
            for (ox = 0; ox < OW; ox++, out += C) {
                const int32_t ix0 = ox * sw - pw;
                const int32_t x0 = ix0 < 0 ? 0 : ix0, x1 = ix0 + fw < W ? ix0 + fw : W;
                const int32_t cols = x1 > x0 ? x1 - x0 : 0;
                if (max) {
                    tc_maxpool_block_mve(band + x0 * C, rows, cols, C, rs, lo8, hi8, out, nv, pr,
                                         tail);
                    continue;
                }
                if (rows * cols != d) { /* >= 1: the compiler rejects empty windows */
                    d = rows * cols;
                    tc_avg_mve_consts(&k, d);
                }
                tc_avgpool_block_mve(&k, band + x0 * C, rows, cols, C, rs, out, nv, pr, tail);
            }
        }
    }
}

/* The walks, one function each (each its own registers): groups of 4 whole vectors, of one
 * whole vector, and the last vector predicated (vectors of 16 channels for max pooling, 8 for
 * average pooling). */
#define TC_POOL_MVE_GROUP(name, max, nv, tail)                                                  \
    __attribute__((noinline)) static void name(const tc_pool_params_t *p, const int8_t *in,    \
                                               int8_t *out, mve_pred16_t pr)                   \
    {                                                                                           \
        tc_pool_walk_mve(p, in, out, pr, max, nv, tail);                                        \
    }
TC_POOL_MVE_GROUP(tc_maxpool_g4_mve, 1, 4, 0)
TC_POOL_MVE_GROUP(tc_maxpool_g1_mve, 1, 1, 0)
TC_POOL_MVE_GROUP(tc_maxpool_t1_mve, 1, 1, 1)
TC_POOL_MVE_GROUP(tc_avgpool_g4_mve, 0, 4, 0)
TC_POOL_MVE_GROUP(tc_avgpool_g1_mve, 0, 1, 0)
TC_POOL_MVE_GROUP(tc_avgpool_t1_mve, 0, 1, 1)
#undef TC_POOL_MVE_GROUP

/* A whole int8 pooling layer on Helium: the channels in groups of 4 vectors (v lanes each:
 * 16 for max, 8 for average), each group walking every output pixel, then one vector at a
 * time, the last one predicated when C is not a multiple of v. The walks are passed in, so a
 * firmware with one pooling kind links only its three. */
typedef void (*tc_pool_walk_fn)(const tc_pool_params_t *p, const int8_t *in, int8_t *out,
                                mve_pred16_t pr);

TC_INLINE void tc_pool_groups_mve(const tc_pool_params_t *p, const int8_t *in, int8_t *out,
                                  int32_t v, tc_pool_walk_fn g4, tc_pool_walk_fn g1,
                                  tc_pool_walk_fn t1)
{
    const int32_t C = p->channels;
    int32_t c = 0;
    for (; c + 4 * v <= C; c += 4 * v) {
        g4(p, in + c, out + c, 0);
    }
    for (; c + v <= C; c += v) {
        g1(p, in + c, out + c, 0);
    }
    if (c < C) {
        const uint32_t left = (uint32_t)(C - c);
        t1(p, in + c, out + c, v == 16 ? vctp8q(left) : vctp16q(left));
    }
}

#endif /* TC_MVE */

#endif /* TC_POOL_MVE_H */
