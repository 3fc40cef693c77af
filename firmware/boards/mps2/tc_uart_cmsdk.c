/* tinycompile board support: Arm MPS2 (QEMU mps2-an385/an386/an500) console on CMSDK APB UART0.
 * Used by the emulator-only boards' "board" variant: the same main as real boards, its console on
 * QEMU's first serial port. Registers per the Cortex-M System Design Kit TRM: DATA 0x00,
 * STATE 0x04 (bit 0 TX full, bit 1 RX full), CTRL 0x08 (bit 0 TX, bit 1 RX enable), BAUDDIV 0x10.
 */
#include <stdint.h>

#include "tc_board_io.h"

#define UART0_BASE 0x40004000u
#define UART_DATA (UART0_BASE + 0x00u)
#define UART_STATE (UART0_BASE + 0x04u)
#define UART_CTRL (UART0_BASE + 0x08u)
#define UART_BAUDDIV (UART0_BASE + 0x10u)

/* The MPS2 machines' fixed 25 MHz (TC_BOARD_CLOCK_HZ): nothing to set up. */
void tc_board_init(void) {}

uint32_t tc_board_clock_hz(void)
{
    return TC_BOARD_CLOCK_HZ;
}

const char *tc_board_clock_source(void)
{
    return "fixed";
}

uint32_t tc_board_uart_clock_hz(void)
{
    return TC_BOARD_CLOCK_HZ;
}

void tc_console_init(void)
{
    TC_REG32(UART_BAUDDIV) = tc_board_uart_clock_hz() / TC_UART_BAUD;
    TC_REG32(UART_CTRL) = 3u; /* TX and RX enable */
}

void tc_console_putc(char c)
{
    while (TC_REG32(UART_STATE) & 1u) {
    }
    TC_REG32(UART_DATA) = (uint8_t)c;
}

void tc_console_flush(void)
{
    while (TC_REG32(UART_STATE) & 1u) {
    }
}

/* Receive (validation protocol): wait for STATE.RX full (bit 1), read DATA. */
uint8_t tc_console_getc(void)
{
    while ((TC_REG32(UART_STATE) & 2u) == 0) {
    }
    return (uint8_t)TC_REG32(UART_DATA);
}
