/* tinycompile board support: STM32U5 (STM32U575/585) clock set-up: RM0456 Rev 6 sections 10
 * (PWR) and 11 (RCC), its FLASH and ICACHE chapters; register offsets and bit positions as ST's
 * stm32u585xx.h (cmsis-device-u5) gives them, the sequence as ST's HAL (stm32u5xx_hal_rcc.c,
 * stm32u5xx_hal_pwr_ex.c, stm32u5xx_hal_icache.c) runs it.
 *
 * Target: PLL1 from the HSE when the board file names one (crystal_hz; in the board's mode, then
 * in the other), else, or when it does not start, from MSIS at its 4 MHz reset range; PLL1M,
 * PLL1N, PLL1R, PLL1RGE and PLL1MBOOST from tc_board.h (computed by tinycompile/build/clocks.py)
 * -> SYSCLK at the board file's clock_hz, at voltage range 1 with the EPOD booster (needed above
 * 55 MHz: RM0456 PWR_VOSR.BOOSTEN), the flash wait states for the target and prefetch, the AHB
 * and APB1-3 prescalers. Then the ICACHE is enabled (it caches the code bus: instructions and
 * the weights' reads from flash).
 * Fallbacks, each wait bounded: a PLL1, voltage range or booster that does not become ready
 * leaves the core on MSIS 4 MHz, the reset clock, with prescalers 1 and the booster off. The
 * flash wait states stay at the target's (more are always safe). The console USART's kernel
 * clock is selected explicitly: its PCLK.
 */
#include <stdint.h>

#include "tc_board_io.h"

#define HSI16_HZ 16000000u
#define LSE_HZ 32768u

/* Non-secure aliases (the part runs non-secure with TZEN = 0): stm32u585xx.h RCC_BASE_NS,
 * PWR_BASE_NS, FLASH_R_BASE_NS, ICACHE_BASE_NS. */
#define RCC_BASE 0x46020C00u
#define RCC_CR (RCC_BASE + 0x00u)
#define RCC_ICSCR1 (RCC_BASE + 0x08u)
#define RCC_CFGR1 (RCC_BASE + 0x1Cu)
#define RCC_CFGR2 (RCC_BASE + 0x20u)
#define RCC_CFGR3 (RCC_BASE + 0x24u)
#define RCC_PLL1CFGR (RCC_BASE + 0x28u)
#define RCC_PLL1DIVR (RCC_BASE + 0x34u)
#define RCC_PLL1FRACR (RCC_BASE + 0x38u)
#define RCC_AHB3ENR (RCC_BASE + 0x94u)
#define RCC_CCIPR1 (RCC_BASE + 0xE0u)
#define RCC_CSR (RCC_BASE + 0xF4u)
#define PWR_BASE 0x46020800u
#define PWR_VOSR (PWR_BASE + 0x0Cu)
#define PWR_SVMSR (PWR_BASE + 0x3Cu)
#define FLASH_ACR 0x40022000u
#define ICACHE_CR 0x40030400u
#define ICACHE_SR 0x40030404u

#define CR_MSISON (1u << 0)
#define CR_MSISRDY (1u << 2)
#define CR_HSEON (1u << 16)
#define CR_HSERDY (1u << 17)
#define CR_HSEBYP (1u << 18)
#define CR_PLL1ON (1u << 24)
#define CR_PLL1RDY (1u << 25)
#define ICSCR1_MSIRGSEL (1u << 23) /* MSISRANGE from ICSCR1 (1) or RCC_CSR.MSISSRANGE (0) */
#define ICSCR1_MSISRANGE_4MHZ (4u << 28)
#define CFGR1_SWS_MASK (3u << 2)
#define CFGR2_PRE_MASK 0x77Fu /* PPRE2 10:8, PPRE1 6:4, HPRE 3:0 */
#define CFGR3_PRE_MASK 0x70u  /* PPRE3 6:4 */
#define PLL1CFGR_FIELDS 0x0007FF1Fu /* REN/QEN/PEN, MBOOST, M, FRACEN, RGE, SRC */
#define PLL1CFGR_REN (1u << 18)
#define VOSR_BOOSTRDY (1u << 14)
#define VOSR_VOSRDY (1u << 15)
#define VOSR_VOS_RANGE1 (3u << 16)
#define VOSR_BOOSTEN (1u << 18)
#define SVMSR_ACTVOSRDY (1u << 15)
#define ACR_LATENCY_MASK 0xFu
#define ACR_PRFTEN (1u << 8) /* prefetch: PREFETCH_ENABLE 1 in ST's HAL configuration */

