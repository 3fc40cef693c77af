/* tinycompile board support: STM32H7 (H742/H743/H750/H753) clock set-up, RM0433 sections 6-8.
 *
 * Target: LDO supply, voltage scale 1 (VOS1), HSE (NUCLEO: the ST-LINK's 8 MHz MCO, bypass mode)
 * -> PLL1 (DIVM1, DIVN1, DIVP1 from tc_board.h, computed by tinycompile/build/clocks.py) -> sys_ck
 * at the board file's clock_hz, with D1CPRE, HPRE, D1PPRE, D2PPRE1/2 and D3PPRE, and the flash
 * latency and programming delay (WRHIGHFREQ) for the AXI clock at VOS1. 400 MHz at VOS1 is the
 * maximum of every silicon revision; 480 MHz needs revision V and VOS0 (over-drive through
 * SYSCFG), which early NUCLEO-H743ZI boards (revision Y) do not have.
 * Fallbacks, each wait bounded: HSE in the other mode (bypass <-> crystal), then HSI 64 MHz as the
 * PLL input; a PLL (or VOS1) that does not become ready leaves the core on HSI 64 MHz, the reset
 * clock, with prescalers 1. The console USART's kernel clock is selected explicitly: its PCLK.
 */
#include <stdint.h>

#include "tc_board_io.h"

#define HSI_HZ 64000000u
#define CSI_HZ 4000000u

#define RCC_BASE 0x58024400u
#define RCC_CR (RCC_BASE + 0x00u)
#define RCC_CFGR (RCC_BASE + 0x10u)
#define RCC_D1CFGR (RCC_BASE + 0x18u)
#define RCC_D2CFGR (RCC_BASE + 0x1Cu)
#define RCC_D3CFGR (RCC_BASE + 0x20u)
#define RCC_PLLCKSELR (RCC_BASE + 0x28u)
#define RCC_PLLCFGR (RCC_BASE + 0x2Cu)
#define RCC_PLL1DIVR (RCC_BASE + 0x30u)
#define RCC_D2CCIP2R (RCC_BASE + 0x54u)
#define PWR_BASE 0x58024800u
#define PWR_CSR1 (PWR_BASE + 0x04u)
#define PWR_CR3 (PWR_BASE + 0x0Cu)
#define PWR_D3CR (PWR_BASE + 0x18u)
#define FLASH_ACR 0x52002000u

#define CR_HSION (1u << 0)
#define CR_HSIRDY (1u << 2)
#define CR_HSEON (1u << 16)
#define CR_HSERDY (1u << 17)
#define CR_HSEBYP (1u << 18)
#define CR_PLL1ON (1u << 24)
#define CR_PLL1RDY (1u << 25)
#define SWS_MASK (7u << 3)

/* Bounds in reads (>= 4 cycles each, at HSI 64 MHz): oscillators 800000 (>= 50 ms; HSE start-up
 * 2 ms typical, DS12110), PLL, supply and voltage scaling 160000 (>= 10 ms; PLL lock < 0.2 ms),
 * switches and register updates 16000 (>= 1 ms). */
#define WAIT_OSC 800000u
#define WAIT_PLL 160000u
#define WAIT_SWITCH 16000u

#if TC_UART_INSTANCE == 1 || TC_UART_INSTANCE == 6
#define UART_SEL_SHIFT 3u /* USART16SEL: rcc_pclk2 = 0 */
#define UART_PPRE_REG RCC_D2CFGR
#define UART_PPRE_SHIFT 8u
#else
#define UART_SEL_SHIFT 0u /* USART234578SEL: rcc_pclk1 = 0 */
#define UART_PPRE_REG RCC_D2CFGR
#define UART_PPRE_SHIFT 4u
#endif

#include "tc_stm32_hse.h" /* start_hse(), shared by the STM32 families */

