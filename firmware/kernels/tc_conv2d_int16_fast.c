/* tinycompile runtime: CONV_2D and FULLY_CONNECTED, 16x8 fast paths (tc_conv_s16q, tc_fc_s16q;
 * layout and arithmetic in tc_s16.h).
 *
 * TFLM's int16 ConvPerChannel / FullyConnected (int64 accumulation, MultiplyByQuantizedMultiplier
 * of an int64) for the layers the compiler proved exact in int32 (tinycompile/ops/s16_fast.py):
 * the sum bias + x . w in int32, the requantization with one SMMLA (tc_s16_util.h). Dilation 1,
 * no groups (the others keep tc_conv_s16, tc_conv2d_int16.c). Paths:
 *   - Cortex-M4/M7 (TC_DSP): two output pixels' windows are copied into a column of groups of
 *     four taps (pixel 0's four int16, then pixel 1's; each window row starts a group, zeros
 *     in the padding, the sums of both windows taken on the way), then tc_s16_dot2x2 per two
 *     channels (tc_s16_gemm.c: 16 instructions for 16 MACs). FULLY_CONNECTED reads its rows in
 *     place with tc_s16_dot1x4 (one row x a quad), the depth % 4 last taps in C;
 *   - ARMv6-M: one pixel's window copied as int32 taps, tc_s16_dot1x4_m0 per quad;
 *   - portable C (host, Cortex-M3, TC_PORTABLE builds, and windows of more than TC_S16_KMAX
 *     taps): the valid taps of each window read in place, weights through the layout.
 */
#include <stdint.h>
#include <string.h>

#include "tc_kernel_util.h"
#include "tc_s16.h"
#include "tc_s16_util.h"

#define TC_S16_KMAX 256 /* taps of a window (k_h * seg_p) the column buffers hold */

/* Weight of tap j (of the padded rows) of channel oc, ng groups per channel. */
TC_INLINE int32_t tc_s16_w(const uint8_t *wq, int32_t ng, int32_t oc, int32_t j)
{
    return (int32_t)wq[((oc >> 2) * ng + (j >> 2)) * 16 + (oc & 3) * 4 + TC_S16_POS(j & 3)] - 128;
}

/* Portable: every channel of one output pixel whose window starts at input (y0, x0). */
static void tc_s16q_pixel(const tc_s16q_params_t *p, const int16_t *img, int32_t y0, int32_t x0,
                          int16_t *o)
{
    const int32_t C = p->in_c, W = p->in_w, segp = p->seg_p, ng = p->k_h * segp / 4;
    const uint8_t *wq = (const uint8_t *)p->weights;
    int32_t ky0, ky1, kx0, kx1, oc, ky, t;
    tc_tap_range(y0, 1, p->k_h, p->in_h, &ky0, &ky1);
    tc_tap_range(x0, 1, p->k_w, W, &kx0, &kx1);
    for (oc = 0; oc < p->out_c; oc++) {
        const int32_t *rq = p->rq + 4 * oc;
        int32_t acc = rq[0];
        for (ky = ky0; ky < ky1; ky++) {
            const int16_t *row = img + ((y0 + ky) * W + x0) * C;
            for (t = kx0 * C; t < kx1 * C; t++) {
                acc += row[t] * tc_s16_w(wq, ng, oc, ky * segp + t);
            }
        }
        o[oc] = tc_s16_out(acc, rq, p->act_min, p->act_max);
    }
}

static void tc_conv_s16q_portable(const tc_s16q_params_t *p, const int16_t *in, int16_t *out)
{
    int32_t b, oy, ox;
    for (b = 0; b < p->batches; b++) {
        const int16_t *img = in + b * p->in_h * p->in_w * p->in_c;
        for (oy = 0; oy < p->out_h; oy++) {
            for (ox = 0; ox < p->out_w; ox++) {
                tc_s16q_pixel(p, img, oy * p->stride_h - p->pad_h, ox * p->stride_w - p->pad_w,
                              out);
                out += p->out_c;
            }
        }
    }
}

/* acc - 128 * sum(x), wrapping (the u = w + 128 correction). */
TC_INLINE int32_t tc_s16_start(int32_t bias, int32_t sx)
{
    return (int32_t)((uint32_t)bias - ((uint32_t)sx << 7));
}