/* Bounds in reads (>= 4 cycles each, at MSIS 4 MHz): oscillators 50000 (>= 50 ms; the HAL's
 * HSE_STARTUP_TIMEOUT is 100 ms at full speed, a crystal starts in a few ms), PLL lock, voltage
 * scaling and booster 10000 (>= 10 ms; the HAL gives the booster 2 ms), switches and register
 * updates 1000 (>= 1 ms). */
#define WAIT_OSC 50000u
#define WAIT_PLL 10000u
#define WAIT_SWITCH 1000u

/* The console USART's kernel clock selection in RCC_CCIPR1 (USART1SEL 1:0, USART2SEL 3:2,
 * USART3SEL 5:4; 00 = its APB clock) and the APB prescaler feeding it (PPRE2 for USART1 on APB2,
 * PPRE1 for USART2/3 on APB1). */
#define UART_SEL_SHIFT (2u * ((uint32_t)TC_UART_INSTANCE - 1u))
#if TC_UART_INSTANCE == 1
#define UART_PPRE_SHIFT 8u
#else
#define UART_PPRE_SHIFT 4u
#endif

/* MSIS frequencies by range (RM0456 RCC_ICSCR1.MSISRANGE; ST's system_stm32u5xx.c table). */
static const uint32_t MSI_HZ[16] = {48000000u, 24000000u, 16000000u, 12000000u,
                                    4000000u,  2000000u,  1330000u,  1000000u,
                                    3072000u,  1536000u,  1024000u,  768000u,
                                    400000u,   200000u,   133000u,   100000u};

#if defined(TC_PLL_HSE_M)
#include "tc_stm32_hse.h" /* start_hse(), shared by the STM32 families */
#endif

/* PLL1 (off) from `src` (1 MSIS, 3 HSE): PLL1CFGR source, input range, M, EPOD booster prescaler
 * and the R output enabled (fraction off); PLL1DIVR N, R, and P and Q dividers as R (outputs
 * off). PLL1MBOOST is written only with the booster off (RM0456 RCC_PLL1CFGR.PLL1MBOOST). */
static void pll1(uint32_t src, uint32_t m, uint32_t n, uint32_t r, uint32_t rge, uint32_t mboost)
{
    uint32_t cfg = src | (rge << 2) | ((m - 1u) << 8) | (mboost << 12) | PLL1CFGR_REN;
    TC_REG32(RCC_PLL1CFGR) = (TC_REG32(RCC_PLL1CFGR) & ~PLL1CFGR_FIELDS) | cfg;
    uint32_t d = r - 1u;
    TC_REG32(RCC_PLL1DIVR) = (n - 1u) | (d << 9) | (d << 16) | (d << 24);
}

static void prescalers(int target)
{
    uint32_t pre2 = target ? (TC_RCC_HPRE | (TC_RCC_PPRE1 << 4) | (TC_RCC_PPRE2 << 8)) : 0u;
    uint32_t pre3 = target ? TC_RCC_PPRE3 << 4 : 0u;
    TC_REG32(RCC_CFGR2) = (TC_REG32(RCC_CFGR2) & ~CFGR2_PRE_MASK) | pre2;
    TC_REG32(RCC_CFGR3) = (TC_REG32(RCC_CFGR3) & ~CFGR3_PRE_MASK) | pre3;
}

static void icache_on(void)
{
    /* After a reset the ICACHE invalidates itself, bypassed, BUSYF set, then enables on EN
     * (stm32u5xx_hal_icache.c: HAL_ICACHE_WaitForInvalidateComplete, HAL_ICACHE_Enable). The
     * reset's 2-way set-associative mode (WAYSEL 1) is kept. */
    (void)tc_wait_reg32(ICACHE_SR, 1u, 0u, WAIT_SWITCH);
    TC_REG32(ICACHE_CR) |= 1u;
}

