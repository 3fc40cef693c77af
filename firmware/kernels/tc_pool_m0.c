/* tinycompile runtime: AVERAGE_POOL_2D and MAX_POOL_2D on ARMv6-M (Cortex-M0/M0+), int8: the
 * same results as tc_pool.c's portable loops (TFLM's reference_integer_ops::AveragePool /
 * MaxPool), called by them on ARMv6-M builds for the whole layer, for windows of up to 64 taps
 * (TC_POOL_M0_MAXTAPS in tc_m0.h; larger ones keep the portable loops, whose long inner loops
 * cost little per tap).
 *
 * Taps are pointers (the full window's byte offsets computed once) read at a channel index
 * shared by all of them: one LDRSB per tap and channel, no per-tap loop or branch. A row of
 * full windows runs as one run of pixels (the pointers moving on by the stride): MAX_POOL_2D in
 * one pass of five taps, or two (five, then four and the output so far; missing taps repeat
 * one: harmless for a maximum); AVERAGE_POOL_2D's 2x2 and 3x3 windows in one pass summing all
 * taps. Windows clipped by the image (and other sizes) go pixel by pixel, in passes of five
 * taps (average: int32 sums of 32 channels on the stack, taps outside the image reading a zero
 * block). Averages are rounded without a division (tc_avg_recip: TFLM's
 * (sum +- count / 2) / count as one multiply by a reciprocal, exact, see there); the fused
 * activation's clamp is applied in the last pass, only where it clamps.
 */
#include <stdint.h>

#include "tc_kernel_util.h"
#include "tc_m0.h"
#include "tc_pool.h"
#include "tc_qmath.h"

#if defined(__ARM_ARCH_6M__)


#define TC_POOL_M0_TAPS 5   /* taps per pass */
#define TC_POOL_M0_CHUNK 32 /* channels per pass of AVERAGE_POOL_2D (its int32 sums) */

static const int8_t tc_pool_m0_zeros[TC_POOL_M0_CHUNK];

/* Clip a window starting at origin (size k) to [0, size): taps [*lo, *hi). */
static void tc_pool_m0_range(int32_t origin, int32_t k, int32_t size, int32_t *lo, int32_t *hi)
{
    int32_t a = origin < 0 ? -origin : 0;
    int32_t b = size - origin < k ? size - origin : k;
    *lo = a;
    *hi = b > a ? b : a;
}

/* One output pixel's window: the byte offset of its origin (which may lie outside the image)
 * from the image, and the taps inside the image (rows [y0, y1), columns [x0, x1) of the
 * window). */
typedef struct {
    int32_t base, y0, y1, x0, x1, full;
} tc_pool_m0_win;

static void tc_pool_m0_window(const tc_pool_params_t *p, int32_t oy, int32_t ox,
                              tc_pool_m0_win *w)
{
    const int32_t iy0 = oy * p->stride_h - p->pad_h, ix0 = ox * p->stride_w - p->pad_w;
    tc_pool_m0_range(iy0, p->f_h, p->in_h, &w->y0, &w->y1);
    tc_pool_m0_range(ix0, p->f_w, p->in_w, &w->x0, &w->x1);
    w->base = (iy0 * p->in_w + ix0) * p->channels;
    w->full = w->y1 - w->y0 == p->f_h && w->x1 - w->x0 == p->f_w;
}

/* Pointers to the window's next n taps (row-major in the full window, byte offsets off[k]; the
 * cursor *k, *y, *x at the first of them moves past them) from the channel c0, a tap outside
 * the image replaced by sub (max: any tap inside; average: a block of zeros, read from c0 on). */
