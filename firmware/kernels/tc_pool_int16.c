/* tinycompile runtime: AVERAGE_POOL_2D and MAX_POOL_2D, 16x8 (tc_avgpool_s16q, tc_maxpool_s16q;
 * parameters tc_pool_params_t of tc_pool.h).
 *
 * TFLM's int16 AveragePool / MaxPool, as tc_avgpool_s16 / tc_maxpool_s16 (tc_pool.c): the window
 * clipped to the image, an int32 sum rounded half away from zero by the count of taps inside
 * (a shift for a power of two), a max from -32768; the fused activation's clamp. Per output
 * pixel the clipped window is computed once, then channels are walked with the taps inner:
 *   - Cortex-M4/M7 (TC_DSP): four channels at a time from two words per tap; max with
 *     SSUB16 + SEL on int16 pairs (the clamp the same way), sums with SMLABB / SMLATB;
 *   - the other channels, the host and Cortex-M3: one channel at a time by pointer steps;
 *   - ARMv6-M: tc_pool.c's tc_avgpool_s16 / tc_maxpool_s16.
 */
#include <stdint.h>
#include <string.h>

#include "tc_kernel_util.h"
#include "tc_pool.h"
#include "tc_s16.h"

#if !defined(__ARM_ARCH_6M__)
/* Clip a window starting at origin (size k) to [0, size): taps [*lo, *hi). */
static void tc_pool16_range(int32_t origin, int32_t k, int32_t size, int32_t *lo, int32_t *hi)
{
    const int32_t a = origin < 0 ? -origin : 0;
    const int32_t b = size - origin < k ? size - origin : k;
    *lo = a;
    *hi = b > a ? b : a;
}

/* tc_pool.c's rounding: (acc +- count / 2) / count, truncating; a shift for count = 1 << sh. */
TC_INLINE int32_t tc_pool16_avg(int32_t acc, int32_t count, int32_t sh)
{
    if (sh >= 0) {
        return acc > 0 ? (acc + count / 2) >> sh : -((count / 2 - acc) >> sh);
    }
    return acc > 0 ? (acc + count / 2) / count : (acc - count / 2) / count;
}

static int32_t tc_pool16_pow2(int32_t count)
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

#if TC_DSP
/* Lane-wise max / min of two int16 pairs. */
TC_INLINE uint32_t tc_max16x2(uint32_t a, uint32_t b)
{
    uint32_t r;
    __asm__("ssub16 %0, %1, %2\n\tsel %0, %1, %2" : "=&r"(r) : "r"(a), "r"(b));
    return r;
}

TC_INLINE uint32_t tc_min16x2(uint32_t a, uint32_t b)
{
    uint32_t r;
    __asm__("ssub16 %0, %1, %2\n\tsel %0, %2, %1" : "=&r"(r) : "r"(a), "r"(b));
    return r;
}
#endif

/* The walk both pools share: per output pixel, the clipped window's first tap org, its rows
 * nky x nkx taps, the count; body(org, nky, nkx, count, out) writes the C outputs. */
#define TC_POOL16_WALK(BODY)                                                                    \
    const int32_t H = p->in_h, W = p->in_w, C = p->channels;                                    \
    int32_t n, oy, ox;                                                                          \
    for (n = 0; n < p->batches; n++) {                                                          \
        const int16_t *img = in + n * H * W * C;                                                \
        for (oy = 0; oy < p->out_h; oy++) {                                                     \
            const int32_t iy0 = oy * p->stride_h - p->pad_h;                                    \
            int32_t fy0, fy1;                                                                   \
            tc_pool16_range(iy0, p->f_h, H, &fy0, &fy1);                                        \
            for (ox = 0; ox < p->out_w; ox++) {                                                 \
                const int32_t ix0 = ox * p->stride_w - p->pad_w;                                \
                int32_t fx0, fx1;                                                               \
                const int16_t *org;                                                             \
                tc_pool16_range(ix0, p->f_w, W, &fx0, &fx1);                                    \
                org = img + ((iy0 + fy0) * W + ix0 + fx0) * C;                                  \
                BODY(org, fy1 - fy0, fx1 - fx0, W * C, out);                                    \
                out += C;                                                                       \
            }                                                                                   \
        }                                                                                       \
    }

