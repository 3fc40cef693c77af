/* tinycompile board support: RP2040 console on UART0 (Arm PL011).
 *
 * Clocks and the resets of IO_BANK0, PADS_BANK0 and UART0: tc_clock_rp2040.c; the divisor comes
 * from clk_peri at run time. Addresses per the RP2040 datasheet.
 * tc_board.h gives TC_UART_TX_PIN and TC_UART_RX_PIN (GPIO numbers; UART function 2).
 *
 * Without the crystal the chip runs on its ring oscillator, anywhere in 1.8-12 MHz, and a divisor
 * from the nominal 6.5 MHz is wrong by up to a factor of 3.6: the start-up report is unreadable.
 * The one accurate clock in reach is then the host's: before the first byte is received, the RX
 * pin (SIO GPIO_IN: a pad's input reaches SIO whatever its function) is timed with SysTick on
 * the core clock. A zero byte holds the line low for 9 bit times (start bit and eight data bits);
 * `validate` opens every session with 266 of them (docs/validate_protocol.md). Sixteen low pulses
 * in a row that agree within 1/16 (or 12 cycles, the polling loop's granularity at the slowest
 * ROSC) give the clock: f = ticks * baud / 9. Shorter pulses of other bytes disagree with them
 * and restart the count. The UART is then set up again for the measured clock, which
 * tc_board_clock_hz() reports from then on (source "rosc_baud").
 */
#include <stdint.h>

#include "tc_board_io.h"
#include "tc_rp2040.h"

#define IO_BANK0_CTRL(pin) (0x40014000u + 8u * (uint32_t)(pin) + 4u)
#define TC_RP_UART0_BASE 0x40034000u
#define TC_RP_SIO_GPIO_IN 0xD0000004u
#define TC_RP_SYNC_MAX_HZ 16000000u /* the ROSC's range (1.8-12 MHz) with margin */
#define TC_RP_ROSC_HZ tc_rp2040_rosc_hz
#define TC_RP_ON_ROSC tc_rp2040_on_rosc

static void tc_rp_pins_to_uart(void)
{
    TC_REG32(IO_BANK0_CTRL(TC_UART_TX_PIN)) = 2u; /* FUNCSEL = UART */
    TC_REG32(IO_BANK0_CTRL(TC_UART_RX_PIN)) = 2u;
}

#include "tc_rp_pl011.h" /* the PL011 console, shared with the RP2350 */
