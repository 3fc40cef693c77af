/* tinycompile runtime: MUL, int8, with broadcasting (tc_mul_s8; see tc_elementwise.h). The
 * int16 MUL and ADD are in tc_elementwise.c.
 *
 * Matches TensorFlow Lite Micro's reference kernel (mul.cc with reference/integer_ops/mul.h):
 * t = (x + in1_offset) * (y + in2_offset), requantized by MultiplyByQuantizedMultiplier, plus
 * the output offset, clamped. The portable path does exactly that with tc_requant. The fast paths
 * run forms of the same arithmetic that the compiler recomputes over all 65,536 input pairs
 * (tinycompile/ops/mul_fast.py; a form missing from the params leaves the portable path):
 *   - Cortex-M55 (Helium, TC_MVE; any params with out_shift <= 15, no form needed): 8 elements
 *     per vector, the offset inputs in int16 lanes multiplied into two int32 halves
 *     (VMULLB/VMULLT), TFLM's requantization step by step (tc_mve.h), narrowed back with
 *     saturation, offset, clamped; the row's tail predicated; 2.5 instructions per element;
 *   - Cortex-M4/M7 (dsp_r > 0): four elements per word, SXTAB16 splitting them into offset
 *     16-bit lanes, SMULBB/SMULTT giving 2t, SMMLAR with the sign of t giving TFLM's rounding
 *     (tc_mul_rq), SSAT16 and a bytewise clamp; 8.5 instructions per element;
 *   - ARMv6-M (m0_r > 0): the 32-bit form (the multiplier halved and split in two 15-bit halves,
 *     mul_fast.py) in a naked loop, all fourteen registers in use; 24 instructions per element;
 *   - other cores (the host's tests) run the same 32-bit form in C.
 * The fast paths take whole runs of rows: contiguous rows of the non-broadcast operand, the other
 * one contiguous along the row (and repeated or advancing per row) or one value per row
 * (tc_mul_rows); other broadcasts go row by row through tc_bcast_walk.
 */
#include "tc_broadcast.h"
#include "tc_elementwise.h"
#include "tc_kernel_util.h"
#include "tc_mve.h"
#include "tc_qmath.h"

/* The portable row: TFLM's arithmetic. */
static void tc_mul_row(const void *vp, int32_t n, const int8_t *x, int32_t sx, const int8_t *y,
                       int32_t sy, int8_t *out)
{
    const tc_mul_params_t *p = (const tc_mul_params_t *)vp;
    int32_t i;

    for (i = 0; i < n; ++i) {
        int32_t a = p->in1_offset + x[i * sx];
        int32_t b = p->in2_offset + y[i * sy];
        int32_t raw = tc_requant(a * b, p->out_multiplier, p->out_shift) + p->out_offset;
        out[i] = (int8_t)tc_clamp(raw, p->act_min, p->act_max);
    }
}

#if !defined(TC_PORTABLE)

#if TC_MVE
/* tc_mul_mve8's constants, read from the params once (the stores could alias them). */
typedef struct {
    int32_t m, sh, oo;
    int16x8_t lo, hi;
} tc_mul_mve_t;

/* tc_mve_requant_n, for a shift known to be negative when neg (the usual MUL: no branch). */
TC_INLINE int32x4_t tc_mul_mve_rq(int32x4_t t, int32_t m, int32_t sh, const int neg)
{
    if (!neg) {
        return tc_mve_requant_n(t, m, sh);
    }
    t = vqrdmulhq_n_s32(t, m);
    t = vqaddq_s32(t, vshrq_n_s32(t, 31));
    return vrshlq_n_s32(t, sh);
}

/* Up to 8 elements (the lanes of pr when tail): x + o1 and the second operand (bv: the
 * offset values of y, or one value in every lane) in int16 lanes, their products in two int32
 * halves (VMULLB / VMULLT: even and odd elements), each requantized as TFLM does
 * (tc_mve_requant_n), narrowed back in order with saturation (VQMOVNB / VQMOVNT: a result
 * beyond int16 stays beyond the clamp), the output offset added (saturating), clamped, stored.
 * About 20 instructions per 8 elements. */
