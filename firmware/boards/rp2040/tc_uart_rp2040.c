/* tinycompile board support: RP2040 clocks and console on UART0 (Arm PL011).
 *
 * After boot the chip runs from its ring oscillator (a few MHz, imprecise). tc_board_init starts
 * the 12 MHz crystal oscillator and puts clk_ref and clk_sys on it, then enables clk_peri from
 * clk_sys: core and UART run at 12 MHz (TC_BOARD_CLOCK_HZ). Addresses per the RP2040 datasheet.
 * tc_board.h gives TC_UART_TX_PIN and TC_UART_RX_PIN (GPIO numbers; UART function 2).
 */
#include <stdint.h>

#include "tc_board_io.h"

#define RESETS_BASE 0x4000C000u
#define RESETS_RESET (RESETS_BASE + 0x0u)
#define RESETS_DONE (RESETS_BASE + 0x8u)
#define ATOMIC_CLR 0x3000u
#define RESET_IO_BANK0 (1u << 5)
#define RESET_PADS_BANK0 (1u << 8)
#define RESET_UART0 (1u << 22)

#define XOSC_BASE 0x40024000u
#define XOSC_CTRL (XOSC_BASE + 0x00u)
#define XOSC_STATUS (XOSC_BASE + 0x04u)
#define XOSC_STARTUP (XOSC_BASE + 0x0Cu)

#define CLOCKS_BASE 0x40008000u
#define CLK_REF_CTRL (CLOCKS_BASE + 0x30u)
#define CLK_REF_SELECTED (CLOCKS_BASE + 0x38u)
#define CLK_SYS_CTRL (CLOCKS_BASE + 0x3Cu)
#define CLK_SYS_SELECTED (CLOCKS_BASE + 0x44u)
#define CLK_PERI_CTRL (CLOCKS_BASE + 0x48u)

#define IO_BANK0_CTRL(pin) (0x40014000u + 8u * (uint32_t)(pin) + 4u)

#define UART0_BASE 0x40034000u
#define UART_DR (UART0_BASE + 0x00u)
#define UART_FR (UART0_BASE + 0x18u)
#define UART_IBRD (UART0_BASE + 0x24u)
#define UART_FBRD (UART0_BASE + 0x28u)
#define UART_LCR_H (UART0_BASE + 0x2Cu)
#define UART_CR (UART0_BASE + 0x30u)

static void unreset(uint32_t mask)
{
    TC_REG32(RESETS_RESET + ATOMIC_CLR) = mask;
    while ((TC_REG32(RESETS_DONE) & mask) != mask) {
    }
}

void tc_board_init(void)
{
    /* Crystal: 1-15 MHz range, start-up delay of about 1 ms in units of 256 cycles. */
    TC_REG32(XOSC_CTRL) = 0xAA0u;
    TC_REG32(XOSC_STARTUP) = ((12000000u / 1000u) + 128u) / 256u;
    TC_REG32(XOSC_CTRL) = 0xAA0u | (0xFABu << 12); /* ENABLE */
    while ((TC_REG32(XOSC_STATUS) & (1u << 31)) == 0) { /* STABLE */
    }
    TC_REG32(CLK_SYS_CTRL) = 0u; /* clk_sys <- clk_ref (glitchless) */
    while (TC_REG32(CLK_SYS_SELECTED) != 1u) {
    }
    TC_REG32(CLK_REF_CTRL) = 2u; /* clk_ref <- xosc */
    while (TC_REG32(CLK_REF_SELECTED) != (1u << 2)) {
    }
    TC_REG32(CLK_PERI_CTRL) = 1u << 11; /* ENABLE, AUXSRC = clk_sys */
    unreset(RESET_IO_BANK0 | RESET_PADS_BANK0 | RESET_UART0);
}

void tc_console_init(void)
{
    uint32_t div = (8u * TC_UART_CLOCK_HZ / TC_UART_BAUD + 1u) / 2u; /* 64 * clk / (16 * baud) */
    TC_REG32(UART_IBRD) = div >> 6;
    TC_REG32(UART_FBRD) = div & 0x3Fu;
    TC_REG32(UART_LCR_H) = (3u << 5) | (1u << 4); /* 8 bits, FIFOs on; latches the divisor */
    TC_REG32(UART_CR) = 1u | (1u << 8) | (1u << 9); /* UARTEN, TXE, RXE */
    TC_REG32(IO_BANK0_CTRL(TC_UART_TX_PIN)) = 2u;   /* FUNCSEL = UART */
    TC_REG32(IO_BANK0_CTRL(TC_UART_RX_PIN)) = 2u;
}

void tc_console_putc(char c)
{
    while (TC_REG32(UART_FR) & (1u << 5)) { /* TXFF */
    }
    TC_REG32(UART_DR) = (uint8_t)c;
}

void tc_console_flush(void)
{
    while (TC_REG32(UART_FR) & (1u << 3)) { /* BUSY */
    }
}

/* Receive (validation protocol): wait while the RX FIFO is empty (FR.RXFE, bit 4), read DR
 * (bits 8-11 are error flags, dropped: the protocol's CRC catches a damaged byte). */
uint8_t tc_console_getc(void)
{
    while (TC_REG32(UART_FR) & (1u << 4)) { /* RXFE */
    }
    return (uint8_t)(TC_REG32(UART_DR) & 0xFFu);
}
