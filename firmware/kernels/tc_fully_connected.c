/* tinycompile runtime: FULLY_CONNECTED, int8 (tc_fc_s8; see tc_fully_connected.h).
 *
 * Matches TensorFlow Lite Micro's reference FullyConnected / FullyConnectedPerChannel
 * (reference/integer_ops/fully_connected.h): per output, int32 accumulation of
 * weights * (input - input_zero_point) plus bias, then MultiplyByQuantizedMultiplier
 * (tc_requant, per channel or per tensor), output zero point and the activation clamp. The input
 * offset is folded into bias_eff, so each output is a pure int8 dot product.
 *
 * Weights come re-laid out by the compiler (tc_fully_connected.h, ops/fully_connected.py):
 * quads of four output channels interleaved by groups of four depth values, each byte stored as
 * u = w + 128. So sum(x * w) = sum(x * u) - 128 * sum(x): each input row's sum is taken once
 * and folded into the four accumulators' start values. Per input row, per quad: the groups,
 * then the depth % 4 last values, then the requantization of the quad's outputs.
 *
 * Why u = w + 128: ARMv6-M has LDRSB only with a register offset, LDRB also with an immediate
 * one, so unsigned bytes let the Thumb-1 loop read a quad's weights from one pointer; on M4/M7
 * UXTB16 costs what SXTB16 does. The final int32 sum equals the reference's modulo 2^32, so
 * it is the same number (each x * u is below 2^15 in magnitude: the running sums stay in int32
 * for the depths an int8 model has, as the reference's own).
 *
 * Paths (same int32 sums in another order; wrapping int32 addition commutes, so every path
 * gives identical results):
 *   - Cortex-M4/M7 (TC_DSP), assembly: per group one LDR of the input word (two SXTB16 serve
 *     the four channels), one LDM of the quad's 16 weights, eight UXTB16, eight SMLAD: 20
 *     instructions per 16 MACs, four groups per loop pass. tc_fc_quads_dsp runs a row's full
 *     quads in one function: sums from bias_eff + the row's correction, the loop, and the
 *     requantization in nine instructions an output with SMMLAR (tc_dsp.h's tc_rq_smmlar_s8)
 *     where the compiler proved it exact (rq_smmlar: every shift right, |accumulator| < 2^30;
 *     checked in ops/conv_common.py, smmlar_ok) and the activation does not narrow int8's range.
 *     Otherwise, per quad, tc_fc_dot4_dsp (the same loop) and tc_rq_smmlar_s8 plus the clamp, or
 *     tc_kernel_util.h's tc_out_s8_dsp (any shift). Partial quads and the depth % 4 tails:
 *     tc_fc_dotn, SMLAD over words, sums in registers;
 *   - ARMv6-M (Cortex-M0/M0+): tc_fc_s8_m0 in tc_fully_connected_m0.c;
 *   - portable C elsewhere (host, Cortex-M3, -DTC_PORTABLE): tc_fc_dotn, four input values
 *     per group loaded once for the quad's sixteen weights, sums in registers.
 *
 * tc_fc_s16 (16x8): TFLM's int16 FullyConnected on TFLite's weight layout, int64 accumulator
 * (tc_dot_s16_s8) plus the int64 bias, tc_requant64, clamp.
 */
#include <stdint.h>
#include <string.h>

#include "tc_fully_connected.h"
#include "tc_kernel_util.h"
#include "tc_m0.h"

#if TC_DSP
#define TC_OUT tc_out_s8_dsp
#else
#define TC_OUT tc_out_s8
#endif

#if TC_DSP
/* UXTB16 of the value rotated right by 8 (bytes 1 and 3), in one instruction. */
TC_INLINE uint32_t tc_fc_uxtb16_hi(uint32_t v)
{
    uint32_t r;
    __asm__("uxtb16 %0, %1, ror #8" : "=r"(r) : "r"(v));
    return r;
}

/* a += the input's halves xe = (x0, x2), xo = (x1, x3) times one channel's weight word. */
TC_INLINE int32_t tc_fc_mac4(uint32_t xe, uint32_t xo, const uint8_t *w, int32_t a)
{
    uint32_t v;
    memcpy(&v, w, 4); /* word-aligned (every quad, every group) */
    a = __smlad(xe, __uxtb16(v), a);
    return __smlad(xo, tc_fc_uxtb16_hi(v), a);
}
#endif

