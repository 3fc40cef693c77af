/* tinycompile board support: RP2040 clock set-up (RP2040 datasheet sections 2.15-2.18).
 *
 * After boot the chip runs from the ring oscillator (ROSC, about 6.5 MHz nominal, imprecise).
 * Target: XOSC 12 MHz -> clk_ref; PLL_SYS = 12 MHz / REFDIV * FBDIV (VCO) / POSTDIV1 / POSTDIV2
 * (tc_board.h; 1500 MHz / 6 / 2 = 125 MHz) -> clk_sys; clk_peri (the UART) from clk_sys.
 * Fallbacks, each wait bounded: a PLL that does not lock leaves clk_sys on clk_ref = XOSC 12 MHz;
 * a crystal that does not start leaves everything on the ROSC (1.8-12 MHz; reset_clock_hz, 6.5 MHz,
 * is only its nominal value). The console then measures the ROSC against the host's bit timing
 * before it receives (tc_uart_rp2040.c) and the clock is reported as measured ("rosc_baud").
 */
#include <stdint.h>

#include "tc_board_io.h"
#include "tc_rp2040.h"

#define ATOMIC_SET 0x2000u
#define ATOMIC_CLR 0x3000u
#define RESETS_RESET 0x4000C000u
#define RESETS_DONE 0x4000C008u
#define RESET_IO_BANK0 (1u << 5)
#define RESET_PADS_BANK0 (1u << 8)
#define RESET_PLL_SYS (1u << 12)
#define RESET_UART0 (1u << 22)

#define XOSC_CTRL 0x40024000u
#define XOSC_STATUS 0x40024004u
#define XOSC_STARTUP 0x4002400Cu

#define PLL_CS 0x40028000u
#define PLL_PWR 0x40028004u
#define PLL_FBDIV_INT 0x40028008u
#define PLL_PRIM 0x4002800Cu
#define PLL_PWR_PD (1u << 0)
#define PLL_PWR_POSTDIVPD (1u << 3)
#define PLL_PWR_VCOPD (1u << 5)

#define CLK_REF_CTRL 0x40008030u
#define CLK_REF_SELECTED 0x40008038u
#define CLK_SYS_CTRL 0x4000803Cu
#define CLK_SYS_DIV 0x40008040u
#define CLK_SYS_SELECTED 0x40008044u
#define CLK_PERI_CTRL 0x40008048u

#define XOSC_HZ TC_CRYSTAL_HZ

/* Bounds in reads (>= 4 cycles each, at the ROSC's slowest 1.8 MHz): XOSC 100000 (>= 0.2 s;
 * the start-up delay programmed below is 1 ms), PLL lock 100000 (>= 0.2 s; lock takes tens of
 * microseconds), clock switches and resets 10000 (>= 20 ms; a few cycles of the slower clock). */
#define WAIT_OSC 100000u
#define WAIT_LOCK 100000u
#define WAIT_SWITCH 10000u

static int unreset(uint32_t mask)
{
    TC_REG32(RESETS_RESET + ATOMIC_CLR) = mask;
    return tc_wait_reg32(RESETS_DONE, mask, mask, WAIT_SWITCH);
}

static int start_pll(void)
{
    TC_REG32(RESETS_RESET + ATOMIC_SET) = RESET_PLL_SYS;
    if (!unreset(RESET_PLL_SYS)) {
        return 0;
    }
    TC_REG32(PLL_CS) = TC_PLL_REFDIV;
    TC_REG32(PLL_FBDIV_INT) = TC_PLL_FBDIV;
    TC_REG32(PLL_PWR + ATOMIC_CLR) = PLL_PWR_PD | PLL_PWR_VCOPD;
    if (!tc_wait_reg32(PLL_CS, 1u << 31, 1u << 31, WAIT_LOCK)) { /* LOCK */
        TC_REG32(PLL_PWR + ATOMIC_SET) = PLL_PWR_PD | PLL_PWR_VCOPD;
        return 0;
    }
    TC_REG32(PLL_PRIM) = ((uint32_t)TC_PLL_POSTDIV1 << 16) | ((uint32_t)TC_PLL_POSTDIV2 << 12);
    TC_REG32(PLL_PWR + ATOMIC_CLR) = PLL_PWR_POSTDIVPD;
    return 1;
}