static void tc_pool_m0_ptrs(const tc_pool_params_t *p, const int8_t *img, const int32_t *off,
                            const tc_pool_m0_win *w, int32_t *k, int32_t *y, int32_t *x,
                            int32_t n, int32_t c0, const int8_t *sub, const int8_t **t)
{
    const int8_t *const b = img + w->base + c0;
    int32_t j;
    if (w->full) {
        for (j = 0; j < n; j++) {
            t[j] = b + off[*k + j];
        }
        *k += n;
        return;
    }
    for (j = 0; j < n; j++, ++*k) {
        const int in = *y >= w->y0 && *y < w->y1 && *x >= w->x0 && *x < w->x1;
        t[j] = in ? b + off[*k] : sub;
        if (++*x == p->f_w) {
            *x = 0;
            ++*y;
        }
    }
}

/* Output columns [*a, *b) whose windows lie inside the image's width. */
static void tc_pool_m0_inner(const tc_pool_params_t *p, int32_t *a, int32_t *b)
{
    const int32_t s = p->stride_w, pad = p->pad_w, last = p->in_w - p->f_w + pad;
    int32_t lo = pad > 0 ? (pad + s - 1) / s : 0, hi = last < 0 ? 0 : last / s + 1;
    hi = hi > p->out_w ? p->out_w : hi;
    *a = lo < hi ? lo : hi;
    *b = hi;
}

/* The byte offsets of the full window's taps from its origin (f_h * f_w <= 64). */
static void tc_pool_m0_offsets(const tc_pool_params_t *p, int32_t *off)
{
    int32_t y, x, k = 0;
    for (y = 0; y < p->f_h; y++) {
        for (x = 0; x < p->f_w; x++) {
            off[k++] = (y * p->in_w + x) * p->channels;
        }
    }
}

/* ------------------------------------------------------------------------------------ max */

/* npix pixels (tap pointers moving on by step, outputs by n): out[i] = max over the five taps
 * (and out[i] itself when acc), clamped to [lo, hi] when clamp, for i < n. */
TC_INLINE void tc_max5_m0(const int8_t *const *t, int32_t npix, int32_t step, int8_t *out,
                          int32_t n, int32_t lo, int32_t hi, const int acc, const int clamp)
{
    const int8_t *a = t[0], *b = t[1], *c = t[2], *d = t[3], *e = t[4];
    for (; npix > 0; --npix, a += step, b += step, c += step, d += step, e += step, out += n) {
        int32_t i;
        for (i = 0; i < n; i++) {
            int32_t m = a[i], v;
            v = b[i];
            m = v > m ? v : m;
            v = c[i];
            m = v > m ? v : m;
            v = d[i];
            m = v > m ? v : m;
            v = e[i];
            m = v > m ? v : m;
            if (acc) {
                v = out[i];
                m = v > m ? v : m;
            }
            if (clamp) {
                m = m < lo ? lo : m;
                m = m > hi ? hi : m;
            }
            out[i] = (int8_t)m;
        }
    }
}

/* The first pass (five taps) and the later ones (four taps and the output so far). */
static void tc_max5_m0_pass(const int8_t *const *t, int32_t npix, int32_t step, int8_t *out,
                            int32_t n, int32_t lo, int32_t hi, int acc, int clamp)
{
    if (acc) {
        if (clamp) {
            tc_max5_m0(t, npix, step, out, n, lo, hi, 1, 1);
        } else {
            tc_max5_m0(t, npix, step, out, n, lo, hi, 1, 0);
        }
    } else if (clamp) {
        tc_max5_m0(t, npix, step, out, n, lo, hi, 0, 1);
    } else {
        tc_max5_m0(t, npix, step, out, n, lo, hi, 0, 0);
    }
}

static void tc_maxpool_m0_px(const tc_pool_params_t *p, const int8_t *img, const int32_t *off,
                             int32_t oy, int32_t ox, int32_t nt, int32_t lo, int32_t hi,
                             int clamp, int8_t *out);