/* a[k] += the sums of a quad of N channels (N a constant once inlined): `groups` groups of four
 * depth values (4N bytes each), then the depth % 4 tail (r values per channel). */
TC_INLINE void tc_fc_dotn(const int8_t *x, const uint8_t *w, int32_t groups, int32_t r,
                          const int32_t N, int32_t *a)
{
    int32_t a0 = a[0], a1 = N > 1 ? a[1] : 0, a2 = N > 2 ? a[2] : 0, a3 = N > 3 ? a[3] : 0;
    int32_t j;
    for (; groups > 0; groups--) {
#if TC_DSP
        const uint32_t xv = tc_ld32(x), xe = tc_sxtb16_lo(xv), xo = tc_sxtb16_hi(xv);
        a0 = tc_fc_mac4(xe, xo, w, a0);
        if (N > 1) {
            a1 = tc_fc_mac4(xe, xo, w + 4, a1);
        }
        if (N > 2) {
            a2 = tc_fc_mac4(xe, xo, w + 8, a2);
        }
        if (N > 3) {
            a3 = tc_fc_mac4(xe, xo, w + 12, a3);
        }
#else
        const int32_t x0 = x[0], x1 = x[1], x2 = x[2], x3 = x[3];
        a0 += x0 * w[0] + x1 * w[1] + x2 * w[2] + x3 * w[3];
        if (N > 1) {
            a1 += x0 * w[4] + x1 * w[5] + x2 * w[6] + x3 * w[7];
        }
        if (N > 2) {
            a2 += x0 * w[8] + x1 * w[9] + x2 * w[10] + x3 * w[11];
        }
        if (N > 3) {
            a3 += x0 * w[12] + x1 * w[13] + x2 * w[14] + x3 * w[15];
        }
#endif
        x += 4;
        w += 4 * N;
    }
    for (j = 0; j < r; j++) {
        const int32_t xv = x[j];
        a0 += xv * w[j];
        if (N > 1) {
            a1 += xv * w[r + j];
        }
        if (N > 2) {
            a2 += xv * w[2 * r + j];
        }
        if (N > 3) {
            a3 += xv * w[3 * r + j];
        }
    }
    a[0] = a0;
    if (N > 1) {
        a[1] = a1;
    }
    if (N > 2) {
        a[2] = a2;
    }
    if (N > 3) {
        a[3] = a3;
    }
}

/* tc_fc_dotn for n = 1 .. 4 channels. */
static void tc_fc_dotq(const int8_t *x, const uint8_t *w, int32_t groups, int32_t r, int32_t n,
                       int32_t *a)
{
    switch (n) {
    case 1:
        tc_fc_dotn(x, w, groups, r, 1, a);
        break;
    case 2:
        tc_fc_dotn(x, w, groups, r, 2, a);
        break;
    case 3:
        tc_fc_dotn(x, w, groups, r, 3, a);
        break;
    default:
        tc_fc_dotn(x, w, groups, r, 4, a);
        break;
    }
}

/* sum(x[0 .. n - 1]) */
static int32_t tc_fc_xsum(const int8_t *x, int32_t n)
{
    int32_t s = 0;
#if TC_DSP
    for (; n >= 4; n -= 4) {
        const uint32_t v = tc_ld32(x);
        x += 4;
        s = __smlad(tc_sxtb16_lo(v), 0x00010001u, s);
        s = __smlad(tc_sxtb16_hi(v), 0x00010001u, s);
    }
#else
    for (; n >= 4; n -= 4) {
        s += x[0] + x[1] + x[2] + x[3];
        x += 4;
    }
#endif
    for (; n > 0; n--) {
        s += *x++;
    }
    return s;
}

#if TC_DSP
/* One group: the input word as (x0, x2) in r9 and (x1, x3) in r8, the quad's four words
 * r10, r11, r12, lr (channel k's four weights), each split into (u0, u2) and (u1, u3). */
#define TC_FC_DOT4_CH(W, A)                                                                     \
"uxtb16  r3, " W "\n\t"                                                                     \
"smlad   " A ", r9, r3, " A "\n\t"                                                          \
"uxtb16  " W ", " W ", ror #8\n\t"                                                          \
"smlad   " A ", r8, " W ", " A "\n\t"
#define TC_FC_DOT4_STEP                                                                         \
"ldr     r8, [r0], #4\n\t"                                                                  \
"ldm     r1!, {r10, r11, r12, lr}\n\t"                                                      \
"sxtb16  r9, r8\n\t"                                                                        \
"sxtb16  r8, r8, ror #8\n\t"                                                                \
TC_FC_DOT4_CH("r10", "r4") TC_FC_DOT4_CH("r11", "r5") TC_FC_DOT4_CH("r12", "r6")          \
TC_FC_DOT4_CH("lr", "r7")
/* The dot-product loop: four groups a pass, entered at the pass's group (4 - groups % 4) % 4
 * (groups >= 1 in r2, x in r0; r2 becomes the input's end, r3 is clobbered). */
