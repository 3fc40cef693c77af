/* tinycompile board support: RP2350 console on UART0 (Arm PL011).
 *
 * Clocks and the resets of IO_BANK0, PADS_BANK0 and UART0: tc_clock_rp2350.c; the divisor comes
 * from clk_peri at run time. Addresses in tc_rp2350.h (pico-sdk's hardware_regs).
 * tc_board.h gives TC_UART_TX_PIN and TC_UART_RX_PIN (GPIO numbers; UART function 2).
 * New on the RP2350: a pad stays isolated from its function (PADS_BANK0 GPIOn ISO, set at reset)
 * until software clears ISO, and its input buffer is off at reset (IE 0). As pico-sdk's
 * gpio_set_function: input on and output driver on (IE 1, OD 0), FUNCSEL, then ISO cleared.
 *
 * Without the crystal the chip runs on its ring oscillator, whose frequency is known only
 * roughly, and a divisor from the nominal one garbles the start-up report. The one accurate
 * clock in reach is then the host's: before the first byte is received, the RX pin (SIO GPIO_IN)
 * is timed with SysTick on the core clock. A zero byte holds the line low for 9 bit times (start
 * bit and eight data bits); `validate` opens every session with 266 of them (docs/
 * validate_protocol.md). Sixteen low pulses in a row that agree within 1/16 (or 12 cycles, the
 * polling loop's granularity) give the clock: f = ticks * baud / 9. Shorter pulses of other bytes
 * disagree with them and restart the count. The UART is then set up again for the measured
 * clock, which tc_board_clock_hz() reports from then on (source "rosc_baud").
 */
#include <stdint.h>

#include "tc_board_io.h"
#include "tc_rp2350.h"

#define UART_DR (RP_UART0_BASE + 0x00u)
#define UART_FR (RP_UART0_BASE + 0x18u)
#define UART_IBRD (RP_UART0_BASE + 0x24u)
#define UART_FBRD (RP_UART0_BASE + 0x28u)
#define UART_LCR_H (RP_UART0_BASE + 0x2Cu)
#define UART_CR (RP_UART0_BASE + 0x30u)

#define SYNC_PULSES 16u
#define SYNC_MIN_HZ 1000000u  /* the ROSC's range (23 MHz at most) with margin: pulses outside */
#define SYNC_MAX_HZ 26000000u /* it are not zeros; 16 * 9 * 26 MHz still fits 32 bits */

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

static void pin_to_uart(uint32_t pin)
{
    TC_REG32(RP_PADS_GPIO(pin) + RP_ATOMIC_CLR) = RP_PADS_OD;
    TC_REG32(RP_PADS_GPIO(pin) + RP_ATOMIC_SET) = RP_PADS_IE;
    TC_REG32(RP_IO_CTRL(pin)) = 2u; /* FUNCSEL = UART */
    TC_REG32(RP_PADS_GPIO(pin) + RP_ATOMIC_CLR) = RP_PADS_ISO;
}

void tc_console_init(void)
{
    set_baud(tc_board_uart_clock_hz()); /* clk_peri now */
    pin_to_uart(TC_UART_TX_PIN);
    pin_to_uart(TC_UART_RX_PIN);
    g_sync_pending = tc_rp2350_on_rosc();
}

/* SysTick ticks (core cycles) of the next low pulse on RX, from an idle (high) line. */
static uint32_t low_pulse(void)
{
    const uint32_t rx = 1u << TC_UART_RX_PIN;
    while (!(TC_REG32(RP_SIO_GPIO_IN) & rx)) {
    }
    while (TC_REG32(RP_SIO_GPIO_IN) & rx) {
    }
    uint32_t fall = TC_REG32(TC_SYST_CVR);
    while (!(TC_REG32(RP_SIO_GPIO_IN) & rx)) {
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
        if (ok) { /* sum <= 16 * 9 * 26 MHz / baud: sum * baud fits 32 bits */
            return (sum * TC_UART_BAUD + 9u * SYNC_PULSES / 2u) / (9u * SYNC_PULSES);
        }
    }
}

static void sync_to_host(void)
{
    tc_console_flush();
    uint32_t hz = measure_clock_hz();
    tc_rp2350_rosc_hz = hz;
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