/* Whether the window starting at input (y0, x0) is interior: every tap inside the image, and seg_p
 * values from each row's first tap inside the input (the fills may then copy whole groups: the
 * values past a row's k_w * in_c taps meet zero weights, u = 128, and enter the window's sum, so
 * they contribute nothing). */
TC_INLINE int tc_s16_inside(const tc_s16q_params_t *p, int32_t y0, int32_t x0)
{
    return y0 >= 0 && x0 >= 0 && y0 + p->k_h <= p->in_h && x0 + p->k_w <= p->in_w &&
           ((y0 + p->k_h - 1) * p->in_w + x0) * p->in_c + p->seg_p <= p->in_h * p->in_w * p->in_c;
}

#if TC_DSP
/* n taps from src into a column slot (groups of 16 bytes: slot 0's four taps, slot 1's), from
 * tap t on; returns their sum. Whole groups by words. */
static int32_t tc_s16_put2(int16_t *slot, int32_t t, const int16_t *src, int32_t n)
{
    int16_t *d = slot + (t >> 2) * 8 + (t & 3);
    int32_t r = 4 - (t & 3), s = 0;
    if (r == 4) {
        for (; n >= 4; n -= 4) {
            const uint32_t a = tc_ld32((const int8_t *)src), c = tc_ld32((const int8_t *)(src + 2));
            uint32_t *dw = (uint32_t *)(void *)d;
            dw[0] = a;
            dw[1] = c;
            s = __smlad(a, 0x00010001u, s);
            s = __smlad(c, 0x00010001u, s);
            src += 4;
            d += 8;
        }
    }
    for (; n > 0; n--) {
        s += *src;
        *d++ = *src++;
        if (--r == 0) {
            d += 4;
            r = 4;
        }
    }
    return s;
}

static void tc_s16_zero2(int16_t *slot, int32_t t, int32_t n)
{
    int16_t *d = slot + (t >> 2) * 8 + (t & 3);
    int32_t r = 4 - (t & 3);
    for (; n > 0; n--) {
        *d++ = 0;
        if (--r == 0) {
            d += 4;
            r = 4;
        }
    }
}

/* The window starting at input (y0, x0) into a column slot; returns its sum. */
static int32_t tc_s16_fill2(const tc_s16q_params_t *p, const int16_t *img, int32_t y0,
                            int32_t x0, int16_t *slot)
{
    const int32_t C = p->in_c, segp = p->seg_p;
    int32_t ky, kx0, kx1, s = 0;
    tc_tap_range(x0, 1, p->k_w, p->in_w, &kx0, &kx1);
    for (ky = 0; ky < p->k_h; ky++) {
        const int32_t y = y0 + ky, t0 = ky * segp;
        if (y < 0 || y >= p->in_h) {
            tc_s16_zero2(slot, t0, segp);
            continue;
        }
        tc_s16_zero2(slot, t0, kx0 * C);
        s += tc_s16_put2(slot, t0 + kx0 * C, img + (y * p->in_w + x0 + kx0) * C, (kx1 - kx0) * C);
        tc_s16_zero2(slot, t0 + kx1 * C, segp - kx1 * C);
    }
    return s;
}

/* An interior window (every tap inside the image, and seg_p values from each row's first tap
 * inside the input) into a column slot, whole groups by words; the values past a row's k_w * in_c
 * taps meet zero weights (u = 128) and enter the sum: they contribute nothing. */
static int32_t tc_s16_fill2_in(const int16_t *src, int32_t rs, int32_t kh, int32_t ngr,
                               int16_t *slot)
{
    uint32_t *d = (uint32_t *)(void *)slot;
    int32_t s = 0, ky, g;
    for (ky = 0; ky < kh; ky++, src += rs) {
        const int16_t *x = src;
        for (g = 0; g < ngr; g++, x += 4, d += 4) {
            const uint32_t a = tc_ld32((const int8_t *)x), c = tc_ld32((const int8_t *)(x + 2));
            d[0] = a;
            d[1] = c;
            s = __smlad(a, 0x00010001u, s);
            s = __smlad(c, 0x00010001u, s);
        }
    }
    return s;
}

