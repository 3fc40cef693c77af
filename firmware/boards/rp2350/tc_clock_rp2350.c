/* tinycompile board support: RP2350 clock set-up (RP2350 datasheet chapter 8, "Clocks"; register
 * addresses and fields in tc_rp2350.h, from pico-sdk's hardware_regs; the order of the steps
 * follows pico-sdk's runtime_init_clocks and clock_configure).
 *
 * The boot ROM enters the image with clk_sys on the ring oscillator (ROSC, "approximately
 * 12 MHz", 23 MHz at most: pico-bootrom-rp2350 bootrom.h), through clk_sys's aux mux at reset
 * (CLK_SYS_CTRL resets to 0x41: SRC aux, AUXSRC rosc). Target: XOSC 12 MHz -> clk_ref; PLL_SYS =
 * 12 MHz / REFDIV * FBDIV (VCO) / POSTDIV1 / POSTDIV2 (tc_board.h; 1500 MHz / 5 / 2 = 150 MHz,
 * pico-sdk's default for the RP2350) -> clk_sys; clk_peri (the UART) from clk_sys.
 * An aux mux glitches when it switches, so clk_sys leaves its aux source for clk_ref (glitchless)
 * before AUXSRC changes. Fallbacks, each wait bounded: a PLL that does not lock leaves clk_sys on
 * clk_ref = XOSC 12 MHz; a crystal that does not start leaves everything on the ROSC
 * (reset_clock_hz is its nominal value); the console then measures it against the host's bit
 * timing before it receives (tc_uart_rp2350.c) and the clock is reported as measured.
 * XIP (the QMI) stays as the boot ROM set it up, as in pico-sdk's default build.
 */
#include <stdint.h>

#include "tc_board_io.h"
#include "tc_rp2350.h"

#define XOSC_HZ TC_CRYSTAL_HZ
#define SYS_AUX_PLL_SYS 0u /* CLK_SYS_CTRL AUXSRC values (clocks.h) */
#define SYS_AUX_ROSC 2u
#define SYS_AUX_XOSC 3u

/* Bounds in reads (>= 4 cycles each, at the ROSC's 23 MHz at most): XOSC 400000 (>= 70 ms; the
 * start-up delay programmed below is 1 ms), PLL lock 400000 (>= 70 ms; lock takes tens of
 * microseconds), clock switches and resets 40000 (>= 7 ms; a few cycles of the slower clock). */
#define WAIT_OSC 400000u
#define WAIT_LOCK 400000u
#define WAIT_SWITCH 40000u

static int unreset(uint32_t mask)
{
    TC_REG32(RP_RESETS_RESET + RP_ATOMIC_CLR) = mask;
    return tc_wait_reg32(RP_RESETS_DONE, mask, mask, WAIT_SWITCH);
}

static int start_pll(void)
{
    TC_REG32(RP_RESETS_RESET + RP_ATOMIC_SET) = RP_RESET_PLL_SYS;
    if (!unreset(RP_RESET_PLL_SYS)) {
        return 0;
    }
    TC_REG32(RP_PLL_CS) = TC_PLL_REFDIV;
    TC_REG32(RP_PLL_FBDIV_INT) = TC_PLL_FBDIV;
    TC_REG32(RP_PLL_PWR + RP_ATOMIC_CLR) = (1u << 0) | (1u << 5); /* PD, VCOPD */
    if (!tc_wait_reg32(RP_PLL_CS, 1u << 31, 1u << 31, WAIT_LOCK)) { /* LOCK */
        TC_REG32(RP_PLL_PWR + RP_ATOMIC_SET) = (1u << 0) | (1u << 5);
        return 0;
    }
    TC_REG32(RP_PLL_PRIM) = ((uint32_t)TC_PLL_POSTDIV1 << 16) | ((uint32_t)TC_PLL_POSTDIV2 << 12);
    TC_REG32(RP_PLL_PWR + RP_ATOMIC_CLR) = 1u << 3; /* POSTDIVPD */
    return 1;
}

