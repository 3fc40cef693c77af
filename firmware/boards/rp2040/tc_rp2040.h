/* tinycompile board support: what the RP2040's clock and console files share. */
#ifndef TC_RP2040_H
#define TC_RP2040_H

#include <stdint.h>

/* The ring oscillator's frequency as the console measured it against the host's bit timing
 * (tc_uart_rp2040.c), 0 until then; set only while the chip runs on the ROSC (no crystal). */
extern uint32_t tc_rp2040_rosc_hz;

/* 1 when clk_sys runs from clk_ref on the ring oscillator (the crystal did not start). */
int tc_rp2040_on_rosc(void);

#endif