#define TC_FC_DOT4_LOOP                                                                         \
    "and     r3, r2, #3\n\t"                                                                    \
    "add     r2, r0, r2, lsl #2\n\t"                                                            \
    "cmp     r3, #2\n\t"                                                                        \
    "beq     2f\n\t"                                                                            \
    "bhi     1f\n\t"                                                                            \
    "cmp     r3, #1\n\t"                                                                        \
    "beq     3f\n"                                                                               \
    "0:\n\t" TC_FC_DOT4_STEP "1:\n\t" TC_FC_DOT4_STEP "2:\n\t" TC_FC_DOT4_STEP                  \
    "3:\n\t" TC_FC_DOT4_STEP                                                                     \
    "cmp     r0, r2\n\t"                                                                        \
    "bne     0b\n\t"

/* a[k] = be[k] + corr + the sum over `groups` groups of a full quad (x four int8 a group, w 16
 * bytes a group, word-aligned). Naked: the loop needs fourteen registers (four sums, x, w, the
 * end, the input word's two halves, the four weight words and one temporary), so the body is
 * the whole function (AAPCS: x, w, groups, a in r0-r3, be and corr on the stack; a saved on
 * the stack, r3 then the temporary). Four groups a loop pass, entered at the pass's group
 * (4 - groups % 4) % 4. */
#define TC_ARG __attribute__((unused)) /* read by the assembly, not by name */
__attribute__((naked, noinline)) static void tc_fc_dot4_dsp(TC_ARG const int8_t *x,
                                                            TC_ARG const uint8_t *w,
                                                            TC_ARG int32_t groups,
                                                            TC_ARG int32_t *a,
                                                            TC_ARG const int32_t *be,
                                                            TC_ARG int32_t corr)
{
    __asm__("push    {r3, r4, r5, r6, r7, r8, r9, r10, r11, lr}\n\t"
            "ldr     r3, [sp, #40]\n\t" /* be */
            "ldm     r3, {r4, r5, r6, r7}\n\t"
            "ldr     r3, [sp, #44]\n\t" /* corr */
            "add     r4, r4, r3\n\t"
            "add     r5, r5, r3\n\t"
            "add     r6, r6, r3\n\t"
            "add     r7, r7, r3\n\t"
            "cmp     r2, #0\n\t"
            "beq     9f\n\t" TC_FC_DOT4_LOOP "\n"
            "9:\n\t"
            "pop     {r3}\n\t"
            "stm     r3, {r4, r5, r6, r7}\n\t"
            "pop     {r4, r5, r6, r7, r8, r9, r10, r11, pc}\n\t");
}

/* One row's full quads, the whole loop in assembly (depth a multiple of 4, rq_smmlar, no
 * narrower activation than int8): per quad the sums from be + corr, the dot-product loop, then
 * tc_rq_smmlar_s8's arithmetic for the four outputs (the sign of acc folded into R first). */
typedef struct {
    const int8_t *x;   /* 0: the row */
    int32_t groups;    /* 4: depth / 4 (>= 1) */
    const uint8_t *w;  /* 8: the first quad's weights (advanced) */
    const int32_t *be; /* 12: bias_eff (advanced 4 a quad) */
    const int32_t *m;  /* 16: multipliers (advanced by mstep bytes a quad) */
    const int32_t *s;  /* 20: shifts (likewise) */
    int8_t *o;         /* 24: outputs (advanced 4 a quad) */
    int8_t *oend;      /* 28: after the last full quad's outputs */
    int32_t corr;      /* 32: -128 * sum(x) */
    int32_t k2;        /* 36: 2 * out_offset + 1 */
    int32_t mstep;     /* 40: 16 per channel, 0 per tensor (m and s then four copies) */
} tc_fc_job_t;

/* One output: A the sum, M its multiplier, K the shift's offset in r1's array; r3 k2,
 * r0 the outputs; lr and r2 temporaries. */
