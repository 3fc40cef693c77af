/* tinycompile runtime: FULLY_CONNECTED, int8, the ARMv6-M (Cortex-M0/M0+) path (tc_fc_s8_m0,
 * entered from tc_fc_s8 in tc_fully_connected.c on __ARM_ARCH_6M__).
 *
 * Same arithmetic as tc_fully_connected.c (TFLM's reference FullyConnected): per output the
 * int8 dot product from bias_eff, then tc_requant (on ARMv6-M tc_qmath.h's tc_requant16),
 * output zero point, clamp. The weights are the compiler's layout (tc_fully_connected.h): quads
 * of four output channels interleaved by groups of four depth values, bytes u = w + 128, so
 * each input row's 128 * sum(x) is subtracted from the start values (the sum a word of four
 * values at a time, tc_fc_m0_xsum). Thumb-1 has LDRSB only with a register offset, but LDRB
 * with an immediate one (0..31): tc_fc_m0_dot4 reads two groups of a quad (32 bytes) from one
 * pointer, each input value once (LDRSB at a constant register offset 0..3) for four LDRB, four
 * MULS and four ADDs into r8-r11: 13 instructions per four MACs, plus five per two groups (on
 * TFLite's layout it was 14.5 per four MACs). The depth % 4 last values, the channels of a
 * last partial quad and other cores (which never call it) take C loops.
 */
#include <stdint.h>

#include "tc_fully_connected.h"
#include "tc_m0.h"

#if defined(__ARM_ARCH_6M__)
/* One input value j of a group at byte offset G of the weights: x[j] (r0 + r(2 + j), constant
 * registers 0..3) times the four channels' bytes G + 4k + j. */
#define TC_FC_M0_ELEM(rj, o0, o1, o2, o3)                                                       \
    "ldrsb r6, [r0, " rj "]\n\t"                                                                \
    "ldrb r7, [r1, #" o0 "]\n\t"                                                                \
    "muls r7, r6\n\t"                                                                           \
    "add r8, r7\n\t"                                                                            \
    "ldrb r7, [r1, #" o1 "]\n\t"                                                                \
    "muls r7, r6\n\t"                                                                           \
    "add r9, r7\n\t"                                                                            \
    "ldrb r7, [r1, #" o2 "]\n\t"                                                                \
    "muls r7, r6\n\t"                                                                           \
    "add r10, r7\n\t"                                                                           \
    "ldrb r7, [r1, #" o3 "]\n\t"                                                                \
    "muls r7, r6\n\t"                                                                           \
    "add r11, r7\n\t"
/* a[k] += the groups part of a full quad: `groups` groups of x (four int8 each) and w (16
 * bytes each). Naked (AAPCS: x, w, groups, a in r0-r3): r0 x, r1 w, r2-r5 the constants
 * 0..3, r6 the input value, r7 the product, r8-r11 the sums, r12 the input's end; a saved on
 * the stack. */
__attribute__((naked)) static void tc_fc_m0_dot4(const int8_t *x TC_M0_ARG,
                                                 const uint8_t *w TC_M0_ARG,
                                                 int32_t groups TC_M0_ARG, int32_t *a TC_M0_ARG)
{
    __asm__(".syntax unified\n\t"
            "push {r4, r5, r6, r7, lr}\n\t"
            "mov r4, r8\n\t"
            "mov r5, r9\n\t"
            "mov r6, r10\n\t"
            "mov r7, r11\n\t"
            "push {r3, r4, r5, r6, r7}\n\t"
            "cmp r2, #0\n\t"
            "bgt 4f\n\t"
            "b 2f\n" /* (a conditional branch does not reach) */
            "4:\n\t"
            "ldr r4, [r3, #0]\n\t"
            "mov r8, r4\n\t"
            "ldr r4, [r3, #4]\n\t"
            "mov r9, r4\n\t"
            "ldr r4, [r3, #8]\n\t"
            "mov r10, r4\n\t"
            "ldr r4, [r3, #12]\n\t"
            "mov r11, r4\n\t"
            "lsls r4, r2, #2\n\t"
            "adds r4, r0, r4\n\t"
            "mov r12, r4\n\t" /* the input's end */
            "lsls r7, r2, #31\n\t" /* odd number of groups */
            "movs r2, #0\n\t"
            "movs r3, #1\n\t"
            "movs r4, #2\n\t"
            "movs r5, #3\n\t"
            "cmp r7, #0\n\t"
            "beq 1f\n\t"
            "subs r1, #16\n\t" /* odd: enter at the second group of a pass */
            "b 3f\n"
            "1:\n\t"
            TC_FC_M0_ELEM("r2", "0", "4", "8", "12")
            TC_FC_M0_ELEM("r3", "1", "5", "9", "13")
            TC_FC_M0_ELEM("r4", "2", "6", "10", "14")
            TC_FC_M0_ELEM("r5", "3", "7", "11", "15")
            "adds r0, #4\n"
            "3:\n\t"
            TC_FC_M0_ELEM("r2", "16", "20", "24", "28")
            TC_FC_M0_ELEM("r3", "17", "21", "25", "29")
            TC_FC_M0_ELEM("r4", "18", "22", "26", "30")
            TC_FC_M0_ELEM("r5", "19", "23", "27", "31")
            "adds r0, #4\n\t"
            "adds r1, #32\n\t"
            "cmp r0, r12\n\t"
            "bne 1b\n\t"
            "ldr r3, [sp, #0]\n\t"
            "mov r4, r8\n\t"
            "str r4, [r3, #0]\n\t"
            "mov r4, r9\n\t"
            "str r4, [r3, #4]\n\t"
            "mov r4, r10\n\t"
            "str r4, [r3, #8]\n\t"
            "mov r4, r11\n\t"
            "str r4, [r3, #12]\n"
            "2:\n\t"
            "pop {r3, r4, r5, r6, r7}\n\t"
            "mov r8, r4\n\t"
            "mov r9, r5\n\t"
            "mov r10, r6\n\t"
            "mov r11, r7\n\t"
            "pop {r4, r5, r6, r7, pc}\n\t");
}
#undef TC_FC_M0_ELEM
#else
/* The same sums in C (other cores never call it; kept so the file builds everywhere). */
static void tc_fc_m0_dot4(const int8_t *x, const uint8_t *w, int32_t groups, int32_t *a)
{
    int32_t g, k;
    for (g = 0; g < groups; g++, x += 4) {
        for (k = 0; k < 4; k++, w += 4) {
            a[k] += x[0] * w[0] + x[1] * w[1] + x[2] * w[2] + x[3] * w[3];
        }
    }
}
#endif

