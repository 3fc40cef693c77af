/* tinycompile runtime, internal: what the CONV_2D files share (tc_conv2d.c: the entry point
 * and the direct loops; tc_conv2d_inplace.c: the in-place ring). Not part of the public
 * kernel interface (tc_conv2d.h).
 */
#ifndef TC_CONV2D_INT_H
#define TC_CONV2D_INT_H

#include <stdint.h>

#include "tc_conv2d.h"
#include "tc_kernel_util.h"

/* 1: the interior and im2col loops compute two output pixels per pass (four accumulators per
 * channel pair); 0 on ARMv6-M, which is short of registers for that (one pixel per pass). */
#if defined(__ARM_ARCH_6M__)
#define TC_CONV_PAIRS 0
#else
#define TC_CONV_PAIRS 1
#endif

/* Per-call constants of a convolution, computed once (no divisions in the pixel loops). */
typedef struct {
    const tc_conv_params_t *p;
    int32_t kc;         /* filter depth: input channels per group */
    int32_t opg;        /* output channels per group */
    int32_t wstride;    /* weights per output channel */
    int32_t rstep;      /* input step between filter rows */
    int32_t xstep;      /* input step between filter columns */
    int32_t pstep;      /* input step between horizontally adjacent output pixels */
    int32_t seg, nseg;  /* a filter row is nseg contiguous dot products of seg values */
} tc_conv_geo_t;

/* tc_conv2d.c: one output pixel whose window leaves the image (the reference formula over its
 * valid taps; tc_conv_edge: the DSP cores' faster version of it, groups == 1), and nx (1 or 2)
 * interior pixels from the window origin org (the second pstep later). */
void tc_conv_interior(const tc_conv_geo_t *g, const int8_t *org, int32_t nx, int8_t *out);
#if TC_DSP
void tc_conv_edge(const tc_conv_geo_t *g, const int8_t *img, int32_t oy, int32_t ox,
                  int8_t *out);
#else
void tc_conv_border(const tc_conv_geo_t *g, const int8_t *img, int32_t oy, int32_t ox,
                    int8_t *out);
#define tc_conv_edge tc_conv_border
#endif

/* tc_conv2d_inplace.c: tc_conv_s8's in-place walk (params inplace, tc_conv2d.h) of stride-1
 * same-size k x k layers through a ring of pending outputs. */
void tc_conv_ring_inplace(const tc_conv_geo_t *g, const int8_t *in, int8_t *out);

#endif /* TC_CONV2D_INT_H */
