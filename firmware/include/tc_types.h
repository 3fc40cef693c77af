/* tinycompile runtime: descriptions of a generated model's input and output tensors. */
#ifndef TC_TYPES_H
#define TC_TYPES_H

#include <stdint.h>

enum { TC_INT8 = 1, TC_UINT8 = 2, TC_INT16 = 3, TC_INT32 = 4, TC_FLOAT32 = 5, TC_BOOL = 6 };

typedef struct {
    uint32_t bytes;
    uint8_t dtype;
    uint8_t rank;
    int32_t shape[6];
    float scale;
    int32_t zero_point;
} tc_tensor_info_t;

#ifndef TC_WEIGHTS_ATTR
#if defined(__ELF__) || defined(__arm__)
#define TC_WEIGHTS_ATTR __attribute__((aligned(8), section(".rodata.tc_weights")))
#else
#define TC_WEIGHTS_ATTR __attribute__((aligned(8)))
#endif
#endif

#endif /* TC_TYPES_H */