void tc_maxpool_s8_m0(const tc_pool_params_t *p, const int8_t *in, int8_t *out)
{
    const int32_t C = p->channels, lo = p->act_min, hi = p->act_max, nt = p->f_h * p->f_w;
    const int clamp = lo > -128 || hi < 127;
    int32_t off[TC_POOL_M0_MAXTAPS], nb, oy, ox;
    tc_pool_m0_offsets(p, off);
    for (nb = 0; nb < p->batches; nb++) {
        const int8_t *img = in + nb * p->in_h * p->in_w * C;
        for (oy = 0; oy < p->out_h; oy++) {
            const int32_t iy0 = oy * p->stride_h - p->pad_h;
            if (iy0 >= 0 && iy0 + p->f_h <= p->in_h && nt <= 2 * TC_POOL_M0_TAPS - 1) {
                /* a row of full windows: the interior columns without the window walk */
                int32_t oxa, oxb;
                tc_pool_m0_inner(p, &oxa, &oxb);
                if (oxb > oxa) { /* one or two passes over the whole run of pixels */
                    const int8_t *org = img + (iy0 * p->in_w + oxa * p->stride_w - p->pad_w) * C;
                    const int8_t *t[TC_POOL_M0_TAPS];
                    int32_t j;
                    for (j = 0; j < TC_POOL_M0_TAPS; j++) {
                        t[j] = org + off[j < nt ? j : 0];
                    }
                    tc_max5_m0_pass(t, oxb - oxa, p->stride_w * C, out + oxa * C, C, lo, hi, 0,
                                    clamp && nt <= TC_POOL_M0_TAPS);
                    if (nt > TC_POOL_M0_TAPS) {
                        for (j = 0; j < TC_POOL_M0_TAPS; j++) {
                            const int32_t k = TC_POOL_M0_TAPS + j;
                            t[j] = org + off[k < nt ? k : 0];
                        }
                        tc_max5_m0_pass(t, oxb - oxa, p->stride_w * C, out + oxa * C, C, lo, hi,
                                        1, clamp);
                    }
                }
                for (ox = 0; ox < p->out_w; ox++, out += C) {
                    if (ox == oxa && oxb > oxa) { /* done above */
                        out += (oxb - oxa - 1) * C;
                        ox = oxb - 1;
                        continue;
                    }
                    tc_maxpool_m0_px(p, img, off, oy, ox, nt, lo, hi, clamp, out);
                }
                continue;
            }
            for (ox = 0; ox < p->out_w; ox++, out += C) {
                tc_maxpool_m0_px(p, img, off, oy, ox, nt, lo, hi, clamp, out);
            }
        }
    }
}

/* One max-pool output pixel, any window: the general walk. */
static void tc_maxpool_m0_px(const tc_pool_params_t *p, const int8_t *img, const int32_t *off,
                             int32_t oy, int32_t ox, int32_t nt, int32_t lo, int32_t hi,
                             int clamp, int8_t *out)
{
    const int32_t C = p->channels;
    {
        {
            {
                tc_pool_m0_win w;
                const int8_t *t[TC_POOL_M0_TAPS], *any;
                int32_t done = 0, j, k, ck = 0, cy = 0, cx = 0;
                tc_pool_m0_window(p, oy, ox, &w);
                any = img + w.base + off[w.y0 * p->f_w + w.x0]; /* a tap inside the image */
                /* passes of five taps (the first) and four (later ones, with the output) */
                while (done < nt) {
                    k = done == 0 ? TC_POOL_M0_TAPS : TC_POOL_M0_TAPS - 1;
                    k = nt - done < k ? nt - done : k;
                    tc_pool_m0_ptrs(p, img, off, &w, &ck, &cy, &cx, k, 0, any, t);
                    for (j = k; j < TC_POOL_M0_TAPS; j++) {
                        t[j] = any; /* repeats change no maximum */
                    }
                    if (done == 0) {
                        tc_max5_m0_pass(t, 1, 0, out, C, lo, hi, 0, clamp && k == nt);
                    } else {
                        tc_max5_m0_pass(t, 1, 0, out, C, lo, hi, 1, clamp && done + k == nt);
                    }
                    done += k;
                }
            }
        }
    }
}

/* -------------------------------------------------------------------------------- average */

