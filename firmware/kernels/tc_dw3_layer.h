/* tinycompile runtime, internal: the body of DEPTHWISE_CONV_2D's 3x3 DSP layer function,
 * included twice by tc_depthwise_dsp.c (which defines everything it calls):
 *   TC_DW3_PART 0, TC_DW3_NAME tc_dwconv3x3_dsp: channels in fours (TFLite's or onnxruntime's
 *     requantization);
 *   TC_DW3_PART 1, TC_DW3_NAME tc_dwconv3x3n_dsp: any channel count, TFLite's requantization.
 *     A last block of cn < 4 channels: its weights are zero-padded by the compiler; its input
 *     words reach into the next pixel (lanes that feed no output), never past the tensor (the
 *     tensor's last pixel goes in channel by channel); channels past cn take channel cn - 1's
 *     constants and are neither computed nor stored (tc_dw3_part_s1 / _s2, passes of up to
 *     four outputs).
 * A template rather than an inline function with a PART argument: GCC 12 allocates registers
 * differently for the same code once it is inlined from a parameterized body (measured: 0.1%
 * more instructions on the M7 for MobileNet's 3x3 layers); the preprocessor leaves the
 * channels-in-fours instance token for token what it was.
 */
#if !defined(TC_DW3_NAME) || !defined(TC_DW3_PART) || !defined(TC_DW3_CH)
#error "tc_dw3_layer.h is included by tc_depthwise_dsp.c with TC_DW3_NAME, TC_DW3_PART, TC_DW3_CH"
#endif

