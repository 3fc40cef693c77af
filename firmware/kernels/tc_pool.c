/* tinycompile runtime: int8 pooling, AVERAGE_POOL_2D and MAX_POOL_2D (see tc_pool.h). Written
 * from TFLM's reference semantics (reference_integer_ops::AveragePool / MaxPool); the loops are
 * our own: the clipped window is computed once per output position and channels are processed
 * four at a time. The two operators share that window clipping and loop structure, so they stay
 * one family file. No fast paths. tc_avgpool_s16 / tc_maxpool_s16 (16x8): the same arithmetic
 * on int16 (TFLM's int16 AveragePool / MaxPool: int32 sum, max from -32768), channel by channel. */
#include <stdint.h>

#include "tc_pool.h"
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

void tc_avgpool_s8(const tc_pool_params_t *p, const int8_t *in, int8_t *out)
{
    const int32_t H = p->in_h, W = p->in_w, C = p->channels;
    int32_t n, oy, ox, c;
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
                    for (c = 0; c + 3 < C; c += 4) {
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
                    for (c = 0; c + 3 < C; c += 4) {
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
                for (c = 0; c < C; c++) {
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
