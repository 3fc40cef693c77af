/* tinycompile runtime: QUANTIZE between int8 and int16 (requantization).
 * Kernels: firmware/kernels/tc_requantize.c.
 *
 * Semantics of TensorFlow Lite Micro's reference_ops::Requantize (quantize_common.cc):
 * out = clamp(MultiplyByQuantizedMultiplier(in - in_zp, mult, shift) + out_zp) to the output
 * type. int8 -> int16 is a 256-entry table computed at compile time; the other pairs compute.
 */
#ifndef TC_REQUANTIZE_H
#define TC_REQUANTIZE_H

#include <stdint.h>

typedef struct {
    int32_t size;
    int32_t in_zp;
    int32_t mult, shift;
    int32_t out_zp;
    int32_t out_min, out_max;
} tc_requantize_params_t;

typedef struct {
    int32_t size;
    const int16_t *lut; /* 256 entries, lut[(uint8_t)x] */
} tc_lut16_params_t;

void tc_requantize_s16_s8(const tc_requantize_params_t *p, const int16_t *in, int8_t *out);
/* may run in place (out == in) */
void tc_requantize_s16_s16(const tc_requantize_params_t *p, const int16_t *in, int16_t *out);
/* out[i] = lut[(uint8_t)in[i]] */
void tc_lut_s8_s16(const tc_lut16_params_t *p, const int8_t *in, int16_t *out);
/* The int32 pairs TFLM's quantize.cc allows: int8/int16 -> int32 walk backwards (the output may
 * start where the input does), int32 -> int8/int16 forwards. */
void tc_requantize_s8_s32(const tc_requantize_params_t *p, const int8_t *in, int32_t *out);
void tc_requantize_s16_s32(const tc_requantize_params_t *p, const int16_t *in, int32_t *out);
void tc_requantize_s32_s8(const tc_requantize_params_t *p, const int32_t *in, int8_t *out);
void tc_requantize_s32_s16(const tc_requantize_params_t *p, const int32_t *in, int16_t *out);

#endif /* TC_REQUANTIZE_H */