#define TC_FC_RQ(A, M, K, O)                                                                    \
    "ldr     lr, [r1, #" K "]\n\t"                                                              \
    "mvn     lr, lr\n\t"                                                                        \
    "lsl     r2, r3, lr\n\t"                                                                    \
    "add     r2, r2, " A ", asr #31\n\t"                                                        \
    "add     " A ", " A ", " A "\n\t"                                                           \
    "smmlar  " A ", " A ", " M ", r2\n\t"                                                       \
    "asr     " A ", " A ", lr\n\t"                                                              \
    "ssat    " A ", #8, " A ", asr #1\n\t"                                                      \
    "strb    " A ", [r0, #" O "]\n\t"
__attribute__((naked, noinline)) static void tc_fc_quads_dsp(TC_ARG tc_fc_job_t *j)
{
    __asm__("push    {r0, r4, r5, r6, r7, r8, r9, r10, r11, lr}\n"
            "4:\n\t"
            "ldr     r12, [sp]\n\t"
            "ldr     r3, [r12, #12]\n\t"
            "ldm     r3!, {r4, r5, r6, r7}\n\t"
            "str     r3, [r12, #12]\n\t"
            "ldr     r3, [r12, #32]\n\t"
            "add     r4, r4, r3\n\t"
            "add     r5, r5, r3\n\t"
            "add     r6, r6, r3\n\t"
            "add     r7, r7, r3\n\t"
            "ldm     r12, {r0, r2}\n\t" /* x, groups */
            "ldr     r1, [r12, #8]\n\t" TC_FC_DOT4_LOOP
            "ldr     r12, [sp]\n\t"
            "str     r1, [r12, #8]\n\t"
            "ldr     r0, [r12, #16]\n\t"
            "ldr     r3, [r12, #40]\n\t"
            "ldm     r0, {r8, r9, r10, r11}\n\t"
            "add     r0, r0, r3\n\t"
            "str     r0, [r12, #16]\n\t"
            "ldr     r1, [r12, #20]\n\t"
            "add     r3, r1, r3\n\t"
            "str     r3, [r12, #20]\n\t"
            "ldr     r3, [r12, #36]\n\t"
            "ldr     r0, [r12, #24]\n\t"
            TC_FC_RQ("r4", "r8", "0", "0") TC_FC_RQ("r5", "r9", "4", "1")
            TC_FC_RQ("r6", "r10", "8", "2") TC_FC_RQ("r7", "r11", "12", "3")
            "add     r0, r0, #4\n\t"
            "str     r0, [r12, #24]\n\t"
            "ldr     r2, [r12, #28]\n\t"
            "cmp     r0, r2\n\t"
            "bne     4b\n\t"
            "pop     {r0, r4, r5, r6, r7, r8, r9, r10, r11, pc}\n\t");
}
#undef TC_FC_RQ
#undef TC_FC_DOT4_LOOP
#undef TC_FC_DOT4_STEP
#undef TC_FC_DOT4_CH
#endif

/* The outputs of channels oc .. oc + n - 1 of one row from their sums. */
static void tc_fc_out(const tc_fc_params_t *p, const int32_t *a, int32_t oc, int32_t n,
                      int8_t *o)
{
    const int32_t oo = p->out_offset, lo = p->act_min, hi = p->act_max;
    int32_t k;
    if (p->per_channel) {
        const int32_t *m = p->mult + oc, *s = p->shift + oc;
        for (k = 0; k < n; k++) {
            o[k] = TC_OUT(a[k], m[k], s[k], oo, lo, hi);
        }
    } else {
        const int32_t m = p->mult[0], s = p->shift[0];
        for (k = 0; k < n; k++) {
            o[k] = TC_OUT(a[k], m, s, oo, lo, hi);
        }
    }
}

#if TC_DSP
/* Cortex-M4/M7: one row, quads by the assembly loop, requantized by tc_rq_smmlar_s8 where
 * allowed. */