/* TFLM's rounded average of a sum s of count taps, (s +- count / 2) / count truncated, is
 * sign(s) * floor((|s| + h) / count) with h = count / 2. For 1 <= count <= 256 and
 * 0 <= n = |s| + h <= 128 * count + h (|s| <= 128 * count), floor(n / count) is
 * (n * m) >> 24 with m = ceil(2^24 / count), in uint32:
 *   m * count = 2^24 + e with 0 <= e < count; writing n = q * count + r (0 <= r < count),
 *   n * m / 2^24 = q + (r + n * e / 2^24) / count, and n * e < 128.5 * count^2 <= 128.5 * 2^16
 *   < 2^24, so r + n * e / 2^24 < r + 1 <= count: the floor is q;
 *   n * m <= 128.5 * count * (2^24 / count + 1) < 128.5 * 2^24 + 2^15 < 2^32: no overflow.
 * (tests/test_kernels_fast_mul.py checks every count and n.) */
TC_INLINE int32_t tc_avg_recip(int32_t s, int32_t h, uint32_t m)
{
    const int32_t sg = s >> 31;
    const uint32_t n = (uint32_t)((s ^ sg) - sg + h);
    const int32_t q = (int32_t)((n * m) >> 24);
    return (q ^ sg) - sg;
}

/* acc[i] (+)= the five taps for i < n; when last, out[i] = the clamped rounded average of
 * the sums instead. */
TC_INLINE void tc_sum5_m0(const int8_t *const *t, int32_t *acc, int8_t *out, int32_t n,
                          int32_t h, uint32_t m, int32_t lo, int32_t hi, const int first,
                          const int last)
{
    const int8_t *a = t[0], *b = t[1], *c = t[2], *d = t[3], *e = t[4];
    int32_t i;
    for (i = 0; i < n; i++) {
        int32_t s = a[i] + b[i] + c[i] + d[i] + e[i];
        if (!first) {
            s += acc[i];
        }
        if (last) {
            s = tc_avg_recip(s, h, m);
            s = s < lo ? lo : s;
            out[i] = (int8_t)(s > hi ? hi : s);
        } else {
            acc[i] = s;
        }
    }
}

static void tc_sum5_m0_pass(const int8_t *const *t, int32_t *acc, int8_t *out, int32_t n,
                            int32_t h, uint32_t m, int32_t lo, int32_t hi, int first, int last)
{
    if (first && last) {
        tc_sum5_m0(t, acc, out, n, h, m, lo, hi, 1, 1);
    } else if (first) {
        tc_sum5_m0(t, acc, out, n, h, m, lo, hi, 1, 0);
    } else if (last) {
        tc_sum5_m0(t, acc, out, n, h, m, lo, hi, 0, 1);
    } else {
        tc_sum5_m0(t, acc, out, n, h, m, lo, hi, 0, 0);
    }
}

/* npix full windows of nk taps (pointers t moving on by step, outputs by n): out[i] = the
 * clamped rounded average for i < n (h = nk / 2, m the reciprocal of nk). */
TC_INLINE void tc_sum_m0(const int8_t *const *t, int32_t npix, int32_t step, int8_t *out,
                         int32_t n, int32_t h, uint32_t m, int32_t lo, int32_t hi, const int nk)
{
    const int8_t *a = t[0], *b = t[1], *c = t[2], *d = t[3], *e = t[nk > 4 ? 4 : 0];
    const int8_t *f = t[nk > 5 ? 5 : 0], *g = t[nk > 6 ? 6 : 0], *k = t[nk > 7 ? 7 : 0];
    const int8_t *l = t[nk > 8 ? 8 : 0];
    for (; npix > 0; --npix, out += n) {
        int32_t i;
        for (i = 0; i < n; i++) {
            int32_t s = a[i] + b[i] + c[i] + d[i];
            if (nk > 4) {
                s += e[i] + f[i] + g[i] + k[i] + l[i];
            }
            s = tc_avg_recip(s, h, m);
            s = s < lo ? lo : s;
            out[i] = (int8_t)(s > hi ? hi : s);
        }
        a += step, b += step, c += step, d += step;
        if (nk > 4) {
            e += step, f += step, g += step, k += step, l += step;
        }
    }
}

