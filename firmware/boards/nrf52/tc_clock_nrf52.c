/* tinycompile board support: nRF52840 clock set-up (nRF52840 Product Specification, CLOCK).
 *
 * The CPU runs at 64 MHz whatever the source of HFCLK. The firmware starts the 32 MHz crystal
 * oscillator (HFXO) for an accurate UART baud rate and waits for HFCLKSTARTED, bounded; without
 * the crystal HFCLK stays on the internal HFINT (+-1.5 %, PS "HFINT" accuracy), and HFCLKSTAT
 * tells which one runs. UARTE0's BAUDRATE register is a fixed code derived from the 16 MHz
 * peripheral clock, so it needs no clock computation.
 */
#include <stdint.h>

#include "tc_board_io.h"

#define CLOCK_TASKS_HFCLKSTART 0x40000000u
#define CLOCK_EVENTS_HFCLKSTARTED 0x40000100u
#define CLOCK_HFCLKSTAT 0x4000040Cu
#define CPU_HZ 64000000u

/* Bound in reads (>= 4 cycles each at 64 MHz): 400000, >= 25 ms; HFXO start-up is 0.36 ms
 * typical in the Product Specification (crystal dependent, up to about 1 ms). */
#define WAIT_HFXO 400000u

void tc_board_init(void)
{
    TC_REG32(CLOCK_EVENTS_HFCLKSTARTED) = 0;
    TC_REG32(CLOCK_TASKS_HFCLKSTART) = 1;
    (void)tc_wait_reg32(CLOCK_EVENTS_HFCLKSTARTED, 1u, 1u, WAIT_HFXO);
}

uint32_t tc_board_clock_hz(void)
{
    return CPU_HZ;
}

const char *tc_board_clock_source(void)
{
    uint32_t stat = TC_REG32(CLOCK_HFCLKSTAT); /* SRC bit 0 (1 = Xtal), STATE bit 16 */
    return (stat & ((1u << 16) | 1u)) == ((1u << 16) | 1u) ? "hfxo" : "hfint";
}

uint32_t tc_board_uart_clock_hz(void)
{
    return 16000000u; /* PCLK16M */
}