/* sum(x[0 .. n - 1]): words of four bytes where x is aligned (ARMv6-M traps unaligned word
 * loads), flipped to unsigned (x + 128) and summed in two 16-bit lanes (at most 64 words, so
 * the lanes stay below 2^16), then the bytes left. */
static int32_t tc_fc_m0_xsum(const int8_t *x, int32_t n)
{
    int32_t s = 0;
    if (((uintptr_t)x & 3u) == 0) {
        while (n >= 4) {
            const uint32_t *xw = (const uint32_t *)(const void *)x;
            int32_t words = n >> 2, k;
            uint32_t lanes = 0;
            if (words > 64) {
                words = 64;
            }
            for (k = 0; k < words; k++) {
                const uint32_t v = xw[k] ^ 0x80808080u;
                lanes += (v & 0x00FF00FFu) + ((v >> 8) & 0x00FF00FFu);
            }
            s += (int32_t)((lanes & 0xFFFFu) + (lanes >> 16)) - 512 * words;
            x += 4 * words;
            n -= 4 * words;
        }
    }
    for (; n > 0; n--) {
        s += *x++;
    }
    return s;
}

/* a[k] += the last r < 4 inputs xt times channel k's r weights (from w, channel after
 * channel), k < n. Out of line, shared by full and partial quads (in place of the full quads'
 * loop it made GCC allocate the layer's main loop worse). */
__attribute__((noinline)) static void tc_fc_m0_tail(const int8_t *xt, const uint8_t *w,
                                                    int32_t r, int32_t n, int32_t *a)
{
    int32_t k, i;
    for (k = 0; k < n; k++, w += r) {
        int32_t t = a[k];
        for (i = 0; i < r; i++) {
            t += xt[i] * w[i];
        }
        a[k] = t;
    }
}

void tc_fc_s8_m0(const tc_fc_params_t *p, const int8_t *in, int8_t *out)
{
    const int32_t D = p->depth, OC = p->out_c, G = D >> 2, r = D & 3;
    const int32_t qs = p->per_channel ? 1 : 0;
    const int32_t lo = p->act_min, hi = p->act_max, oo = p->out_offset;
    int32_t b, oc, k, g;
    for (b = 0; b < p->batches; b++) {
        const int8_t *x = in + b * D;
        int8_t *o = out + b * OC;
        const int32_t corr = -128 * tc_fc_m0_xsum(x, D);
        for (oc = 0; oc + 3 < OC; oc += 4) {
            const int32_t *be = p->bias_eff + oc;
            const uint8_t *w = p->weights + oc * D + 16 * G;
            int32_t a[4];
            a[0] = be[0] + corr;
            a[1] = be[1] + corr;
            a[2] = be[2] + corr;
            a[3] = be[3] + corr;
            tc_fc_m0_dot4(x, p->weights + oc * D, G, a);
            if (r) {
                tc_fc_m0_tail(x + 4 * G, w, r, 4, a);
            }
            /* per tensor the compiler repeats the multiplier and shift four times
             * (tc_fully_connected.h) */
            tc_m0_out4(a, p->mult + oc * qs, p->shift + oc * qs, oo, lo, hi, o + oc);
        }
        if (oc < OC) { /* a partial quad of n channels: groups of 4n bytes, then the tails */
            const int32_t n = OC - oc;
            const uint8_t *w = p->weights + oc * D;
            int32_t a[4];
            for (k = 0; k < n; k++) {
                int32_t acc = p->bias_eff[oc + k] + corr;
                const uint8_t *wk = w + 4 * k;
                for (g = 0; g < G; g++, wk += 4 * n) {
                    const int8_t *xg = x + 4 * g;
                    acc += xg[0] * wk[0] + xg[1] * wk[1] + xg[2] * wk[2] + xg[3] * wk[3];
                }
                a[k] = acc;
            }
            if (r) {
                tc_fc_m0_tail(x + 4 * G, w + 4 * n * G, r, n, a);
            }
            for (k = 0; k < n; k++) {
                o[oc + k] = tc_m0_out1(a[k], p->mult[(oc + k) * qs], p->shift[(oc + k) * qs],
                                       oo, lo, hi);
            }
        }
    }
}