TC_INLINE void tc_mul_mve8(const tc_mul_mve_t *k, const int8_t *x, int16_t o1, int16x8_t bv,
                           int8_t *out, mve_pred16_t pr, const int tail, const int neg)
{
    const int16x8_t a = vaddq_n_s16(tail ? vldrbq_z_s16(x, pr) : vldrbq_s16(x), o1);
    const int32x4_t e = tc_mul_mve_rq(vmullbq_int_s16(a, bv), k->m, k->sh, neg);
    const int32x4_t o = tc_mul_mve_rq(vmulltq_int_s16(a, bv), k->m, k->sh, neg);
    int16x8_t r = vqmovntq_s32(vqmovnbq_s32(vdupq_n_s16(0), e), o);
    r = vminq_s16(vmaxq_s16(vqaddq_n_s16(r, (int16_t)k->oo), k->lo), k->hi);
    if (tail) {
        vstrbq_p_s16(out, r, pr);
    } else {
        vstrbq_s16(out, r);
    }
}

/* The rows of tc_mul_mve_rows, with the second operand's form (one) and the shift's sign
 * (neg) fixed at compile time. */
TC_INLINE void tc_mul_mve_loop(const tc_mul_mve_t *k, int32_t rows, int32_t n, const int8_t *x,
                               int32_t o1, const int8_t *y, int32_t o2, int32_t ry, int8_t *out,
                               const int one, const int neg)
{
    const int16_t a1 = (int16_t)o1, a2 = (int16_t)o2;
    for (; rows > 0; --rows, y += ry) {
        const int8_t *yp = y;
        const int16x8_t b1 = vdupq_n_s16((int16_t)(y[0] + o2));
        int32_t i = n;
        for (; i >= 8; i -= 8, x += 8, out += 8) {
            int16x8_t bv = b1;
            if (!one) {
                bv = vaddq_n_s16(vldrbq_s16(yp), a2);
                yp += 8;
            }
            tc_mul_mve8(k, x, a1, bv, out, 0, 0, neg);
        }
        if (i > 0) {
            const mve_pred16_t pr = vctp16q((uint32_t)i);
            const int16x8_t bv = one ? b1 : vaddq_n_s16(vldrbq_z_s16(yp, pr), a2);
            tc_mul_mve8(k, x, a1, bv, out, pr, 1, neg);
            x += i;
            out += i;
        }
    }
}

/* A vector y repeated per row (b1x1xC, n a multiple of 8): column by column, each 8 lanes of
 * y offset once, then that column of every row (rows n bytes apart). */
TC_INLINE void tc_mul_mve_cols(const tc_mul_mve_t *k, int32_t rows, int32_t n, const int8_t *x,
                               int32_t o1, const int8_t *y, int32_t o2, int8_t *out,
                               const int neg)
{
    int32_t j, r;
    for (j = 0; j < n; j += 8) {
        const int16x8_t bv = vaddq_n_s16(vldrbq_s16(y + j), (int16_t)o2);
        const int8_t *xp = x + j;
        int8_t *op = out + j;
        for (r = 0; r < rows; r++, xp += n, op += n) {
            tc_mul_mve8(k, xp, (int16_t)o1, bv, op, 0, 0, neg);
        }
    }
}

/* tc_mul_rows on Helium: rows x n elements, x (offset o1) and out contiguous, y (offset o2)
 * contiguous along the row (one == 0) or one value per row (one == 1), advancing ry bytes per
 * row; 8 elements per step, the row's last 1 to 7 predicated (a vector repeated per row whose
 * length is a multiple of 8: tc_mul_mve_cols). */
static void tc_mul_mve_rows(const tc_mul_params_t *p, int32_t rows, int32_t n, const int8_t *x,
                            int32_t o1, const int8_t *y, int32_t o2, int one, int32_t ry,
                            int8_t *out)
{
    tc_mul_mve_t k;
    k.m = p->out_multiplier;
    k.sh = p->out_shift;
    k.oo = p->out_offset;
    k.lo = vdupq_n_s16((int16_t)p->act_min);
    k.hi = vdupq_n_s16((int16_t)p->act_max);
    if (!one && ry == 0 && rows > 1 && (n & 7) == 0) {
        if (k.sh < 0) {
            tc_mul_mve_cols(&k, rows, n, x, o1, y, o2, out, 1);
        } else {
            tc_mul_mve_cols(&k, rows, n, x, o1, y, o2, out, 0);
        }
    } else if (k.sh < 0) {
        if (one) {
            tc_mul_mve_loop(&k, rows, n, x, o1, y, o2, ry, out, 1, 1);
        } else {
            tc_mul_mve_loop(&k, rows, n, x, o1, y, o2, ry, out, 0, 1);
        }
    } else if (one) {
        tc_mul_mve_loop(&k, rows, n, x, o1, y, o2, ry, out, 1, 0);
    } else {
        tc_mul_mve_loop(&k, rows, n, x, o1, y, o2, ry, out, 0, 0);
    }
}
#endif