static void prescalers(int target)
{
    if (target) {
        TC_REG32(RCC_D1CFGR) = (TC_RCC_D1CPRE << 8) | (TC_RCC_D1PPRE << 4) | TC_RCC_HPRE;
        TC_REG32(RCC_D2CFGR) = (TC_RCC_D2PPRE2 << 8) | (TC_RCC_D2PPRE1 << 4);
        TC_REG32(RCC_D3CFGR) = TC_RCC_D3PPRE << 4;
    } else {
        TC_REG32(RCC_D1CFGR) = 0u;
        TC_REG32(RCC_D2CFGR) = 0u;
        TC_REG32(RCC_D3CFGR) = 0u;
    }
}

static void pll1(uint32_t src, uint32_t m, uint32_t n, uint32_t p, uint32_t rge, uint32_t vcosel)
{
    TC_REG32(RCC_PLLCKSELR) = (TC_REG32(RCC_PLLCKSELR) & ~((0x3Fu << 4) | 3u)) | (m << 4) | src;
    /* PLL1: integer mode, input range, VCO range; DIVP1 output enabled. */
    TC_REG32(RCC_PLLCFGR) = (TC_REG32(RCC_PLLCFGR) & ~0xFu) | (rge << 2) | (vcosel << 1) |
                            (1u << 16);
    TC_REG32(RCC_PLL1DIVR) = (TC_REG32(RCC_PLL1DIVR) & ~0xFFFFu) | ((p - 1u) << 9) | (n - 1u);
}

void tc_board_init(void)
{
    /* RM0433 5.4: LDO supply, SCUEN cleared (locks the configuration), wait for ACTVOSRDY. */
    TC_REG32(PWR_CR3) = (TC_REG32(PWR_CR3) & ~0x7u) | (1u << 1);
    int ok = tc_wait_reg32(PWR_CSR1, 1u << 13, 1u << 13, WAIT_PLL);
    /* Voltage scale 1 (VOS = 11), then VOSRDY. */
    TC_REG32(PWR_D3CR) = (TC_REG32(PWR_D3CR) & ~(3u << 14)) | (3u << 14);
    ok = tc_wait_reg32(PWR_D3CR, 1u << 13, 1u << 13, WAIT_PLL) && ok;
    /* Flash latency and programming delay for the target AXI clock (also enough below it). */
    uint32_t acr = TC_FLASH_LATENCY | (TC_FLASH_WRHIGHFREQ << 4);
    TC_REG32(FLASH_ACR) = (TC_REG32(FLASH_ACR) & ~0x3Fu) | acr;
    (void)tc_wait_reg32(FLASH_ACR, 0x3Fu, acr, WAIT_SWITCH);

    TC_REG32(RCC_CR) |= CR_HSION;
    (void)tc_wait_reg32(RCC_CR, CR_HSIRDY, CR_HSIRDY, WAIT_OSC);
    TC_REG32(RCC_CFGR) &= ~7u; /* SW = HSI */
    (void)tc_wait_reg32(RCC_CFGR, SWS_MASK, 0u, WAIT_SWITCH);
    TC_REG32(RCC_CR) &= ~CR_PLL1ON;
    (void)tc_wait_reg32(RCC_CR, CR_PLL1RDY, 0u, WAIT_SWITCH);
    if (start_hse(TC_CRYSTAL_BYPASS) || start_hse(!TC_CRYSTAL_BYPASS)) {
        pll1(2u, TC_PLL_HSE_M, TC_PLL_HSE_N, TC_PLL_HSE_P, TC_PLL_HSE_RGE, TC_PLL_HSE_VCOSEL);
    } else {
        pll1(0u, TC_PLL_HSI_M, TC_PLL_HSI_N, TC_PLL_HSI_P, TC_PLL_HSI_RGE, TC_PLL_HSI_VCOSEL);
    }
    if (ok) {
        TC_REG32(RCC_CR) |= CR_PLL1ON;
        ok = tc_wait_reg32(RCC_CR, CR_PLL1RDY, CR_PLL1RDY, WAIT_PLL);
    }
    if (ok) {
        prescalers(1);
        TC_REG32(RCC_CFGR) = (TC_REG32(RCC_CFGR) & ~7u) | 3u; /* SW = PLL1 */
        ok = tc_wait_reg32(RCC_CFGR, SWS_MASK, 3u << 3, WAIT_SWITCH);
    }
    if (!ok) { /* back to the reset clock: HSI, prescalers 1, PLL1 and HSE off */
        TC_REG32(RCC_CFGR) &= ~7u;
        (void)tc_wait_reg32(RCC_CFGR, SWS_MASK, 0u, WAIT_SWITCH);
        prescalers(0);
        TC_REG32(RCC_CR) &= ~(CR_PLL1ON | CR_HSEON);
    }
    TC_REG32(RCC_D2CCIP2R) &= ~(7u << UART_SEL_SHIFT);
}