void tc_board_init(void)
{
    /* Crystal: 1-15 MHz range, start-up delay of about 1 ms in units of 256 cycles. */
    TC_REG32(XOSC_CTRL) = 0xAA0u;
    TC_REG32(XOSC_STARTUP) = ((XOSC_HZ / 1000u) + 128u) / 256u;
    TC_REG32(XOSC_CTRL) = 0xAA0u | (0xFABu << 12); /* ENABLE */
    TC_REG32(CLK_SYS_DIV) = 1u << 8;               /* divide by 1 */
    TC_REG32(CLK_SYS_CTRL) = 0u;                   /* clk_sys <- clk_ref (glitchless) */
    int xosc = tc_wait_reg32(CLK_SYS_SELECTED, 0xFFFFFFFFu, 1u, WAIT_SWITCH) &&
               tc_wait_reg32(XOSC_STATUS, 1u << 31, 1u << 31, WAIT_OSC); /* STABLE */
    if (xosc) {
        TC_REG32(CLK_REF_CTRL) = 2u; /* clk_ref <- xosc */
        xosc = tc_wait_reg32(CLK_REF_SELECTED, 0xFFFFFFFFu, 1u << 2, WAIT_SWITCH);
        if (!xosc) {
            TC_REG32(CLK_REF_CTRL) = 0u; /* back to the ROSC */
            (void)tc_wait_reg32(CLK_REF_SELECTED, 0xFFFFFFFFu, 1u, WAIT_SWITCH);
        }
    }
    if (xosc && start_pll()) {
        TC_REG32(CLK_SYS_CTRL) = 0u << 5;        /* AUXSRC = pll_sys, while on clk_ref */
        TC_REG32(CLK_SYS_CTRL) = (0u << 5) | 1u; /* SRC = aux */
        if (!tc_wait_reg32(CLK_SYS_SELECTED, 0xFFFFFFFFu, 1u << 1, WAIT_SWITCH)) {
            TC_REG32(CLK_SYS_CTRL) = 0u;
            (void)tc_wait_reg32(CLK_SYS_SELECTED, 0xFFFFFFFFu, 1u, WAIT_SWITCH);
        }
    }
    /* clk_peri <- clk_sys: AUXSRC changes only while disabled. */
    TC_REG32(CLK_PERI_CTRL) = 0u;
    (void)TC_REG32(CLK_PERI_CTRL);
    TC_REG32(CLK_PERI_CTRL) = (1u << 11) | (0u << 5); /* ENABLE, AUXSRC = clk_sys */
    (void)unreset(RESET_IO_BANK0 | RESET_PADS_BANK0 | RESET_UART0);
}

uint32_t tc_rp2040_rosc_hz;

static uint32_t ref_hz(void)
{
    if (TC_REG32(CLK_REF_SELECTED) & (1u << 2)) {
        return XOSC_HZ;
    }
    return tc_rp2040_rosc_hz ? tc_rp2040_rosc_hz : TC_BOARD_RESET_CLOCK_HZ;
}

static int on_pll(void)
{
    return (TC_REG32(CLK_SYS_SELECTED) & (1u << 1)) && ((TC_REG32(CLK_SYS_CTRL) >> 5) & 7u) == 0u;
}

uint32_t tc_board_clock_hz(void)
{
    uint32_t hz = ref_hz();
    if (on_pll()) {
        uint32_t refdiv = TC_REG32(PLL_CS) & 0x3Fu, prim = TC_REG32(PLL_PRIM);
        uint32_t pd = ((prim >> 16) & 7u) * ((prim >> 12) & 7u);
        hz = refdiv && pd ? XOSC_HZ / refdiv * (TC_REG32(PLL_FBDIV_INT) & 0xFFFu) / pd : 0u;
    }
    uint32_t div = TC_REG32(CLK_SYS_DIV) >> 8; /* INT (FRAC kept 0) */
    return div > 1u ? hz / div : hz;
}

int tc_rp2040_on_rosc(void)
{
    return !on_pll() && !(TC_REG32(CLK_REF_SELECTED) & (1u << 2));
}

const char *tc_board_clock_source(void)
{
    if (on_pll()) {
        return "pll";
    }
    if (TC_REG32(CLK_REF_SELECTED) & (1u << 2)) {
        return "xosc";
    }
    return tc_rp2040_rosc_hz ? "rosc_baud" : "rosc";
}

uint32_t tc_board_uart_clock_hz(void)
{
    return tc_board_clock_hz(); /* clk_peri = clk_sys */
}