static void tc_max16_pixel(const tc_pool_params_t *p, const int16_t *org, int32_t nky,
                           int32_t nkx, int32_t rs, int16_t *o)
{
    const int32_t C = p->channels, lo = p->act_min, hi = p->act_max;
    int32_t c = 0, ky, kx;
#if TC_DSP
    const uint32_t lo2 = ((uint32_t)lo & 0xFFFFu) * 0x10001u;
    const uint32_t hi2 = ((uint32_t)hi & 0xFFFFu) * 0x10001u;
    for (; c + 4 <= C; c += 4) {
        uint32_t m0 = 0x80008000u, m1 = 0x80008000u;
        const int16_t *r = org + c;
        for (ky = 0; ky < nky; ky++, r += rs) {
            const int16_t *xp = r;
            for (kx = 0; kx < nkx; kx++, xp += C) {
                m0 = tc_max16x2(tc_ld32((const int8_t *)xp), m0);
                m1 = tc_max16x2(tc_ld32((const int8_t *)(xp + 2)), m1);
            }
        }
        m0 = tc_min16x2(tc_max16x2(m0, lo2), hi2);
        m1 = tc_min16x2(tc_max16x2(m1, lo2), hi2);
        memcpy(o + c, &m0, 4);
        memcpy(o + c + 2, &m1, 4);
    }
#endif
    for (; c < C; c++) {
        int32_t m = -32768;
        const int16_t *r = org + c;
        for (ky = 0; ky < nky; ky++, r += rs) {
            const int16_t *xp = r;
            for (kx = 0; kx < nkx; kx++, xp += C) {
                const int32_t v = *xp;
                m = v > m ? v : m;
            }
        }
        o[c] = (int16_t)tc_clamp(m, lo, hi);
    }
}

static void tc_avg16_pixel(const tc_pool_params_t *p, const int16_t *org, int32_t nky,
                           int32_t nkx, int32_t rs, int16_t *o)
{
    const int32_t C = p->channels, lo = p->act_min, hi = p->act_max;
    const int32_t count = nky * nkx, sh = tc_pool16_pow2(count);
    int32_t c = 0, ky, kx;
#if TC_DSP
    for (; c + 4 <= C; c += 4) {
        int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        const int16_t *r = org + c;
        for (ky = 0; ky < nky; ky++, r += rs) {
            const int16_t *xp = r;
            for (kx = 0; kx < nkx; kx++, xp += C) {
                const uint32_t v0 = tc_ld32((const int8_t *)xp);
                const uint32_t v1 = tc_ld32((const int8_t *)(xp + 2));
                s0 = __smlabb(v0, 1, s0);
                s1 = __smlatb(v0, 1, s1);
                s2 = __smlabb(v1, 1, s2);
                s3 = __smlatb(v1, 1, s3);
            }
        }
        o[c] = (int16_t)tc_clamp(tc_pool16_avg(s0, count, sh), lo, hi);
        o[c + 1] = (int16_t)tc_clamp(tc_pool16_avg(s1, count, sh), lo, hi);
        o[c + 2] = (int16_t)tc_clamp(tc_pool16_avg(s2, count, sh), lo, hi);
        o[c + 3] = (int16_t)tc_clamp(tc_pool16_avg(s3, count, sh), lo, hi);
    }
#endif
    for (; c < C; c++) {
        int32_t s = 0;
        const int16_t *r = org + c;
        for (ky = 0; ky < nky; ky++, r += rs) {
            const int16_t *xp = r;
            for (kx = 0; kx < nkx; kx++, xp += C) {
                s += *xp;
            }
        }
        /* count >= 1: the compiler rejects windows entirely in the padding */
        o[c] = (int16_t)tc_clamp(tc_pool16_avg(s, count, sh), lo, hi);
    }
}

#define TC_MAX16_BODY(org, nky, nkx, rs, o) tc_max16_pixel(p, org, nky, nkx, rs, o)
#define TC_AVG16_BODY(org, nky, nkx, rs, o) tc_avg16_pixel(p, org, nky, nkx, rs, o)
#endif /* !__ARM_ARCH_6M__ */

/* ARMv6-M keeps tc_pool.c's loops (channel outermost): measured a little faster there. */
void tc_maxpool_s16q(const tc_pool_params_t *p, const int16_t *in, int16_t *out)
{
#if defined(__ARM_ARCH_6M__)
    tc_maxpool_s16(p, in, out);
#else
    TC_POOL16_WALK(TC_MAX16_BODY)
#endif
}

void tc_avgpool_s16q(const tc_pool_params_t *p, const int16_t *in, int16_t *out)
{
#if defined(__ARM_ARCH_6M__)
    tc_avgpool_s16(p, in, out);
#else
    TC_POOL16_WALK(TC_AVG16_BODY)
#endif
}
