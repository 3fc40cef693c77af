/* tinycompile runtime: what a streamed segment (tinycompile/ops/stream.py) needs beside the
 * layers' own kernels. A segment runs several layers one output row at a time; each layer's
 * rows live in a window of a few rows that slides down its tensor, kept in row order: when a
 * new row would not fit, the rows still needed move to the window's start (`tc_rows_down`).
 * Every offset and count is computed at compile time (the segment's step table).
 */
#ifndef TC_STREAM_H
#define TC_STREAM_H

#include <stdint.h>

/* Move `n` bytes from `win + from` to `win` (from > 0: a forward copy, overlap allowed). */
void tc_rows_down(uint8_t *win, uint32_t from, uint32_t n);

#endif /* TC_STREAM_H */
