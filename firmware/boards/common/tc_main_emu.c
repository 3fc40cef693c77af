/* tinycompile board support: main() of emulator builds (QEMU, semihosting I/O).
 *
 * Runs the file-driven runner (tc_run_files(): tc_in.bin -> tc_out.bin in QEMU's working
 * directory) and returns its status, which becomes QEMU's exit status. Before and after, it
 * prints facts the host side parses from QEMU's console, one per line:
 *   tc-timer: overhead-ticks=N   ticks between two back-to-back tc_timer_read() calls
 *   tc-stack: used=N reserve=M   deepest stack use measured by painting, and the reserve
 *   tc-heap: used=N              bytes newlib's stdio took from the heap
 *   tc-refused: sample=S layer=L a layer refused its input (status 5, as TFLM's Invoke fails)
 */
#include <stdint.h>

#include "tc_board_io.h"
#include "tc_timer.h"

int tc_run_files(void);
extern uint32_t tc_refused_sample;
extern uint32_t tc_refused_layer;
void *_sbrk(int incr);
extern char end[];

static void tc_emu_fact(const char *prefix, uint32_t a, const char *mid, uint32_t b)
{
    char buf[64];
    unsigned n = 0;
    const char *parts[2] = {prefix, mid};
    uint32_t vals[2] = {a, b};
    for (int k = 0; k < 2 && parts[k]; k++) {
        for (const char *s = parts[k]; *s && n < sizeof(buf) - 13; s++) {
            buf[n++] = *s;
        }
        char digits[10];
        int d = 0;
        uint32_t v = vals[k];
        do {
            digits[d++] = (char)('0' + v % 10u);
            v /= 10u;
        } while (v);
        while (d) {
            buf[n++] = digits[--d];
        }
    }
    buf[n++] = '\n';
    buf[n] = 0;
    tc_semihost_write0(buf);
}

int main(void)
{
    tc_timer_init();
    uint32_t best = 0xFFFFFFFFu;
    for (int i = 0; i < 4; i++) {
        uint32_t a = tc_timer_read();
        uint32_t b = tc_timer_read();
        if (b - a < best) {
            best = b - a;
        }
    }
    tc_emu_fact("tc-timer: overhead-ticks=", best, 0, 0);
    int rc = tc_run_files();
    if (rc == 5) {
        tc_emu_fact("tc-refused: sample=", tc_refused_sample, " layer=", tc_refused_layer);
    }
    tc_emu_fact("tc-stack: used=", tc_stack_used(), " reserve=", tc_stack_reserve());
    tc_emu_fact("tc-heap: used=", (uint32_t)((char *)_sbrk(0) - end), 0, 0);
    return rc;
}