static int32_t tc_s16_window2(const tc_s16q_params_t *p, const int16_t *img, int32_t y0,
                              int32_t x0, int16_t *slot)
{
    if (tc_s16_inside(p, y0, x0)) {
        return tc_s16_fill2_in(img + (y0 * p->in_w + x0) * p->in_c, p->in_w * p->in_c, p->k_h,
                               p->seg_p >> 2, slot);
    }
    return tc_s16_fill2(p, img, y0, x0, slot);
}

static void tc_conv_s16q_dsp(const tc_s16q_params_t *p, const int16_t *in, int16_t *out)
{
    int16_t col[2 * TC_S16_KMAX] __attribute__((aligned(8)));
    const int32_t ng = p->k_h * p->seg_p / 4, OC = p->out_c, lo = p->act_min, hi = p->act_max;
    const uint8_t *wq = (const uint8_t *)p->weights;
    int32_t b, oy, ox, c;
    for (b = 0; b < p->batches; b++) {
        const int16_t *img = in + b * p->in_h * p->in_w * p->in_c;
        for (oy = 0; oy < p->out_h; oy++) {
            const int32_t y0 = oy * p->stride_h - p->pad_h;
            for (ox = 0; ox < p->out_w; ox += 2) {
                const int two = ox + 1 < p->out_w;
                const int32_t x0 = ox * p->stride_w - p->pad_w;
                const int32_t s0 = tc_s16_window2(p, img, y0, x0, col);
                const int32_t s1 =
                    two ? tc_s16_window2(p, img, y0, x0 + p->stride_w, col + 4) : s0;
                int16_t *o0 = out, *o1 = out + OC;
                for (c = 0; c < OC; c += 2) {
                    const int32_t *r0 = p->rq + 4 * c, *r1 = r0 + 4; /* padded to the quad */
                    int32_t a[4];
                    a[0] = tc_s16_start(r0[0], s0);
                    a[1] = tc_s16_start(r1[0], s0);
                    a[2] = tc_s16_start(r0[0], s1);
                    a[3] = tc_s16_start(r1[0], s1);
                    tc_s16_dot2x2(col, wq + (c >> 2) * ng * 16 + (c & 2) * 4, ng, a);
                    o0[c] = tc_s16_out(a[0], r0, lo, hi);
                    if (two) {
                        o1[c] = tc_s16_out(a[2], r0, lo, hi);
                    }
                    if (c + 1 < OC) {
                        o0[c + 1] = tc_s16_out(a[1], r1, lo, hi);
                        if (two) {
                            o1[c + 1] = tc_s16_out(a[3], r1, lo, hi);
                        }
                    }
                }
                out += two ? 2 * OC : OC;
            }
        }
    }
}
#endif /* TC_DSP */

#if defined(__ARM_ARCH_6M__)
/* The window starting at input (y0, x0) as int32 taps (k_h rows of seg_p, zeros in the
 * padding); returns its sum. */
static int32_t tc_s16_fill32(const tc_s16q_params_t *p, const int16_t *img, int32_t y0,
                             int32_t x0, int32_t *col)
{
    const int32_t C = p->in_c, segp = p->seg_p;
    int32_t ky, kx0, kx1, s = 0, t;
    if (tc_s16_inside(p, y0, x0)) {
        const int16_t *src = img + (y0 * p->in_w + x0) * C;
        for (ky = 0; ky < p->k_h; ky++, col += segp, src += p->in_w * C) {
            for (t = 0; t < segp; t++) {
                const int32_t v = src[t];
                col[t] = v;
                s += v;
            }
        }
        return s;
    }
    tc_tap_range(x0, 1, p->k_w, p->in_w, &kx0, &kx1);
    for (ky = 0; ky < p->k_h; ky++, col += segp) {
        const int32_t y = y0 + ky;
        const int16_t *src;
        int32_t n;
        if (y < 0 || y >= p->in_h) {
            memset(col, 0, (size_t)segp * 4);
            continue;
        }
        for (t = 0; t < kx0 * C; t++) {
            col[t] = 0;
        }
        src = img + (y * p->in_w + x0 + kx0) * C;
        n = (kx1 - kx0) * C;
        for (t = 0; t < n; t++) {
            const int32_t v = src[t];
            col[kx0 * C + t] = v;
            s += v;
        }
        for (t = kx1 * C; t < segp; t++) {
            col[t] = 0;
        }
    }
    return s;
}