#if TC_DSP && !TC_MVE
/* a + SXTB16(v ror 8): bytes 1 and 3 of v sign-extended and added to a's 16-bit lanes. */
TC_INLINE uint32_t tc_sxtab16_hi(uint32_t a, uint32_t v)
{
    uint32_t r;
    __asm__("sxtab16 %0, %1, %2, ror #8" : "=r"(r) : "r"(a), "r"(v));
    return r;
}

/* SMULBB / SMULTT: products of the bottom / top 16-bit lanes. */
TC_INLINE int32_t tc_smulbb(uint32_t a, uint32_t b)
{
    int32_t r;
    __asm__("smulbb %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));
    return r;
}

TC_INLINE int32_t tc_smultt(uint32_t a, uint32_t b)
{
    int32_t r;
    __asm__("smultt %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));
    return r;
}

/* TFLM's requantization of t from t2 = 2t, before the output clamp: SMMLAR(2t, m, q) is
 * q + SaturatingRoundingDoublingHighMul(t, m) with q = 2^(r-1) + out_offset * 2^r, and adding
 * the sign of t before the shift by r = -shift rounds as RoundingDivideByPOT (tc_dsp.h,
 * tc_rq2_s8; mul_fast.py recomputes it for every input pair). */
TC_INLINE int32_t tc_mul_rq(int32_t t2, int32_t m, int32_t q, int32_t r)
{
    int32_t v;
    __asm__("smmlar %0, %1, %2, %3" : "=r"(v) : "r"(t2), "r"(m), "r"(q));
    return (v + (t2 >> 31)) >> r;
}

/* Four outputs from a word of x and the second operand's lanes (ve: elements 0 and 2, vo: 1
 * and 3, each 2 (v + o2)), clamped bytewise to [lo4, hi4] when clamp. */
TC_INLINE uint32_t tc_mul_dsp_word(uint32_t a, uint32_t ve, uint32_t vo, uint32_t O1, int32_t m,
                                   int32_t q, int32_t r, uint32_t lo4, uint32_t hi4,
                                   const int clamp)
{
    const uint32_t ue = (uint32_t)__sxtab16((int16x2_t)O1, (int8x4_t)a);
    const uint32_t uo = tc_sxtab16_hi(O1, a);
    uint32_t e, o, w, t;
    e = tc_pkhbt16((uint32_t)tc_mul_rq(tc_smulbb(ue, ve), m, q, r),
                   (uint32_t)tc_mul_rq(tc_smultt(ue, ve), m, q, r));
    o = tc_pkhbt16((uint32_t)tc_mul_rq(tc_smulbb(uo, vo), m, q, r),
                   (uint32_t)tc_mul_rq(tc_smultt(uo, vo), m, q, r));
    e = (uint32_t)__ssat16((int16x2_t)e, 8);
    o = (uint32_t)__ssat16((int16x2_t)o, 8);
    w = (e & 0x00FF00FFu) | ((o & 0x00FF00FFu) << 8);
    if (clamp) {
        __asm__("ssub8 %[t], %[w], %[l]\n\tsel %[w], %[w], %[l]\n\t"
                "ssub8 %[t], %[w], %[h]\n\tsel %[w], %[h], %[w]"
                : [w] "+r"(w), [t] "=&r"(t)
                : [l] "r"(lo4), [h] "r"(hi4)
                : "cc");
    }
    return w;
}

/* ve, vo of a word of y: bytes split by SXTAB16 onto the offset O2, doubled. */
TC_INLINE void tc_mul_dsp_lanes(uint32_t b, uint32_t O2, uint32_t *ve, uint32_t *vo)
{
    const uint32_t e = (uint32_t)__sxtab16((int16x2_t)O2, (int8x4_t)b);
    const uint32_t o = tc_sxtab16_hi(O2, b);
    *ve = (uint32_t)__sadd16((int16x2_t)e, (int16x2_t)e);
    *vo = (uint32_t)__sadd16((int16x2_t)o, (int16x2_t)o);
}

/* n elements of a row, x contiguous, y contiguous (one == 0) or one value (one == 1: vv holds
 * 2 (v + o2) in both lanes). */
TC_INLINE void tc_mul_dsp_row(const int8_t *x, const int8_t *y, int8_t *out, int32_t n,
                              uint32_t O1, uint32_t O2, uint32_t vv, int32_t m, int32_t q,
                              int32_t r, uint32_t lo4, uint32_t hi4, int32_t lo, int32_t hi,
                              const int clamp, const int one)
{
    const int8_t *const xw = x + (n & ~3), *const xe = x + n;
    while (x < xw) {
        uint32_t ve = vv, vo = vv, w;
        if (!one) {
            tc_mul_dsp_lanes(tc_ld32(y), O2, &ve, &vo);
            y += 4;
        }
        w = tc_mul_dsp_word(tc_ld32(x), ve, vo, O1, m, q, r, lo4, hi4, clamp);
        memcpy(out, &w, 4);
        x += 4;
        out += 4;
    }
    for (; x < xe; ++x, ++out) {
        const int32_t v2 = one ? (int32_t)(int16_t)vv : 2 * ((int32_t)(int16_t)O2 + *y++);
        const int32_t u = (int32_t)(int16_t)O1 + *x;
        *out = (int8_t)tc_clamp(__ssat(tc_mul_rq(u * v2, m, q, r), 8), lo, hi);
    }
}

/* rows rows of n (a multiple of 4) elements against one vector whose lanes vl holds (two words
 * per word of the vector): x and out contiguous throughout. */
TC_INLINE void tc_mul_dsp_vec(const int8_t *x, const uint32_t *vl, int8_t *out, int32_t rows,
                              int32_t n, uint32_t O1, int32_t m, int32_t q, int32_t r,
                              uint32_t lo4, uint32_t hi4, const int clamp)
{
    const uint32_t *const ve = vl + (n >> 1);
    for (; rows > 0; --rows) {
        const uint32_t *v = vl;
        do {
            const uint32_t w = tc_mul_dsp_word(tc_ld32(x), v[0], v[1], O1, m, q, r, lo4, hi4,
                                               clamp);
            memcpy(out, &w, 4);
            x += 4;
            out += 4;
            v += 2;
        } while (v < ve);
    }
}

/* The longest vector (b1x1xC) whose lanes tc_mul_dsp_rows prepares once on the stack. */
#define TC_MUL_VEC_MAX 256

/* tc_mul_rows on Cortex-M4/M7: the clamp and the second operand's form chosen once. */
static void tc_mul_dsp_rows(const tc_mul_params_t *p, int32_t rows, int32_t n, const int8_t *x,
                            int32_t o1, const int8_t *y, int32_t o2, int one, int32_t ry,
                            int8_t *out)
{
    const int32_t lo = p->act_min, hi = p->act_max, m = p->out_multiplier;
    const int32_t q = p->dsp_q, r = p->dsp_r;
    const uint32_t lo4 = (uint8_t)lo * 0x01010101u, hi4 = (uint8_t)hi * 0x01010101u;
    const uint32_t O1 = (uint16_t)o1 * 0x10001u, O2 = (uint16_t)o2 * 0x10001u;
    const int clamp = lo > -128 || hi < 127;
    if (!one && ry == 0 && rows > 1 && n > 0 && n <= TC_MUL_VEC_MAX && (n & 3) == 0) {
        /* a vector repeated per row (b1x1xC): its lanes once */
        uint32_t vl[TC_MUL_VEC_MAX / 2];
        int32_t i;
        for (i = 0; i < n; i += 4) {
            tc_mul_dsp_lanes(tc_ld32(y + i), O2, &vl[i >> 1], &vl[(i >> 1) + 1]);
        }
        if (clamp) {
            tc_mul_dsp_vec(x, vl, out, rows, n, O1, m, q, r, lo4, hi4, 1);
        } else {
            tc_mul_dsp_vec(x, vl, out, rows, n, O1, m, q, r, lo4, hi4, 0);
        }
        return;
    }
    for (; rows > 0; --rows, x += n, out += n, y += ry) {
        const uint32_t vv = (uint16_t)(2 * (y[0] + o2)) * 0x10001u;
        if (one) {
            if (clamp) {
                tc_mul_dsp_row(x, y, out, n, O1, O2, vv, m, q, r, lo4, hi4, lo, hi, 1, 1);
            } else {
                tc_mul_dsp_row(x, y, out, n, O1, O2, vv, m, q, r, lo4, hi4, lo, hi, 0, 1);
            }
        } else if (clamp) {
            tc_mul_dsp_row(x, y, out, n, O1, O2, vv, m, q, r, lo4, hi4, lo, hi, 1, 0);
        } else {
            tc_mul_dsp_row(x, y, out, n, O1, O2, vv, m, q, r, lo4, hi4, lo, hi, 0, 0);
        }
    }
}
#endif

#if defined(__ARM_ARCH_6M__)
/* tc_mul_m0_rows' arguments (field offsets are hard-coded in its assembly: all 4 bytes). */
typedef struct {
    const int8_t *x;  /* 0 */
    const int8_t *y;  /* 4 */
    int8_t *out;      /* 8 */
    int32_t n;        /* 12: elements per row, >= 1 */
    int32_t rows;     /* 16: >= 1 */
    int32_t ry;       /* 20: bytes y advances per row */
    int32_t one;      /* 24: 1: one y value per row */
    int32_t o1, o2;   /* 28, 32 */
    int32_t pl, ph;   /* 36, 40 */
    int32_t rm, rh;   /* 44, 48 */
    int32_t r;        /* 52 */
    int32_t lo, hi;   /* 56, 60 */
} tc_mul_m0_t;
typedef char tc_mul_m0_layout[(sizeof(tc_mul_m0_t) == 64) ? 1 : -1];

/* One element of the 32-bit form (mul_fast.py): r0 x, r1 y, r2 out (at their rows' ends),
 * r3 the index counting up to zero, r7 the final shift, r8 o1, r9 o2 (or, with one value per
 * row, that value plus o2), r10 rm, r11 rh, r12 lo, lr hi, pl and ph at [sp] and [sp, #4]:
 * t = (x + o1) * v; y = t * ph + ((t * pl) >> 15) + rm; out = clamp(((y >> 15) + rh + (t >> 31))
 * >> r). 24 instructions (23 with one value per row). */
#define TC_MUL_M0_ELEM(LOADV)                                                                   \
    "ldrsb r4, [r0, r3]\n\t"                                                                    \
    "add r4, r8\n\t" LOADV "muls r5, r4, r5\n\t"                                                \
    "ldr r4, [sp, #0]\n\t"                                                                      \
    "muls r4, r5, r4\n\t"                                                                       \
    "asrs r4, r4, #15\n\t"                                                                      \
    "ldr r6, [sp, #4]\n\t"                                                                      \
    "muls r6, r5, r6\n\t"                                                                       \
    "adds r6, r6, r4\n\t"                                                                       \
    "add r6, r10\n\t"                                                                           \
    "asrs r6, r6, #15\n\t"                                                                      \
    "add r6, r11\n\t"                                                                           \
    "asrs r5, r5, #31\n\t"                                                                      \
    "adds r6, r6, r5\n\t"                                                                       \
    "asrs r6, r7\n\t"                                                                           \
    "cmp r6, r12\n\t"                                                                           \
    "bge 4f\n\t"                                                                                \
    "mov r6, r12\n"                                                                             \
    "4:\n\t"                                                                                    \
    "cmp r6, lr\n\t"                                                                            \
    "ble 5f\n\t"                                                                                \
    "mov r6, lr\n"                                                                              \
    "5:\n\t"                                                                                    \
    "strb r6, [r2, r3]\n\t"                                                                     \
    "adds r3, #1\n\t"

/* After a row: x and out move on by n, y by ry; loop while rows remain. */
#define TC_MUL_M0_NEXT(LABEL)                                                                   \
    "ldr r4, [sp, #8]\n\t"                                                                      \
    "adds r0, r0, r4\n\t"                                                                       \
    "adds r2, r2, r4\n\t"                                                                       \
    "ldr r4, [sp, #16]\n\t"                                                                     \
    "adds r1, r1, r4\n\t"                                                                       \
    "ldr r4, [sp, #12]\n\t"                                                                     \
    "subs r4, #1\n\t"                                                                           \
    "str r4, [sp, #12]\n\t"                                                                     \
    "bne " LABEL "\n\t"

/* Stack frame (24 bytes): pl, ph, n, rows left, ry, o2. */
__attribute__((naked, noinline)) static void tc_mul_m0_rows(const tc_mul_m0_t *k
                                                            __attribute__((unused)))
{
    __asm__(".syntax unified\n\t"
            "push {r4, r5, r6, r7, lr}\n\t"
            "mov r4, r8\n\t"
            "mov r5, r9\n\t"
            "mov r6, r10\n\t"
            "mov r7, r11\n\t"
            "push {r4, r5, r6, r7}\n\t"
            "sub sp, #24\n\t"
            "ldr r1, [r0, #36]\n\t"
            "str r1, [sp, #0]\n\t"
            "ldr r1, [r0, #40]\n\t"
            "str r1, [sp, #4]\n\t"
            "ldr r3, [r0, #12]\n\t"
            "str r3, [sp, #8]\n\t"
            "ldr r1, [r0, #16]\n\t"
            "str r1, [sp, #12]\n\t"
            "ldr r1, [r0, #20]\n\t"
            "str r1, [sp, #16]\n\t"
            "ldr r1, [r0, #32]\n\t"
            "str r1, [sp, #20]\n\t"
            "mov r9, r1\n\t"
            "ldr r1, [r0, #28]\n\t"
            "mov r8, r1\n\t"
            "ldr r1, [r0, #44]\n\t"
            "mov r10, r1\n\t"
            "ldr r1, [r0, #48]\n\t"
            "mov r11, r1\n\t"
            "ldr r1, [r0, #56]\n\t"
            "mov r12, r1\n\t"
            "ldr r1, [r0, #60]\n\t"
            "mov lr, r1\n\t"
            "ldr r7, [r0, #52]\n\t"
            "ldr r4, [r0, #24]\n\t"
            "ldr r1, [r0, #4]\n\t"
            "ldr r2, [r0, #8]\n\t"
            "ldr r0, [r0, #0]\n\t"
            "adds r0, r0, r3\n\t" /* x and out at their rows' ends, index -n .. -1 */
            "adds r2, r2, r3\n\t"
            "cmp r4, #0\n\t"
            "bne 6f\n\t"
            "adds r1, r1, r3\n" /* y contiguous along the row: at its end too */
            "1:\n\t"
            "ldr r3, [sp, #8]\n\t"
            "negs r3, r3\n"
            "2:\n\t" TC_MUL_M0_ELEM("ldrsb r5, [r1, r3]\n\tadd r5, r9\n\t")
            "bne 2b\n\t" TC_MUL_M0_NEXT("1b")
            "b 9f\n"
            "6:\n\t" /* one y value per row: v = y[0] + o2 in r9 */
            "movs r4, #0\n\t"
            "ldrsb r4, [r1, r4]\n\t"
            "ldr r5, [sp, #20]\n\t"
            "adds r4, r4, r5\n\t"
            "mov r9, r4\n\t"
            "ldr r3, [sp, #8]\n\t"
            "negs r3, r3\n"
            "7:\n\t" TC_MUL_M0_ELEM("mov r5, r9\n\t")
            "bne 7b\n\t" TC_MUL_M0_NEXT("6b")
            "9:\n\t"
            "add sp, #24\n\t"
            "pop {r4, r5, r6, r7}\n\t"
            "mov r8, r4\n\t"
            "mov r9, r5\n\t"
            "mov r10, r6\n\t"
            "mov r11, r7\n\t"
            "pop {r4, r5, r6, r7, pc}\n\t"
            ".syntax divided");
}
#else
/* The 32-bit form of one product t (mul_fast.py), in C: sums wrap as the assembly's do. */
TC_INLINE int32_t tc_mul_form(const tc_mul_params_t *p, int32_t t)
{
    const uint32_t y = (uint32_t)(t * p->m0_ph) + (uint32_t)((t * p->m0_pl) >> 15) +
                       (uint32_t)p->m0_rm;
    return (((int32_t)y >> 15) + p->m0_rh + (t >> 31)) >> p->m0_r;
}
#endif

/* rows x n elements: x (offset o1) and out contiguous, y (offset o2) contiguous along the row
 * (one == 0) or one value per row (one == 1), advancing ry bytes per row. */
static void tc_mul_rows(const tc_mul_params_t *p, int32_t rows, int32_t n, const int8_t *x,
                        int32_t o1, const int8_t *y, int32_t o2, int one, int32_t ry,
                        int8_t *out)
{
#if TC_MVE
    tc_mul_mve_rows(p, rows, n, x, o1, y, o2, one, ry, out);
#elif TC_DSP
    tc_mul_dsp_rows(p, rows, n, x, o1, y, o2, one, ry, out);
#elif defined(__ARM_ARCH_6M__)
    tc_mul_m0_t k;
    k.x = x;
    k.y = y;
    k.out = out;
    k.n = n;
    k.rows = rows;
    k.ry = ry;
    k.one = one;
    k.o1 = o1;
    k.o2 = o2;
    k.pl = p->m0_pl;
    k.ph = p->m0_ph;
    k.rm = p->m0_rm;
    k.rh = p->m0_rh;
    k.r = p->m0_r;
    k.lo = p->act_min;
    k.hi = p->act_max;
    if (n > 0 && rows > 0) {
        tc_mul_m0_rows(&k);
    }
#else
    int32_t i;
    for (; rows > 0; --rows, x += n, out += n, y += ry) {
        for (i = 0; i < n; ++i) {
            const int32_t t = (x[i] + o1) * (y[one ? 0 : i] + o2);
            out[i] = (int8_t)tc_clamp(tc_mul_form(p, t), p->act_min, p->act_max);
        }
    }
#endif
}

/* A walker row (inner strides 0 or 1) on the fast path: the operand with stride 1 as x. */
static void tc_mul_fast_row(const void *vp, int32_t n, const int8_t *x, int32_t sx,
                            const int8_t *y, int32_t sy, int8_t *out)
{
    const tc_mul_params_t *p = (const tc_mul_params_t *)vp;
    if (sx == 1) {
        tc_mul_rows(p, 1, n, x, p->in1_offset, y, p->in2_offset, sy == 0, 0, out);
    } else if (sy == 1) {
        tc_mul_rows(p, 1, n, y, p->in2_offset, x, p->in1_offset, 1, 0, out);
    } else {
        tc_mul_row(vp, n, x, sx, y, sy, out);
    }
}

/* Whether the fast path covers these params on this core. */
TC_INLINE int tc_mul_fast_ok(const tc_mul_params_t *p)
{
#if TC_MVE
    return p->out_shift <= 15; /* |t| < 2^16: t << out_shift stays in int32, as in tc_requant */
#elif TC_DSP
    return p->dsp_r > 0;
#else
    return p->m0_r > 0;
#endif
}
#endif

void tc_mul_s8(const tc_mul_params_t *p, const int8_t *in1, const int8_t *in2, int8_t *out)
{
#if !defined(TC_PORTABLE)
    if (tc_mul_fast_ok(p)) {
        const int32_t *d = p->dims, *s1 = p->stride1, *s2 = p->stride2;
        if (p->size <= 0) {
            return;
        }
        if (p->rank == 0) {
            tc_mul_rows(p, 1, p->size, in1, p->in1_offset, in2, p->in2_offset, 0, 0, out);
            return;
        }
        /* two loops, the outer one over contiguous rows of input 1 (or 2): the other operand
         * is a vector repeated per row (b1x1xC) or one value per row (per-pixel gates) */
        if (p->rank == 2 && d[1] > 0) {
            const int32_t n = d[1];
            if (s1[0] == n && s1[1] == 1 && s2[0] + s2[1] == 1) {
                tc_mul_rows(p, d[0], n, in1, p->in1_offset, in2, p->in2_offset, s2[1] == 0,
                            s2[0], out);
                return;
            }
            if (s2[0] == n && s2[1] == 1 && s1[0] + s1[1] == 1) {
                tc_mul_rows(p, d[0], n, in2, p->in2_offset, in1, p->in1_offset, s1[1] == 0,
                            s1[0], out);
                return;
            }
        }
        tc_bcast_walk(p->size, p->rank, p->dims, p->stride1, p->stride2, in1, in2, out,
                      tc_mul_fast_row, p);
        return;
    }
#endif
    tc_bcast_walk(p->size, p->rank, p->dims, p->stride1, p->stride2, in1, in2, out, tc_mul_row,
                  p);
}
