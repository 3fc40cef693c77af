/* tinycompile board support: RP2040 console on UART0 (Arm PL011).
 *
 * Clocks and the resets of IO_BANK0, PADS_BANK0 and UART0: tc_clock_rp2040.c; the divisor comes
 * from clk_peri at run time. Addresses per the RP2040 datasheet.
 * tc_board.h gives TC_UART_TX_PIN and TC_UART_RX_PIN (GPIO numbers; UART function 2).
 */
#include <stdint.h>

#include "tc_board_io.h"

#define IO_BANK0_CTRL(pin) (0x40014000u + 8u * (uint32_t)(pin) + 4u)

#define UART0_BASE 0x40034000u
#define UART_DR (UART0_BASE + 0x00u)
#define UART_FR (UART0_BASE + 0x18u)
#define UART_IBRD (UART0_BASE + 0x24u)
#define UART_FBRD (UART0_BASE + 0x28u)
#define UART_LCR_H (UART0_BASE + 0x2Cu)
#define UART_CR (UART0_BASE + 0x30u)

void tc_console_init(void)
{
    uint32_t clk = tc_board_uart_clock_hz(); /* clk_peri now */
    uint32_t div = (8u * clk / TC_UART_BAUD + 1u) / 2u; /* 64 * clk / (16 * baud) */
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
