/* tinycompile runtime: the window move of streamed segments (see tc_stream.h). */
#include "tc_stream.h"

void tc_rows_down(uint8_t *win, uint32_t from, uint32_t n)
{
    const uint8_t *src = win + from;
    uint8_t *dst = win;
    if ((((uintptr_t)dst | (uintptr_t)src) & 3u) == 0u) {
        /* word by word, low addresses first: the source lies above the destination, so
         * every word is read before the copy reaches it */
        uint32_t *d = (uint32_t *)(void *)dst;
        const uint32_t *s = (const uint32_t *)(const void *)src;
        for (; n >= 4u; n -= 4u) {
            *d++ = *s++;
        }
        dst = (uint8_t *)d;
        src = (const uint8_t *)s;
    }
    while (n--) {
        *dst++ = *src++;
    }
}