/* Every channel of one pixel from its int32 window (ng groups). */
static void tc_s16_quads_m0(const tc_s16q_params_t *p, const int32_t *col, int32_t ng, int32_t sx,
                            int16_t *o)
{
    const uint8_t *wq = (const uint8_t *)p->weights;
    const int32_t OC = p->out_c;
    int32_t c, k;
    for (c = 0; c < OC; c += 4) {
        const int32_t *rq = p->rq + 4 * c;
        int32_t a[4];
        for (k = 0; k < 4; k++) {
            a[k] = tc_s16_start(rq[4 * k], sx);
        }
        tc_s16_dot1x4_m0(col, wq + c * ng * 4, ng, a);
        for (k = 0; k < 4 && c + k < OC; k++) {
            o[c + k] = tc_s16_out(a[k], rq + 4 * k, p->act_min, p->act_max);
        }
    }
}

static void tc_conv_s16q_m0(const tc_s16q_params_t *p, const int16_t *in, int16_t *out)
{
    int32_t col[TC_S16_KMAX];
    const int32_t ng = p->k_h * p->seg_p / 4;
    int32_t b, oy, ox;
    for (b = 0; b < p->batches; b++) {
        const int16_t *img = in + b * p->in_h * p->in_w * p->in_c;
        for (oy = 0; oy < p->out_h; oy++) {
            const int32_t y0 = oy * p->stride_h - p->pad_h;
            for (ox = 0; ox < p->out_w; ox++) {
                const int32_t s = tc_s16_fill32(p, img, y0, ox * p->stride_w - p->pad_w, col);
                tc_s16_quads_m0(p, col, ng, s, out);
                out += p->out_c;
            }
        }
    }
}
#endif /* __ARM_ARCH_6M__ */

void tc_conv_s16q(const tc_s16q_params_t *p, const int16_t *in, int16_t *out)
{
#if TC_DSP
    if (p->k_h * p->seg_p <= TC_S16_KMAX) {
        tc_conv_s16q_dsp(p, in, out);
        return;
    }
#elif defined(__ARM_ARCH_6M__)
    if (p->k_h * p->seg_p <= TC_S16_KMAX) {
        tc_conv_s16q_m0(p, in, out);
        return;
    }
#endif
    tc_conv_s16q_portable(p, in, out);
}

void tc_fc_s16q(const tc_s16q_params_t *p, const int16_t *in, int16_t *out)
{
    const int32_t D = p->in_c, OC = p->out_c;
    int32_t b;
    for (b = 0; b < p->batches; b++) {
        const int16_t *x = in + b * D;
        int16_t *o = out + b * OC;
#if TC_DSP
        {
            const uint8_t *wq = (const uint8_t *)p->weights;
            const int32_t ng = p->seg_p / 4, G = D >> 2, r = D & 3;
            int32_t sx = 0, i, c, k, t;
            for (i = 0; i < D; i++) {
                sx += x[i];
            }
            for (c = 0; c < OC; c += 4) {
                const int32_t *rq = p->rq + 4 * c;
                const uint8_t *w = wq + c * ng * 4;
                int32_t a[4];
                for (k = 0; k < 4; k++) {
                    a[k] = tc_s16_start(rq[4 * k], sx);
                }
                if (G > 0) {
                    tc_s16_dot1x4(x, w, G, a);
                }
                for (t = 0; t < r; t++) {
                    const int32_t v = x[4 * G + t];
                    for (k = 0; k < 4; k++) {
                        a[k] = (int32_t)((uint32_t)a[k] +
                                         (uint32_t)(v * w[G * 16 + 4 * k + TC_S16_POS(t)]));
                    }
                }
                for (k = 0; k < 4 && c + k < OC; k++) {
                    o[c + k] = tc_s16_out(a[k], rq + 4 * k, p->act_min, p->act_max);
                }
            }
            continue;
        }
#elif defined(__ARM_ARCH_6M__)
        if (p->seg_p <= TC_S16_KMAX) {
            int32_t col[TC_S16_KMAX];
            int32_t sx = 0, i;
            for (i = 0; i < D; i++) {
                sx += col[i] = x[i];
            }
            for (; i < p->seg_p; i++) {
                col[i] = 0;
            }
            tc_s16_quads_m0(p, col, p->seg_p / 4, sx, o);
            continue;
        }
#endif
        tc_s16q_pixel(p, x, 0, 0, o);
    }
}