int TC_DW3_NAME(const tc_conv_params_t *p, const int8_t *in, int8_t *out)
{
    const int32_t H = p->in_h, W = p->in_w, C = p->in_c, OH = p->out_h, OW = p->out_w;
    const int32_t lo = p->act_min, hi = p->act_max;
    const int clamp = lo > -128 || hi < 127;
    const uint32_t zp = (uint32_t)(-p->in_offset) & 0xFFu;
    const uint32_t pad = zp * 0x01010101u;
    /* Lines run along the longer output axis, one after the other across it: a line of
     * outputs reads three input lines, buffered. */
    const int vert = OH > OW;
    const int32_t LS = vert ? p->stride_h : p->stride_w; /* stride along a line */
    const int32_t XS = vert ? p->stride_w : p->stride_h; /* stride across lines */
    const int32_t NL = vert ? OW : OH, NA = vert ? OH : OW; /* lines, outputs per line */
    const int32_t IA = vert ? H : W, IX = vert ? W : H;   /* input size along / across */
    const int32_t PA = vert ? p->pad_h : p->pad_w, PX = vert ? p->pad_w : p->pad_h;
    const int32_t ia = vert ? W * C : C, ix = vert ? C : W * C;   /* input steps */
    const int32_t oa = vert ? OW * C : C, ox = vert ? C : OW * C; /* output steps */
    const int32_t tile = (TC_DW3_COLS - 4) / LS + 1; /* outputs per buffer tile */
    tc_dw3_line_fn line;
    /* [line slot][channel][word] */
    uint32_t buf[3][4][TC_DW3_WORDS];
    tc_dw3_chan_t ch[4];
    const int onnx = TC_ONNX_VARIANT && p->shift[0] > 31; /* the ONNX variant (all) */
    int32_t c, n, c0;
#if TC_DW3_PART
    if (onnx || (LS != 1 && LS != 2) || XS < 1) {
#else
    if (C % 4 != 0 || (LS != 1 && LS != 2) || XS < 1 || (onnx && !TC_FPU_SP)) {
#endif
        return 0;
    }
    if (in == out && NA > tile) {
        return 0;
    }
    for (c = 0; c < C; c++) {
        const int32_t b = p->bias_eff[c], r = -p->shift[c];
        if (b >= (1 << 29) || b <= -(1 << 29) || (!onnx && (r < 1 || r > 23))) {
            return 0;
        }
    }
    line = LS == 1 ? (onnx ? tc_dw3_line_s1o : tc_dw3_line_s1)
                   : (onnx ? tc_dw3_line_s2o : tc_dw3_line_s2);
    for (n = 0; n < p->batches; n++) {
        const int8_t *img = in + n * H * W * C;
        int8_t *oimg = out + n * OH * OW * C;
        for (c0 = 0; c0 < C; c0 += 4) {
            const int8_t *wb = p->weights + (c0 >> 2) * 36;
#if TC_DW3_PART
            const int32_t cn = C - c0 < 4 ? C - c0 : 4;
#endif
            int32_t t, i, ta;
            /* block set-up: weights [ky][kx][4]; line t, tap u along it */
            for (t = 0; t < 3; t++) {
                const int32_t s = vert ? 4 * 3 : 4, ls = vert ? 4 : 4 * 3;
                const uint32_t v0 = tc_ld32(wb + t * ls), v1 = tc_ld32(wb + t * ls + s);
                const uint32_t v2 = tc_ld32(wb + t * ls + 2 * s);
                uint32_t e0 = tc_sxtb16_lo(v0), e1 = tc_sxtb16_lo(v1), e2 = tc_sxtb16_lo(v2);
                uint32_t o0 = tc_sxtb16_hi(v0), o1 = tc_sxtb16_hi(v1), o2 = tc_sxtb16_hi(v2);
                e0 = (uint32_t)__sadd16(e0, e0);
                e1 = (uint32_t)__sadd16(e1, e1);
                e2 = (uint32_t)__sadd16(e2, e2);
                o0 = (uint32_t)__sadd16(o0, o0);
                o1 = (uint32_t)__sadd16(o1, o1);
                o2 = (uint32_t)__sadd16(o2, o2);
                ch[0].w[t][0] = tc_pkhbt16(e0, e1);
                ch[0].w[t][1] = tc_pkhbt16(e1, e2);
                ch[2].w[t][0] = tc_pkhtb16(e0, e1);
                ch[2].w[t][1] = tc_pkhtb16(e1, e2);
                ch[1].w[t][0] = tc_pkhbt16(o0, o1);
                ch[1].w[t][1] = tc_pkhbt16(o1, o2);
                ch[3].w[t][0] = tc_pkhtb16(o0, o1);
                ch[3].w[t][1] = tc_pkhtb16(o1, o2);
            }
            for (i = 0; i < 4; i++) {
                const int32_t r = onnx ? 0 : -p->shift[TC_DW3_CH(c0, i)];
                ch[i].bias = 2 * p->bias_eff[TC_DW3_CH(c0, i)];
                ch[i].mult = p->mult[TC_DW3_CH(c0, i)] - (onnx ? 1 << 23 : 0); /* ONNX: scale / 2 */
                ch[i].rsh = r;
                ch[i].rnd = onnx ? p->out_offset
                                 : (int32_t)((1u << (r - 1)) + ((uint32_t)p->out_offset << r));
            }
            for (ta = 0; ta < NA; ta += tile) {
                const int32_t na = NA - ta < tile ? NA - ta : tile;
                const int32_t a0 = ta * LS - PA, ncols = (na - 1) * LS + 3;
                int32_t jv0 = a0 < 0 ? -a0 : 0, jv1 = IA - a0 < ncols ? IA - a0 : ncols;
                uint32_t *ln[3];
                int32_t base = INT32_MIN / 2, l;
                if (jv0 > ncols) {
                    jv0 = ncols;
                }
                if (jv1 < jv0) {
                    jv1 = jv0;
                }
                ln[0] = buf[0][0];
                ln[1] = buf[1][0];
                ln[2] = buf[2][0];
                for (l = 0; l < NL; l++) {
                    const int32_t x0 = l * XS - PX;
                    int8_t *o = oimg + l * ox + ta * oa + c0;
                    int32_t d = x0 - base;
                    if (d > 3) {
                        d = 3;
                    }
                    for (; d > 0; d--) { /* lines x0 + 3 - d: rotate one slot */
                        uint32_t *f = ln[0];
                        const int32_t xx = x0 + 3 - d;
                        ln[0] = ln[1];
                        ln[1] = ln[2];
                        ln[2] = f;
                        if (xx >= 0 && xx < IX) {
#if TC_DW3_PART
                            const int last = cn < 4 && xx == IX - 1 && jv1 == IA - a0 &&
                                             jv1 > jv0; /* the tensor's last pixel */
                            tc_dw3_fill(img + xx * ix + (a0 + jv0) * ia + c0, ia, ncols, jv0,
                                        jv1 - last, pad, f);
                            for (i = 0; i < cn && last; i++) {
                                ((int16_t *)(f + i * TC_DW3_WORDS))[jv1 - 1] =
                                    img[H * W * C - C + c0 + i];
                            }
#else
                            tc_dw3_fill(img + xx * ix + (a0 + jv0) * ia + c0, ia, ncols, jv0,
                                        jv1, pad, f);
#endif
                        } else {
                            tc_dw3_fill(img, 0, ncols, 0, 0, pad, f);
                        }
                    }
                    base = x0;
#if TC_DW3_PART
                    if (cn < 4) {
                        (LS == 1 ? tc_dw3_part_s1 : tc_dw3_part_s2)(
                            (const uint32_t *const *)ln, ch, o, oa, na, cn);
                        for (i = 0; i < na * oa && clamp; i += oa) {
                            for (t = 0; t < cn; t++) {
                                o[i + t] = (int8_t)tc_clamp(o[i + t], lo, hi);
                            }
                        }
                        continue;
                    }
#endif
                    line((const uint32_t *const *)ln, ch, o, oa, na);
                    if (clamp) {
                        tc_dw3_clamp(o, oa, na, lo, hi);
                    }
                }
            }
        }
    }
    return 1;
}
