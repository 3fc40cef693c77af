/* tinycompile board support: console text helpers over the board's UART driver. */
#include <stdint.h>

#include "tc_board_io.h"

volatile int tc_console_ready;

void tc_puts(const char *s)
{
    while (*s) {
        if (*s == '\n') {
            tc_console_putc('\r');
        }
        tc_console_putc(*s++);
    }
}

void tc_put_u32(uint32_t v)
{
    char buf[11];
    int i = 10;
    buf[i] = 0;
    do {
        /* Division by 10 through a multiply keeps ARMv6-M free of a libgcc divide call. */
        uint32_t q = (uint32_t)(((uint64_t)v * 0xCCCCCCCDull) >> 35);
        buf[--i] = (char)('0' + (v - q * 10u));
        v = q;
    } while (v);
    tc_puts(&buf[i]);
}

void tc_put_hex32(uint32_t v)
{
    static const char hex[] = "0123456789abcdef";
    char buf[9];
    for (int d = 0; d < 8; d++) {
        buf[d] = hex[(v >> (28 - 4 * d)) & 0xFu];
    }
    buf[8] = 0;
    tc_puts(buf);
}

void tc_put_hex_bytes(const void *data, uint32_t n)
{
    static const char hex[] = "0123456789abcdef";
    const uint8_t *p = (const uint8_t *)data;
    for (uint32_t i = 0; i < n; i++) {
        tc_console_putc(hex[p[i] >> 4]);
        tc_console_putc(hex[p[i] & 0xFu]);
    }
}