static uint32_t sys_hz(void)
{
    uint32_t sws = (TC_REG32(RCC_CFGR) >> 3) & 7u;
    uint32_t hsi = HSI_HZ >> ((TC_REG32(RCC_CR) >> 3) & 3u); /* HSIDIV */
    if (sws == 1u) {
        return CSI_HZ;
    }
    if (sws == 2u) {
        return TC_CRYSTAL_HZ;
    }
    if (sws != 3u) {
        return hsi;
    }
    uint32_t sel = TC_REG32(RCC_PLLCKSELR), div = TC_REG32(RCC_PLL1DIVR);
    uint32_t src = sel & 3u, m = (sel >> 4) & 0x3Fu;
    uint32_t in = src == 0u ? hsi : src == 1u ? CSI_HZ : src == 2u ? TC_CRYSTAL_HZ : 0u;
    uint32_t n = (div & 0x1FFu) + 1u, p = ((div >> 9) & 0x7Fu) + 1u;
    return m ? (uint32_t)((uint64_t)in * n / ((uint64_t)m * p)) : 0u;
}

static uint32_t div4(uint32_t hz, uint32_t code) /* D1CPRE / HPRE: 0xxx = 1, 1000 = 2, ... */
{
    static const uint8_t shift[8] = {1, 2, 3, 4, 6, 7, 8, 9};
    return code < 8u ? hz : hz >> shift[code - 8u];
}

static uint32_t hclk_hz(void)
{
    uint32_t d1 = TC_REG32(RCC_D1CFGR);
    return div4(div4(sys_hz(), (d1 >> 8) & 0xFu), d1 & 0xFu);
}

uint32_t tc_board_clock_hz(void)
{
    return div4(sys_hz(), (TC_REG32(RCC_D1CFGR) >> 8) & 0xFu); /* sys_d1cpre_ck */
}

const char *tc_board_clock_source(void)
{
    /* PLL1 named with its input (RCC_PLLCKSELR.PLLSRC): HSE (the crystal), HSI or CSI (RC) */
    static const char *const names[8] = {"hsi", "csi", "hse", "pll", "?", "?", "?", "?"};
    static const char *const plls[4] = {"pll_hsi", "pll_csi", "pll_hse", "pll"};
    uint32_t sws = (TC_REG32(RCC_CFGR) >> 3) & 7u;
    return sws == 3u ? plls[TC_REG32(RCC_BASE + 0x28u) & 3u] : names[sws];
}

uint32_t tc_board_uart_clock_hz(void)
{
    uint32_t sel = (TC_REG32(RCC_D2CCIP2R) >> UART_SEL_SHIFT) & 7u;
    if (sel == 3u) {
        return HSI_HZ >> ((TC_REG32(RCC_CR) >> 3) & 3u);
    }
    if (sel == 4u) {
        return CSI_HZ;
    }
    if (sel != 0u) {
        return 0u; /* PLL2/PLL3/LSE: never selected here */
    }
    uint32_t ppre = (TC_REG32(UART_PPRE_REG) >> UART_PPRE_SHIFT) & 7u;
    return ppre < 4u ? hclk_hz() : hclk_hz() >> (ppre - 3u);
}