static void tc_fc_row_dsp(const tc_fc_params_t *p, const int8_t *x, int8_t *o)
{
    const int32_t D = p->depth, OC = p->out_c, G = D >> 2, r = D & 3;
    const int32_t corr = -128 * tc_fc_xsum(x, D), k2 = 2 * p->out_offset + 1;
    const int32_t lo = p->act_min, hi = p->act_max, full = lo == -128 && hi == 127;
    const int32_t pc = p->per_channel ? 4 : 0;
    const int32_t *m = p->mult, *s = p->shift;
    const uint8_t *w = p->weights;
    int32_t oc = 0, k;
    if (p->rq_smmlar && full && r == 0 && OC >= 4) {
        int32_t m4[4], s4[4];
        tc_fc_job_t j;
        j.x = x;
        j.groups = G;
        j.w = w;
        j.be = p->bias_eff;
        j.m = m;
        j.s = s;
        j.mstep = 16;
        if (!pc) {
            m4[0] = m4[1] = m4[2] = m4[3] = m[0];
            s4[0] = s4[1] = s4[2] = s4[3] = s[0];
            j.m = m4;
            j.s = s4;
            j.mstep = 0;
        }
        j.o = o;
        j.oend = o + (OC & ~3);
        j.corr = corr;
        j.k2 = k2;
        tc_fc_quads_dsp(&j);
        oc = OC & ~3;
        w = j.w;
    }
    for (; oc + 3 < OC; oc += 4) {
        int32_t a[4];
        tc_fc_dot4_dsp(x, w, G, a, p->bias_eff + oc, corr);
        w += 16 * G;
        if (r) {
            tc_fc_dotq(x + 4 * G, w, 0, r, 4, a);
            w += 4 * r;
        }
        if (!p->rq_smmlar) {
            tc_fc_out(p, a, oc, 4, o + oc);
        } else if (full) {
            const int32_t m0 = m[0], s0 = s[0];
            o[oc] = (int8_t)tc_rq_smmlar_s8(a[0], m0, s0, k2);
            o[oc + 1] = (int8_t)tc_rq_smmlar_s8(a[1], pc ? m[1] : m0, pc ? s[1] : s0, k2);
            o[oc + 2] = (int8_t)tc_rq_smmlar_s8(a[2], pc ? m[2] : m0, pc ? s[2] : s0, k2);
            o[oc + 3] = (int8_t)tc_rq_smmlar_s8(a[3], pc ? m[3] : m0, pc ? s[3] : s0, k2);
        } else {
            for (k = 0; k < 4; k++) {
                const int32_t v = tc_rq_smmlar_s8(a[k], m[pc ? k : 0], s[pc ? k : 0], k2);
                o[oc + k] = (int8_t)tc_clamp(v, lo, hi);
            }
        }
        m += pc;
        s += pc;
    }
    if (oc < OC) {
        const int32_t n = OC - oc;
        int32_t a[4];
        for (k = 0; k < n; k++) {
            a[k] = p->bias_eff[oc + k] + corr;
        }
        tc_fc_dotq(x, w, G, r, n, a);
        tc_fc_out(p, a, oc, n, o + oc);
    }
}
#endif

#if TC_MVE
#include "tc_mve.h"

/* Cortex-M55 (Helium): one row. A full quad's weights for four groups (64 bytes: group g's four
 * values of channels 0-3, then group g + 1's ...) are exactly what VLD4 of 32-bit elements
 * deinterleaves into one vector per channel holding its sixteen weights in depth order; XOR
 * 0x80 turns u = w + 128 back into int8 w, and VMLADAVA sums each against the sixteen input
 * values: 4 + 4 + 1 + 4 instructions for 64 MACs. The groups past a multiple of four and the
 * depth % 4 values take tc_fc_dotq (over u, with its -128 sum(x) correction for just those
 * values); partial quads tc_fc_dotq throughout. Requantization four outputs a vector
 * (tc_mve.h), or tc_fc_out where a shift marks the ONNX variant. The quads start word-aligned
 * (quad c0 at byte c0 * depth, c0 % 4 == 0, the weights word-aligned) as VLD4 needs. */
