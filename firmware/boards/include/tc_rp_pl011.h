/* tinycompile board support, internal: the console on UART0 of the Raspberry Pi chips (Arm
 * PL011: RP2040 and RP2350, whose UARTs and SIO input registers differ only in address), shared
 * by firmware/boards/rp2040/tc_uart_rp2040.c and rp2350/tc_uart_rp2350.c. Included once, after
 * the including driver defines
 *   TC_RP_UART0_BASE, TC_RP_SIO_GPIO_IN   the UART0 and SIO GPIO_IN addresses;
 *   TC_RP_SYNC_MAX_HZ                     the fastest ring oscillator the chip can have (with
 *                                         margin; 16 * 9 * it / baud must fit 32 bits);
 *   TC_RP_ROSC_HZ, TC_RP_ON_ROSC()        the chip's measured-clock variable and its "running on
 *                                         the ROSC" query (tc_clock_*.c);
 * and a static tc_rp_pins_to_uart(void) giving GP TX / RX to the UART. It defines the console
 * API of tc_board_io.h: set-up, output, and input with the ROSC's clock measured against the
 * host's zero bytes before the first byte is received (the drivers' header comments). */
#ifndef TC_RP_PL011_H
#define TC_RP_PL011_H

#include <stdint.h>

#include "tc_board_io.h"

#define UART_DR (TC_RP_UART0_BASE + 0x00u)
#define UART_FR (TC_RP_UART0_BASE + 0x18u)
#define UART_IBRD (TC_RP_UART0_BASE + 0x24u)
#define UART_FBRD (TC_RP_UART0_BASE + 0x28u)
#define UART_LCR_H (TC_RP_UART0_BASE + 0x2Cu)
#define UART_CR (TC_RP_UART0_BASE + 0x30u)

#define SYNC_PULSES 16u
#define SYNC_MIN_HZ 1000000u /* pulses outside [SYNC_MIN_HZ, TC_RP_SYNC_MAX_HZ] are not zeros */
#define SYNC_MAX_HZ TC_RP_SYNC_MAX_HZ

static int g_sync_pending; /* on the ROSC, clock not yet measured */

static void set_baud(uint32_t clk)
{
    uint32_t div = (8u * clk / TC_UART_BAUD + 1u) / 2u; /* 64 * clk / (16 * baud) */
    TC_REG32(UART_CR) = 0u;
    TC_REG32(UART_IBRD) = div >> 6;
    TC_REG32(UART_FBRD) = div & 0x3Fu;
    TC_REG32(UART_LCR_H) = (3u << 5) | (1u << 4); /* 8 bits, FIFOs on; latches the divisor */
    TC_REG32(UART_CR) = 1u | (1u << 8) | (1u << 9); /* UARTEN, TXE, RXE */
}

void tc_console_init(void)
{
    set_baud(tc_board_uart_clock_hz()); /* clk_peri now */
    tc_rp_pins_to_uart();
    g_sync_pending = TC_RP_ON_ROSC();
}

/* SysTick ticks (core cycles) of the next low pulse on RX, from an idle (high) line. */
static uint32_t low_pulse(void)
{
    const uint32_t rx = 1u << TC_UART_RX_PIN;
    while (!(TC_REG32(TC_RP_SIO_GPIO_IN) & rx)) {
    }
    while (TC_REG32(TC_RP_SIO_GPIO_IN) & rx) {
    }
    uint32_t fall = TC_REG32(TC_SYST_CVR);
    while (!(TC_REG32(TC_RP_SIO_GPIO_IN) & rx)) {
    }
    return (fall - TC_REG32(TC_SYST_CVR)) & 0x00FFFFFFu; /* counts down, 24 bits */
}

static uint32_t measure_clock_hz(void)
{
    if (!(TC_REG32(TC_SYST_CSR) & 1u)) { /* not started by tc_timer: free-running, no interrupt */
        TC_REG32(TC_SYST_RVR) = 0x00FFFFFFu;
        TC_REG32(TC_SYST_CVR) = 0u;
        TC_REG32(TC_SYST_CSR) = 5u; /* ENABLE | CLKSOURCE (core clock) */
    }
    const uint32_t lo = 9u * (SYNC_MIN_HZ / TC_UART_BAUD), hi = 9u * (SYNC_MAX_HZ / TC_UART_BAUD);
    uint32_t w[SYNC_PULSES], n = 0;
    for (;;) {
        uint32_t t = low_pulse();
        if (t < lo || t > hi) {
            n = 0;
            continue;
        }
        w[n % SYNC_PULSES] = t;
        if (++n < SYNC_PULSES) {
            continue;
        }
        uint32_t sum = 0, ok = 1;
        for (uint32_t i = 0; i < SYNC_PULSES; i++) {
            sum += w[i];
        }
        uint32_t mean = sum / SYNC_PULSES, tol = mean / 16u > 12u ? mean / 16u : 12u;
        for (uint32_t i = 0; i < SYNC_PULSES; i++) {
            ok &= w[i] + tol >= mean && w[i] <= mean + tol;
        }
        if (ok) { /* sum <= 16 * 9 * SYNC_MAX_HZ / baud: sum * baud fits 32 bits */
            return (sum * TC_UART_BAUD + 9u * SYNC_PULSES / 2u) / (9u * SYNC_PULSES);
        }
    }
}

static void sync_to_host(void)
{
    tc_console_flush();
    uint32_t hz = measure_clock_hz();
    TC_RP_ROSC_HZ = hz;
    set_baud(hz);
    for (int i = 0; i < 32 && !(TC_REG32(UART_FR) & (1u << 4)); i++) {
        (void)TC_REG32(UART_DR); /* what the FIFO took at the old rate */
    }
    g_sync_pending = 0;
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
    if (g_sync_pending) {
        sync_to_host();
    }
    while (TC_REG32(UART_FR) & (1u << 4)) { /* RXFE */
    }
    return (uint8_t)(TC_REG32(UART_DR) & 0xFFu);
}

#endif /* TC_RP_PL011_H */
