/* tinycompile board support: STM32F4 / STM32F7 clock set-up (RM0090 section 6, RM0385 section 5).
 *
 * Target: HSE (the board's crystal, or the ST-LINK's MCO in bypass mode) -> main PLL -> SYSCLK at
 * the board file's clock_hz, with the flash wait states, prefetch and caches (F4) or ART (F7),
 * the AHB/APB prescalers and, on the F7, over-drive, as tc_board.h gives them (computed by
 * tinycompile/build/clocks.py). Fallbacks, each wait bounded: HSE in the board's mode, then in
 * the other mode (crystal <-> bypass), then HSI as the PLL input; a PLL (or over-drive) that does
 * not become ready leaves the core on HSI 16 MHz, the reset clock, with prescalers 1. The flash
 * wait states stay at the target's (more are always safe). On QEMU's netduinoplus2, whose RCC
 * reads 0, this ends on HSI after about 650,000 bounded reads (about 0.25 s at 16 MHz).
 */
#include <stdint.h>

#include "tc_board_io.h"

#define HSI_HZ 16000000u

#define RCC_BASE 0x40023800u
#define RCC_CR (RCC_BASE + 0x00u)
#define RCC_PLLCFGR (RCC_BASE + 0x04u)
#define RCC_CFGR (RCC_BASE + 0x08u)
#define RCC_APB1ENR (RCC_BASE + 0x40u)
#define RCC_DCKCFGR2 (RCC_BASE + 0x90u) /* F7 only: USART kernel clock selection */
#define PWR_CR1 0x40007000u             /* PWR_CR on the F4 */
#define PWR_CSR1 0x40007004u
#define FLASH_ACR 0x40023C00u

#define CR_HSION (1u << 0)
#define CR_HSIRDY (1u << 1)
#define CR_HSEON (1u << 16)
#define CR_HSERDY (1u << 17)
#define CR_HSEBYP (1u << 18)
#define CR_PLLON (1u << 24)
#define CR_PLLRDY (1u << 25)
#define PLLCFGR_FIELDS 0x0F437FFFu /* PLLQ, PLLSRC, PLLP, PLLN, PLLM */
#define CFGR_SW_MASK 3u
#define CFGR_SW_PLL 2u
#define CFGR_SWS_SHIFT 2u
#define CFGR_PRE_MASK 0x0000FCF0u /* PPRE2, PPRE1, HPRE */

/* Bounds in reads (>= 4 cycles each, at HSI 16 MHz): oscillators 200000 (>= 50 ms; HSE start-up
 * is 2 ms typical in DS8626/DS10916), PLL and over-drive 40000 (>= 10 ms; PLL lock <= 0.3 ms),
 * switches and register updates 4000 (>= 1 ms; a few cycles of the slower clock). */
#define WAIT_OSC 200000u
#define WAIT_PLL 40000u
#define WAIT_SWITCH 4000u

#if TC_UART_INSTANCE == 1 || TC_UART_INSTANCE == 6
#define UART_ON_APB2 1
#else
#define UART_ON_APB2 0
#endif
#define UART_SEL_SHIFT (TC_UART_INSTANCE == 6 ? 10u : 2u * ((uint32_t)TC_UART_INSTANCE - 1u))

#include "tc_stm32_hse.h" /* start_hse(), shared by the STM32 families */

static uint32_t pllcfgr(uint32_t m, uint32_t n, uint32_t p, uint32_t q, uint32_t hse)
{
    return m | (n << 6) | ((p / 2u - 1u) << 16) | (hse << 22) | (q << 24);
}

#if defined(TC_STM32_F7)
static int start_overdrive(void)
{
    /* RM0385 5.1.4: with the PLL on, ODEN then wait ODRDY, ODSWEN then wait ODSWRDY. */
    TC_REG32(PWR_CR1) |= 1u << 16;
    if (tc_wait_reg32(PWR_CSR1, 1u << 16, 1u << 16, WAIT_PLL)) {
        TC_REG32(PWR_CR1) |= 1u << 17;
        if (tc_wait_reg32(PWR_CSR1, 1u << 17, 1u << 17, WAIT_PLL)) {
            return 1;
        }
    }
    TC_REG32(PWR_CR1) &= ~((1u << 16) | (1u << 17));
    return 0;
}
#endif