/* A run of npix full windows of 4 or 9 taps (offsets off) from org. */
static void tc_avg_run_m0(const int8_t *org, const int32_t *off, int32_t nt, int32_t npix,
                          int32_t step, int8_t *out, int32_t n, int32_t lo, int32_t hi)
{
    const int8_t *t[9] = {0};
    const uint32_t m = (((uint32_t)1 << 24) + (uint32_t)nt - 1) / (uint32_t)nt;
    int32_t j;
    for (j = 0; j < nt; j++) {
        t[j] = org + off[j];
    }
    if (nt == 9) {
        tc_sum_m0(t, npix, step, out, n, nt >> 1, m, lo, hi, 9);
    } else {
        tc_sum_m0(t, npix, step, out, n, nt >> 1, m, lo, hi, 4);
    }
}

void tc_avgpool_s8_m0(const tc_pool_params_t *p, const int8_t *in, int8_t *out)
{
    const int32_t C = p->channels, lo = p->act_min, hi = p->act_max, nt = p->f_h * p->f_w;
    int32_t off[TC_POOL_M0_MAXTAPS], acc[TC_POOL_M0_CHUNK], nb, oy, ox, last_count = 0;
    uint32_t m = 0;
    tc_pool_m0_offsets(p, off);
    for (nb = 0; nb < p->batches; nb++) {
        const int8_t *img = in + nb * p->in_h * p->in_w * C;
        for (oy = 0; oy < p->out_h; oy++) {
            const int32_t iy0 = oy * p->stride_h - p->pad_h;
            int32_t oxa = 0, oxb = 0;
            if (iy0 >= 0 && iy0 + p->f_h <= p->in_h && (nt == 4 || nt == 9)) {
                /* a row of full 2x2 or 3x3 windows: the interior columns in one run */
                tc_pool_m0_inner(p, &oxa, &oxb);
                if (oxb > oxa) {
                    tc_avg_run_m0(img + (iy0 * p->in_w + oxa * p->stride_w - p->pad_w) * C, off,
                                  nt, oxb - oxa, p->stride_w * C, out + oxa * C, C, lo, hi);
                }
            }
            for (ox = 0; ox < p->out_w; ox++, out += C) {
                tc_pool_m0_win w;
                int32_t count, c0, done, k;
                if (ox == oxa && oxb > oxa) { /* done above */
                    out += (oxb - oxa - 1) * C;
                    ox = oxb - 1;
                    continue;
                }
                tc_pool_m0_window(p, oy, ox, &w);
                count = (w.y1 - w.y0) * (w.x1 - w.x0);
                if (count != last_count) { /* the reciprocal, once per distinct count */
                    last_count = count;
                    m = (((uint32_t)1 << 24) + (uint32_t)count - 1) / (uint32_t)count;
                }
                for (c0 = 0; c0 < C; c0 += TC_POOL_M0_CHUNK) {
                    const int32_t n = C - c0 < TC_POOL_M0_CHUNK ? C - c0 : TC_POOL_M0_CHUNK;
                    int32_t ck = 0, cy = 0, cx = 0;
                    for (done = 0; done < nt; done += k) {
                        const int8_t *t[TC_POOL_M0_TAPS];
                        int32_t j;
                        k = nt - done < TC_POOL_M0_TAPS ? nt - done : TC_POOL_M0_TAPS;
                        tc_pool_m0_ptrs(p, img, off, &w, &ck, &cy, &cx, k, c0, tc_pool_m0_zeros, t);
                        for (j = k; j < TC_POOL_M0_TAPS; j++) {
                            t[j] = tc_pool_m0_zeros;
                        }
                        tc_sum5_m0_pass(t, acc, out + c0, n, count >> 1, m, lo, hi, done == 0,
                                        done + k == nt);
                    }
                }
            }
        }
    }
}

#else
/* Other cores never call these (tc_pool.c's portable loops run there): nothing to build. */
typedef int tc_pool_m0_unused;
#endif