void tc_board_init(void)
{
    /* PWR's interface clock (RCC_AHB3ENR.PWREN), read back before PWR is touched. */
    TC_REG32(RCC_AHB3ENR) |= 1u << 2;
    (void)TC_REG32(RCC_AHB3ENR);
    /* Wait states for the target first (enough for any slower clock), prefetch; read back. */
    TC_REG32(FLASH_ACR) = (TC_REG32(FLASH_ACR) & ~(ACR_LATENCY_MASK | ACR_PRFTEN)) |
                          TC_FLASH_LATENCY | ACR_PRFTEN;
    (void)tc_wait_reg32(FLASH_ACR, ACR_LATENCY_MASK, TC_FLASH_LATENCY, WAIT_SWITCH);

    /* Onto MSIS, prescalers 1, PLL1 off, whatever a bootloader or debugger left running; MSIS
     * back at 4 MHz (its range is written only while it is ready: RM0456 RCC_ICSCR1). */
    TC_REG32(RCC_CR) |= CR_MSISON;
    (void)tc_wait_reg32(RCC_CR, CR_MSISRDY, CR_MSISRDY, WAIT_OSC);
    TC_REG32(RCC_CFGR1) &= ~3u; /* SW = MSIS */
    (void)tc_wait_reg32(RCC_CFGR1, CFGR1_SWS_MASK, 0u, WAIT_SWITCH);
    prescalers(0);
    TC_REG32(RCC_CR) &= ~CR_PLL1ON;
    (void)tc_wait_reg32(RCC_CR, CR_PLL1RDY, 0u, WAIT_SWITCH);
    TC_REG32(RCC_ICSCR1) = (TC_REG32(RCC_ICSCR1) & ~(0xFu << 28)) | ICSCR1_MSISRANGE_4MHZ |
                           ICSCR1_MSIRGSEL;
    (void)tc_wait_reg32(RCC_CR, CR_MSISRDY, CR_MSISRDY, WAIT_OSC);

    /* PLL1's source and dividers, with the booster off (it takes PLL1's input / PLL1MBOOST). */
    TC_REG32(PWR_VOSR) &= ~VOSR_BOOSTEN;
#if defined(TC_PLL_HSE_M)
    if (start_hse(TC_CRYSTAL_BYPASS) || start_hse(!TC_CRYSTAL_BYPASS)) {
        pll1(3u, TC_PLL_HSE_M, TC_PLL_HSE_N, TC_PLL_HSE_R, TC_PLL_HSE_RGE, TC_PLL_HSE_MBOOST);
    } else
#endif
    {
        pll1(1u, TC_PLL_MSIS_M, TC_PLL_MSIS_N, TC_PLL_MSIS_R, TC_PLL_MSIS_RGE,
             TC_PLL_MSIS_MBOOST);
    }
    /* Voltage range 1 and the booster, as HAL_PWREx_ControlVoltageScaling sets them together;
     * then VOSRDY, BOOSTRDY (HAL_RCC_ClockConfig waits for it before selecting PLL1) and
     * PWR_SVMSR.ACTVOSRDY. */
    TC_REG32(PWR_VOSR) = (TC_REG32(PWR_VOSR) & ~(3u << 16)) | VOSR_VOS_RANGE1 | VOSR_BOOSTEN;
    int ok = tc_wait_reg32(PWR_VOSR, VOSR_VOSRDY | VOSR_BOOSTRDY, VOSR_VOSRDY | VOSR_BOOSTRDY,
                           WAIT_PLL);
    ok = ok && tc_wait_reg32(PWR_SVMSR, SVMSR_ACTVOSRDY, SVMSR_ACTVOSRDY, WAIT_PLL);
    if (ok) {
        TC_REG32(RCC_CR) |= CR_PLL1ON;
        ok = tc_wait_reg32(RCC_CR, CR_PLL1RDY, CR_PLL1RDY, WAIT_PLL);
    }
    if (ok) {
        prescalers(1);
        TC_REG32(RCC_CFGR1) = (TC_REG32(RCC_CFGR1) & ~3u) | 3u; /* SW = PLL1 (pll1_r_ck) */
        ok = tc_wait_reg32(RCC_CFGR1, CFGR1_SWS_MASK, 3u << 2, WAIT_SWITCH);
    }
    if (!ok) { /* back to the reset clock: MSIS, prescalers 1, PLL1, HSE and booster off */
        TC_REG32(RCC_CFGR1) &= ~3u;
        (void)tc_wait_reg32(RCC_CFGR1, CFGR1_SWS_MASK, 0u, WAIT_SWITCH);
        prescalers(0);
        TC_REG32(RCC_CR) &= ~(CR_PLL1ON | CR_HSEON);
        TC_REG32(PWR_VOSR) &= ~VOSR_BOOSTEN;
    }
    TC_REG32(RCC_CCIPR1) &= ~(3u << UART_SEL_SHIFT); /* console USART kernel clock: its PCLK */
    icache_on();
}