void tc_board_init(void)
{
    /* Power interface clock on; voltage scale 1 (written while the PLL is off, RM0090/RM0385). */
    TC_REG32(RCC_APB1ENR) |= 1u << 28;
    (void)TC_REG32(RCC_APB1ENR);
#if defined(TC_STM32_F7)
    TC_REG32(PWR_CR1) |= 3u << 14;
    uint32_t acr = TC_FLASH_LATENCY | (1u << 8) | (1u << 9); /* PRFTEN, ARTEN */
#else
    TC_REG32(PWR_CR1) |= 1u << 14;
    uint32_t acr = TC_FLASH_LATENCY | (1u << 8) | (1u << 9) | (1u << 10); /* PRFTEN, ICEN, DCEN */
#endif
    /* Wait states for the target first (enough for any slower clock too); read back. */
    TC_REG32(FLASH_ACR) = acr;
    (void)tc_wait_reg32(FLASH_ACR, 0xFu, TC_FLASH_LATENCY, WAIT_SWITCH);

    TC_REG32(RCC_CR) |= CR_HSION;
    (void)tc_wait_reg32(RCC_CR, CR_HSIRDY, CR_HSIRDY, WAIT_OSC);
    TC_REG32(RCC_CFGR) &= ~(CFGR_SW_MASK | CFGR_PRE_MASK); /* HSI, prescalers 1 */
    (void)tc_wait_reg32(RCC_CFGR, 3u << CFGR_SWS_SHIFT, 0u, WAIT_SWITCH);
    TC_REG32(RCC_CR) &= ~CR_PLLON;
    (void)tc_wait_reg32(RCC_CR, CR_PLLRDY, 0u, WAIT_SWITCH);

    uint32_t cfg;
    if (start_hse(TC_CRYSTAL_BYPASS) || start_hse(!TC_CRYSTAL_BYPASS)) {
        cfg = pllcfgr(TC_PLL_HSE_M, TC_PLL_HSE_N, TC_PLL_HSE_P, TC_PLL_HSE_Q, 1u);
    } else {
        cfg = pllcfgr(TC_PLL_HSI_M, TC_PLL_HSI_N, TC_PLL_HSI_P, TC_PLL_HSI_Q, 0u);
    }
    TC_REG32(RCC_PLLCFGR) = (TC_REG32(RCC_PLLCFGR) & ~PLLCFGR_FIELDS) | cfg;
    TC_REG32(RCC_CR) |= CR_PLLON;
    int ok = tc_wait_reg32(RCC_CR, CR_PLLRDY, CR_PLLRDY, WAIT_PLL);
#if defined(TC_STM32_F7)
    ok = ok && start_overdrive();
#endif
    if (ok) {
        uint32_t pre = (TC_RCC_HPRE << 4) | (TC_RCC_PPRE1 << 10) | (TC_RCC_PPRE2 << 13);
        TC_REG32(RCC_CFGR) = (TC_REG32(RCC_CFGR) & ~CFGR_PRE_MASK) | pre;
        TC_REG32(RCC_CFGR) = (TC_REG32(RCC_CFGR) & ~CFGR_SW_MASK) | CFGR_SW_PLL;
        ok = tc_wait_reg32(RCC_CFGR, 3u << CFGR_SWS_SHIFT, CFGR_SW_PLL << CFGR_SWS_SHIFT,
                           WAIT_SWITCH);
    }
    if (!ok) { /* back to the reset clock: HSI, prescalers 1, PLL and HSE off */
        TC_REG32(RCC_CFGR) &= ~(CFGR_SW_MASK | CFGR_PRE_MASK);
        (void)tc_wait_reg32(RCC_CFGR, 3u << CFGR_SWS_SHIFT, 0u, WAIT_SWITCH);
        TC_REG32(RCC_CR) &= ~(CR_PLLON | CR_HSEON);
    }
#if defined(TC_STM32_F7)
    TC_REG32(RCC_DCKCFGR2) &= ~(3u << UART_SEL_SHIFT); /* console USART kernel clock: its PCLK */
#endif
}

static uint32_t sysclk_hz(void)
{
    uint32_t sws = (TC_REG32(RCC_CFGR) >> CFGR_SWS_SHIFT) & 3u;
    if (sws == 1u) {
        return TC_CRYSTAL_HZ;
    }
    if (sws != 2u) {
        return HSI_HZ;
    }
    uint32_t cfg = TC_REG32(RCC_PLLCFGR);
    uint32_t m = cfg & 0x3Fu, n = (cfg >> 6) & 0x1FFu, p = 2u * (((cfg >> 16) & 3u) + 1u);
    uint32_t in = (cfg & (1u << 22)) ? TC_CRYSTAL_HZ : HSI_HZ;
    return m ? (uint32_t)((uint64_t)in * n / (m * p)) : 0u;
}

static uint32_t ahb_hz(void)
{
    uint32_t hpre = (TC_REG32(RCC_CFGR) >> 4) & 0xFu;
    static const uint8_t shift[8] = {1, 2, 3, 4, 6, 7, 8, 9}; /* HPRE 1000..1111 */
    return hpre < 8u ? sysclk_hz() : sysclk_hz() >> shift[hpre - 8u];
}

uint32_t tc_board_clock_hz(void)
{
    return ahb_hz(); /* the core runs on HCLK */
}

const char *tc_board_clock_source(void)
{
    /* the PLL named with its input: HSE (the crystal) or HSI (the RC oscillator, +-1%) */
    static const char *const names[4] = {"hsi", "hse", "pll_hse", "hsi"};
    uint32_t sws = (TC_REG32(RCC_CFGR) >> CFGR_SWS_SHIFT) & 3u;
    if (sws == 2u && !(TC_REG32(RCC_BASE + 0x04u) & (1u << 22))) { /* PLLCFGR.PLLSRC: HSI */
        return "pll_hsi";
    }
    return names[sws];
}

uint32_t tc_board_uart_clock_hz(void)
{
#if defined(TC_STM32_F7)
    uint32_t sel = (TC_REG32(RCC_DCKCFGR2) >> UART_SEL_SHIFT) & 3u;
    if (sel == 1u) {
        return sysclk_hz();
    }
    if (sel == 2u) {
        return HSI_HZ;
    }
    if (sel == 3u) {
        return 32768u;
    }
#endif
    uint32_t ppre = (TC_REG32(RCC_CFGR) >> (UART_ON_APB2 ? 13u : 10u)) & 7u;
    return ppre < 4u ? ahb_hz() : ahb_hz() >> (ppre - 3u);
}