static void tc_fc_row_mve(const tc_fc_params_t *p, const int8_t *x, int8_t *o)
{
    const int32_t D = p->depth, OC = p->out_c, G = D >> 2, r = D & 3, G4 = G >> 2;
    const int32_t rest = D - 16 * G4, corr = -128 * tc_fc_xsum(x + 16 * G4, rest);
    const int32_t pc = p->per_channel;
    const int32x4_t lo = vdupq_n_s32(p->act_min), hi = vdupq_n_s32(p->act_max);
    const uint8x16_t flip = vdupq_n_u8(0x80);
    const uint8_t *w = p->weights;
    int32_t oc = 0, j;
    for (; oc + 3 < OC; oc += 4) {
        const int8_t *xv = x;
        int32_t a[4] = {0, 0, 0, 0};
        int32x4_t acc, m, sh;
        for (j = 0; j < G4; j++, w += 64, xv += 16) {
            const uint32x4x4_t q = vld4q_u32((const uint32_t *)(const void *)w);
            const int8x16_t xx = vld1q_s8(xv);
            a[0] = vmladavaq_s8(a[0], vreinterpretq_s8_u8(veorq_u8(vreinterpretq_u8_u32(q.val[0]),
                                                                    flip)), xx);
            a[1] = vmladavaq_s8(a[1], vreinterpretq_s8_u8(veorq_u8(vreinterpretq_u8_u32(q.val[1]),
                                                                    flip)), xx);
            a[2] = vmladavaq_s8(a[2], vreinterpretq_s8_u8(veorq_u8(vreinterpretq_u8_u32(q.val[2]),
                                                                    flip)), xx);
            a[3] = vmladavaq_s8(a[3], vreinterpretq_s8_u8(veorq_u8(vreinterpretq_u8_u32(q.val[3]),
                                                                    flip)), xx);
        }
        if (rest) {
            a[0] += corr;
            a[1] += corr;
            a[2] += corr;
            a[3] += corr;
            tc_fc_dotq(xv, w, G - 4 * G4, r, 4, a);
            w += 4 * rest;
        }
        acc = vaddq_s32(vld1q_s32(a), vld1q_s32(p->bias_eff + oc));
        if (pc) {
            m = vld1q_s32(p->mult + oc);
            sh = vld1q_s32(p->shift + oc);
        } else {
            m = vdupq_n_s32(p->mult[0]);
            sh = vdupq_n_s32(p->shift[0]);
        }
        if (TC_ONNX_VARIANT && vmaxvq_s32(31, sh) > 31) {
            vst1q_s32(a, acc);
            tc_fc_out(p, a, oc, 4, o + oc); /* (the sums hold the bias already) */
            continue;
        }
        acc = vaddq_n_s32(tc_mve_requant(acc, m, sh), p->out_offset);
        vstrbq_s32(o + oc, vminq_s32(vmaxq_s32(acc, lo), hi));
    }
    if (oc < OC) {
        const int32_t n = OC - oc, c2 = -128 * tc_fc_xsum(x, D);
        int32_t a[4], k;
        for (k = 0; k < n; k++) {
            a[k] = p->bias_eff[oc + k] + c2;
        }
        tc_fc_dotq(x, w, G, r, n, a);
        tc_fc_out(p, a, oc, n, o + oc);
    }
}
#endif

void tc_fc_s8(const tc_fc_params_t *p, const int8_t *in, int8_t *out)
{
    const int32_t D = p->depth, OC = p->out_c;
    int32_t b;
#if defined(__ARM_ARCH_6M__)
    tc_fc_s8_m0(p, in, out); /* tc_fully_connected_m0.c */
    return;
#endif
    for (b = 0; b < p->batches; b++) {
        const int8_t *x = in + b * D;
        int8_t *o = out + b * OC;
#if TC_MVE
        if ((p->depth & 3) == 0) {
            tc_fc_row_mve(p, x, o);
            continue;
        }
#endif
#if TC_DSP
        tc_fc_row_dsp(p, x, o);
#else
        const int32_t G = D >> 2, r = D & 3, corr = -128 * tc_fc_xsum(x, D);
        const uint8_t *w = p->weights;
        int32_t oc, k;
        for (oc = 0; oc < OC; oc += 4) {
            const int32_t n = OC - oc < 4 ? OC - oc : 4;
            int32_t a[4];
            for (k = 0; k < n; k++) {
                a[k] = p->bias_eff[oc + k] + corr;
            }
            tc_fc_dotq(x, w, G, r, n, a);
            w += n * D;
            tc_fc_out(p, a, oc, n, o + oc);
        }
#endif
    }
}

void tc_fc_s16(const tc_fc_s16_params_t *p, const int16_t *in, int16_t *out)
{
    const int32_t D = p->depth, OC = p->out_c, qs = p->per_channel ? 1 : 0;
    int32_t b, oc;
    for (b = 0; b < p->batches; b++) {
        const int16_t *x = in + b * D;
        for (oc = 0; oc < OC; oc++) {
            const int64_t acc = tc_dot_s16_s8(x, p->weights + oc * D, D, 1) + p->bias[oc];
            out[b * OC + oc] =
                tc_out_s16(acc, p->rm[oc * qs], p->ts[oc * qs], p->act_min, p->act_max);
        }
    }
}
