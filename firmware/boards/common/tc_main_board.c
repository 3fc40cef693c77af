/* tinycompile board support: main() of real-board builds.
 *
 * Configures the board (tc_board_init), opens the console UART, copies the built-in test vector
 * (tc_testvec.h, rendered from the first input sample) into the model's inputs, runs tc_invoke()
 * once and prints the result over the UART as lines of text:
 *   tc-begin board=NAME clock_hz=N clock=SOURCE timer=dwt|systick inputs=given|zero
 *   tc-layer L ticks=N [crc32=XXXXXXXX]    (TC_PROFILE / TC_DEBUG_LAYERS builds)
 *   tc-refused layer=L                      a layer refused its input (as TFLM's Invoke fails)
 *   tc-out I HEXBYTES                       every graph output, in order
 *   tc-total ticks=N                        the whole tc_invoke()
 *   tc-stack used=N reserve=M
 *   tc-end
 * clock_hz and SOURCE (pll, hse, hsi, dfll, osc8m, xosc, rosc, hfxo, hfint, fixed, ...) are the
 * clock the firmware really runs at after tc_board_init's fallbacks. A tick is a core clock cycle
 * (DWT->CYCCNT on M3/M4/M7, SysTick on M0+); crc32 is zlib's CRC-32
 * of the layer's output bytes. Then the console answers the validation protocol (tc_proto.c,
 * docs/validate_protocol.md) for ever.
 */
#include <stdint.h>
#include <string.h>

#include "tc_board_io.h"
#include "tc_model.h"
#include "tc_testvec.h"
#include "tc_timer.h"

#if defined(TC_DEBUG_LAYERS) || defined(TC_PROFILE)
#define TC_HOOK_LAYERS (TC_NUM_LAYERS > 0 ? TC_NUM_LAYERS : 1)
static uint32_t g_ticks[TC_HOOK_LAYERS];
static uint32_t g_mark;
#if defined(TC_DEBUG_LAYERS)
static uint32_t g_crc[TC_HOOK_LAYERS];

static uint32_t tc_crc32(const void *data, uint32_t n)
{
    const uint8_t *p = (const uint8_t *)data;
    uint32_t crc = 0xFFFFFFFFu;
    for (uint32_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int b = 0; b < 8; b++) {
            crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
        }
    }
    return ~crc;
}
#endif

void tc_layer_hook(int layer, const void *data, uint32_t nbytes)
{
    uint32_t now = tc_timer_read();
    if (layer >= 0 && layer < TC_HOOK_LAYERS) {
        g_ticks[layer] = now - g_mark;
#if defined(TC_DEBUG_LAYERS)
        g_crc[layer] = tc_crc32(data, nbytes);
#endif
    }
    (void)data;
    (void)nbytes;
    g_mark = tc_timer_read();
}
#endif

int main(void)
{
    tc_board_init();
    tc_console_init();
    tc_console_ready = 1;
    tc_puts("tc-begin board=" TC_BOARD_NAME " clock_hz=");
    tc_put_u32(tc_board_clock_hz()); /* the clock it really runs at, and its source */
    tc_puts(" clock=");
    tc_puts(tc_board_clock_source());
#if defined(TC_TIMER_DWT)
    tc_puts(" timer=dwt");
#else
    tc_puts(" timer=systick");
#endif
    tc_puts(TC_TESTVEC_COUNT > 0 ? " inputs=given\n" : " inputs=zero\n");
    for (int i = 0; i < TC_NUM_INPUTS && i < TC_TESTVEC_COUNT; i++) {
        uint32_t n = tc_testvec_bytes[i];
        if (n > tc_input_info[i].bytes) {
            n = tc_input_info[i].bytes;
        }
        memcpy(tc_input(i), tc_testvec_data[i], n);
    }
    tc_timer_init();
    uint32_t start = tc_timer_read();
#if defined(TC_DEBUG_LAYERS) || defined(TC_PROFILE)
    g_mark = start;
#endif
    int refused = tc_invoke();
    uint32_t total = tc_timer_read() - start;
#if defined(TC_DEBUG_LAYERS) || defined(TC_PROFILE)
    for (int l = 0; l < TC_NUM_LAYERS; l++) {
        tc_puts("tc-layer ");
        tc_put_u32((uint32_t)l);
        tc_puts(" ticks=");
        tc_put_u32(g_ticks[l]);
#if defined(TC_DEBUG_LAYERS)
        tc_puts(" crc32=");
        tc_put_hex32(g_crc[l]);
#endif
        tc_puts("\n");
    }
#endif
    if (refused != 0) {
        tc_puts("tc-refused layer=");
        tc_put_u32((uint32_t)(refused - 1));
        tc_puts("\n");
    }
    for (int i = 0; i < TC_NUM_OUTPUTS; i++) {
        tc_puts("tc-out ");
        tc_put_u32((uint32_t)i);
        tc_puts(" ");
        tc_put_hex_bytes(tc_output(i), tc_output_info[i].bytes);
        tc_puts("\n");
    }
    tc_puts("tc-total ticks=");
    tc_put_u32(total);
    tc_puts("\ntc-stack used=");
    tc_put_u32(tc_stack_used());
    tc_puts(" reserve=");
    tc_put_u32(tc_stack_reserve());
    tc_puts("\ntc-end\n");
    tc_console_flush();
    /* Then answer `tinycompile validate` on the console (tc_proto.c), for ever. */
#if defined(TC_DEBUG_LAYERS) || defined(TC_PROFILE)
    tc_proto_loop(g_ticks, &g_mark);
#else
    tc_proto_loop(0, 0);
#endif
}