void tc_board_init(void)
{
    /* clk_sys and clk_ref cleanly off their aux sources: clk_sys <- clk_ref, clk_ref <- ROSC. */
    TC_REG32(RP_CLK_SYS_CTRL + RP_ATOMIC_CLR) = 1u; /* SRC = clk_ref */
    (void)tc_wait_reg32(RP_CLK_SYS_SELECTED, 0xFFFFFFFFu, 1u, WAIT_SWITCH);
    TC_REG32(RP_CLK_REF_CTRL) = 0u; /* SRC = rosc_clksrc_ph */
    (void)tc_wait_reg32(RP_CLK_REF_SELECTED, 0xFFFFFFFFu, 1u, WAIT_SWITCH);
    TC_REG32(RP_CLK_REF_DIV) = 1u << 16; /* divide by 1 (INT in bits 23:16) */
    TC_REG32(RP_CLK_SYS_DIV) = 1u << 16; /* divide by 1 (INT in bits 31:16, FRAC 0) */
    /* Crystal: 1-15 MHz range, start-up delay of about 1 ms in units of 256 cycles. */
    TC_REG32(RP_XOSC_CTRL) = 0xAA0u;
    TC_REG32(RP_XOSC_STARTUP) = ((XOSC_HZ / 1000u) + 128u) / 256u;
    TC_REG32(RP_XOSC_CTRL) = 0xAA0u | (0xFABu << 12); /* ENABLE */
    int xosc = tc_wait_reg32(RP_XOSC_STATUS, 1u << 31, 1u << 31, WAIT_OSC); /* STABLE */
    if (xosc) {
        TC_REG32(RP_CLK_REF_CTRL) = 2u; /* clk_ref <- xosc_clksrc */
        xosc = tc_wait_reg32(RP_CLK_REF_SELECTED, 0xFFFFFFFFu, 1u << 2, WAIT_SWITCH);
        if (!xosc) {
            TC_REG32(RP_CLK_REF_CTRL) = 0u; /* back to the ROSC */
            (void)tc_wait_reg32(RP_CLK_REF_SELECTED, 0xFFFFFFFFu, 1u, WAIT_SWITCH);
        }
    }
    if (xosc && start_pll()) {
        TC_REG32(RP_CLK_SYS_CTRL) = SYS_AUX_PLL_SYS << 5;        /* AUXSRC, while on clk_ref */
        TC_REG32(RP_CLK_SYS_CTRL) = (SYS_AUX_PLL_SYS << 5) | 1u; /* SRC = aux */
        if (!tc_wait_reg32(RP_CLK_SYS_SELECTED, 0xFFFFFFFFu, 1u << 1, WAIT_SWITCH)) {
            TC_REG32(RP_CLK_SYS_CTRL) = SYS_AUX_PLL_SYS << 5;
            (void)tc_wait_reg32(RP_CLK_SYS_SELECTED, 0xFFFFFFFFu, 1u, WAIT_SWITCH);
        }
    }
    /* clk_peri <- clk_sys: AUXSRC changes only while the generator is stopped (ENABLED, bit 28,
     * follows ENABLE a few cycles later). */
    TC_REG32(RP_CLK_PERI_CTRL) = 0u;
    (void)tc_wait_reg32(RP_CLK_PERI_CTRL, 1u << 28, 0u, WAIT_SWITCH);
    TC_REG32(RP_CLK_PERI_CTRL) = (1u << 11) | (0u << 5); /* ENABLE, AUXSRC = clk_sys */
    TC_REG32(RP_CLK_PERI_DIV) = 1u << 16;                 /* divide by 1 */
    (void)unreset(RP_RESET_IO_BANK0 | RP_RESET_PADS_BANK0 | RP_RESET_UART0);
}

uint32_t tc_rp2350_rosc_hz;

static uint32_t rosc_hz(void)
{
    return tc_rp2350_rosc_hz ? tc_rp2350_rosc_hz : TC_BOARD_RESET_CLOCK_HZ;
}

/* The source clk_sys runs on: 0 ROSC, 1 XOSC, 2 PLL_SYS (an unknown aux source counts as the
 * ROSC, the reset one). */
static int sys_source(void)
{
    if (TC_REG32(RP_CLK_SYS_SELECTED) & (1u << 1)) { /* the aux mux */
        uint32_t aux = (TC_REG32(RP_CLK_SYS_CTRL) >> 5) & 7u;
        return aux == SYS_AUX_PLL_SYS ? 2 : aux == SYS_AUX_XOSC ? 1 : 0;
    }
    return (TC_REG32(RP_CLK_REF_SELECTED) & (1u << 2)) ? 1 : 0;
}

uint32_t tc_board_clock_hz(void)
{
    int src = sys_source();
    uint32_t hz;
    if (src == 2) {
        uint32_t refdiv = TC_REG32(RP_PLL_CS) & 0x3Fu, prim = TC_REG32(RP_PLL_PRIM);
        uint32_t pd = ((prim >> 16) & 7u) * ((prim >> 12) & 7u);
        hz = refdiv && pd ? XOSC_HZ / refdiv * (TC_REG32(RP_PLL_FBDIV_INT) & 0xFFFu) / pd : 0u;
    } else {
        hz = src == 1 ? XOSC_HZ : rosc_hz();
        if (!(TC_REG32(RP_CLK_SYS_SELECTED) & (1u << 1))) { /* through clk_ref's divider */
            uint32_t rdiv = (TC_REG32(RP_CLK_REF_DIV) >> 16) & 0xFFu;
            hz = rdiv > 1u ? hz / rdiv : hz;
        }
    }
    uint32_t div = TC_REG32(RP_CLK_SYS_DIV) >> 16; /* INT (FRAC kept 0) */
    return div > 1u ? hz / div : hz;
}

int tc_rp2350_on_rosc(void)
{
    return sys_source() == 0;
}

const char *tc_board_clock_source(void)
{
    int src = sys_source();
    if (src == 2) {
        return "pll";
    }
    if (src == 1) {
        return "xosc";
    }
    return tc_rp2350_rosc_hz ? "rosc_baud" : "rosc";
}

uint32_t tc_board_uart_clock_hz(void)
{
    return tc_board_clock_hz(); /* clk_peri = clk_sys, undivided */
}
