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

#define TC_RP_UART0_BASE RP_UART0_BASE
#define TC_RP_SIO_GPIO_IN RP_SIO_GPIO_IN
#define TC_RP_SYNC_MAX_HZ 26000000u /* the ROSC's range (23 MHz at most) with margin */
#define TC_RP_ROSC_HZ tc_rp2350_rosc_hz
#define TC_RP_ON_ROSC tc_rp2350_on_rosc

static void pin_to_uart(uint32_t pin)
{
    TC_REG32(RP_PADS_GPIO(pin) + RP_ATOMIC_CLR) = RP_PADS_OD;
    TC_REG32(RP_PADS_GPIO(pin) + RP_ATOMIC_SET) = RP_PADS_IE;
    TC_REG32(RP_IO_CTRL(pin)) = 2u; /* FUNCSEL = UART */
    TC_REG32(RP_PADS_GPIO(pin) + RP_ATOMIC_CLR) = RP_PADS_ISO;
}

static void tc_rp_pins_to_uart(void)
{
    pin_to_uart(TC_UART_TX_PIN);
    pin_to_uart(TC_UART_RX_PIN);
}

#include "tc_rp_pl011.h" /* the PL011 console, shared with the RP2040 */