static uint32_t msis_hz(void)
{
    uint32_t icscr1 = TC_REG32(RCC_ICSCR1);
    uint32_t range = (icscr1 & ICSCR1_MSIRGSEL) ? icscr1 >> 28 : (TC_REG32(RCC_CSR) >> 12) & 0xFu;
    return MSI_HZ[range & 0xFu];
}

static uint32_t sysclk_hz(void)
{
    uint32_t sws = (TC_REG32(RCC_CFGR1) >> 2) & 3u;
    if (sws == 0u) {
        return msis_hz();
    }
    if (sws == 1u) {
        return HSI16_HZ;
    }
    if (sws == 2u) {
        return TC_CRYSTAL_HZ;
    }
    uint32_t cfg = TC_REG32(RCC_PLL1CFGR), div = TC_REG32(RCC_PLL1DIVR);
    uint32_t src = cfg & 3u, m = ((cfg >> 8) & 0xFu) + 1u;
    uint32_t in = src == 1u ? msis_hz() : src == 2u ? HSI16_HZ : src == 3u ? TC_CRYSTAL_HZ : 0u;
    uint32_t n = (div & 0x1FFu) + 1u, r = ((div >> 24) & 0x7Fu) + 1u;
    uint32_t frac = (cfg & (1u << 4)) ? (TC_REG32(RCC_PLL1FRACR) >> 3) & 0x1FFFu : 0u;
    /* VCO = input / M * (N + FRACN / 2^13) (RM0456 RCC_PLL1FRACR) */
    return (uint32_t)((uint64_t)in * ((uint64_t)n * 8192u + frac) / ((uint64_t)m * r * 8192u));
}

static uint32_t hclk_hz(void)
{
    uint32_t hpre = TC_REG32(RCC_CFGR2) & 0xFu;
    static const uint8_t shift[8] = {1, 2, 3, 4, 6, 7, 8, 9}; /* HPRE 1000..1111 */
    return hpre < 8u ? sysclk_hz() : sysclk_hz() >> shift[hpre - 8u];
}

uint32_t tc_board_clock_hz(void)
{
    return hclk_hz(); /* the core runs on HCLK */
}

const char *tc_board_clock_source(void)
{
    /* PLL1 named with its input (RCC_PLL1CFGR.PLL1SRC): MSIS (RC), HSI16 (RC) or HSE */
    static const char *const names[4] = {"msis", "hsi", "hse", "pll"};
    static const char *const plls[4] = {"pll", "pll_msis", "pll_hsi", "pll_hse"};
    uint32_t sws = (TC_REG32(RCC_CFGR1) >> 2) & 3u;
    return sws == 3u ? plls[TC_REG32(RCC_BASE + 0x28u) & 3u] : names[sws];
}

uint32_t tc_board_uart_clock_hz(void)
{
    uint32_t sel = (TC_REG32(RCC_CCIPR1) >> UART_SEL_SHIFT) & 3u;
    if (sel == 1u) {
        return sysclk_hz();
    }
    if (sel == 2u) {
        return HSI16_HZ;
    }
    if (sel == 3u) {
        return LSE_HZ;
    }
    uint32_t ppre = (TC_REG32(RCC_CFGR2) >> UART_PPRE_SHIFT) & 7u;
    return ppre < 4u ? hclk_hz() : hclk_hz() >> (ppre - 3u);
}
