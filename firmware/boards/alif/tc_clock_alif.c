/* tinycompile board support: Alif Ensemble E7 (AE722F80F55D5), the M55-HP core's clock, memory
 * attributes and the clock queries. Registers: tc_alif.h (and its sources).
 *
 * Who sets what. The Secure Enclave (SE) starts the 38.4 MHz crystal and the PLL and sets the
 * system's clock muxes and dividers from the ATOC's device configuration before it releases this
 * core (the DevKit's: Boards/DevKit-e7/Layers/M55_HP/ConductorTool/DevKit-E7.json "change_sets":
 * PLL_CLK_SEL 0x00110011 (RTSS_HE/HP_CLK, SYSPLL_CLK, SYST_REFCLK from the PLL), ESCLK_SEL 0x33
 * (the HP core at the PLL's 400 MHz), ACLK_CTRL 2 (SYST_ACLK = SYSPLL_CLK, 400 MHz), SYSTOP_CLK_DIV
 * 0x102 (HCLK /2, PCLK /4: 100 MHz)). Alif's own start-up code (Device/core/common/source/
 * system.c) sets no clock: it takes these values on trust (sys_clocks.c) or asks the SE
 * (se_services clock_runtime.c). This file reads them from the CGU instead, and itself:
 *   - sets the MPU as Alif's mpu.c does for the two regions this firmware touches: the host
 *     peripherals 0x1A000000-0x1AFFFFFF (CGU, AON, pin mux) as Device memory, never cached or
 *     executed (the default memory map makes that range Normal, cacheable memory), and MRAM
 *     read-only, write-through; everything else keeps the default map (PRIVDEFENA);
 *   - forces the EXPMST0 peripherals' clocks on (EXPMST0_CTRL IPCLK_FORCE, PCLK_FORCE), as
 *     system.c does on the E7 (soc_features.h: SOC_FEAT_FORCE_ENABLE_SYSTEM_CLOCKS 1);
 *   - sets the M55 prefetcher as system.c does (MEMSYSCTL PFCR: MAX_OS 5, MAX_LA 6, MIN_LA 2);
 *   - waits for the PLL lock (bounded: the SE may still be starting it) and, when the PLL is
 *     locked but this core does not run at the board's clock_hz from it (an ATOC device
 *     configuration of one's own), moves its core there: ESCLK_SEL.ES0_PLL = TC_ALIF_ES0_PLL
 *     (clocks.py), PLL_CLK_SEL.ES0 = 1. A tap is never changed while the core runs on it: from
 *     another PLL tap the core goes by way of the 76.8 MHz RC oscillator, which always runs.
 * Without the PLL (no crystal: the SE's PLL start needs it, se_services SERVICES_pll_initialize;
 * or no lock) the core stays where the SE left it, on an oscillator (the kit's ES0_OSC: the
 * 76.8 MHz RC oscillator, the board's reset_clock_hz), and the queries report that.
 * The PLL's output PLL_CLK1 is taken to be 800 MHz: the SVD's fixed taps (ES0_PLL 100-400 MHz,
 * SYSPLL_CLK = PLL_CLK1 / 2 = 400 MHz, clocks.h) assume it.
 */
#include <stdint.h>

#include "tc_alif.h"
#include "tc_board_io.h"

/* Bound in reads (>= 4 cycles each, at the 76.8 MHz RC oscillator): 200000, >= 10 ms. */
#define WAIT_PLL 200000u

/* ARMv8-M MPU (Armv8-M ARM B3.5: MPU_TYPE, MPU_CTRL, MPU_RNR, MPU_RBAR, MPU_RLAR, MPU_MAIR0). */
#define MPU_TYPE 0xE000ED90u
#define MPU_CTRL 0xE000ED94u
#define MPU_RNR 0xE000ED98u
#define MPU_RBAR 0xE000ED9Cu
#define MPU_RLAR 0xE000EDA0u
#define MPU_MAIR0 0xE000EDC0u
/* Cortex-M55 MEMSYSCTL prefetcher control (CMSIS core_cm55.h: MEMSYSCTL_BASE 0xE001E000, PFCR
 * +4: MAX_OS 9:7, MAX_LA 6:4, MIN_LA 3:1, ENABLE 0; Alif's core_config.h values). */
#define MEMSYSCTL_PFCR 0xE001E004u

static void mpu_setup(void)
{
    TC_REG32(MPU_CTRL) = 0u;
    TC_BARRIER();
    uint32_t regions = (TC_REG32(MPU_TYPE) >> 8) & 0xFFu; /* DREGION */
    for (uint32_t i = 0; i < regions; i++) {              /* whatever an earlier image set */
        TC_REG32(MPU_RNR) = i;
        TC_REG32(MPU_RLAR) = 0u;
    }
    /* Attribute 0: Device-nGnRE (0x04); 1: Normal, write-through, read-allocate, non-transient,
     * inner and outer (0xAA): mpu.c's MEMATTRIDX_DEVICE_nGnRE and MEMATTRIDX_NORMAL_WT_RA. */
    TC_REG32(MPU_MAIR0) = 0x04u | (0xAAu << 8);
    TC_REG32(MPU_RNR) = 0u; /* host peripherals: AP 01 (read/write), XN; limit 0x1AFFFFFF */
    TC_REG32(MPU_RBAR) = 0x1A000000u | (1u << 1) | 1u;
    TC_REG32(MPU_RLAR) = 0x1AFFFFE0u | (0u << 1) | 1u;
    TC_REG32(MPU_RNR) = 1u; /* MRAM, 5.5 MB (SOC_FEAT_MRAM_SIZE): AP 11 (read-only), executable */
    TC_REG32(MPU_RBAR) = 0x80000000u | (3u << 1);
    TC_REG32(MPU_RLAR) = 0x8057FFE0u | (1u << 1) | 1u;
    TC_REG32(MPU_CTRL) = 7u; /* ENABLE, HFNMIENA, PRIVDEFENA (mpu.c's MPU_CONTROL) */
    TC_BARRIER();
}

void tc_board_init(void)
{
    mpu_setup();
    TC_REG32(CLKCTL_PER_SLV_EXPMST0_CTRL) |= (1u << 31) | (1u << 30);
    TC_REG32(MEMSYSCTL_PFCR) = (5u << 7) | (6u << 4) | (2u << 1) | 1u;

    int locked = tc_wait_reg32(CGU_PLL_LOCK_CTRL, 1u, 1u, WAIT_PLL);
    uint32_t sel = TC_REG32(CGU_PLL_CLK_SEL), es = TC_REG32(CGU_ESCLK_SEL);
    int there = (sel & CGU_SEL_ES0) && (es & CGU_ES0_PLL_MASK) == TC_ALIF_ES0_PLL;
    if (locked && !there) {
        if (sel & CGU_SEL_ES0) { /* on another PLL tap: first onto the RC oscillator */
            TC_REG32(CGU_ESCLK_SEL) = es & ~(3u << CGU_ES0_OSC_SHIFT);
            TC_REG32(CGU_PLL_CLK_SEL) = sel & ~CGU_SEL_ES0;
            TC_BARRIER();
        }
        TC_REG32(CGU_ESCLK_SEL) = (TC_REG32(CGU_ESCLK_SEL) & ~CGU_ES0_PLL_MASK) | TC_ALIF_ES0_PLL;
        TC_REG32(CGU_PLL_CLK_SEL) |= CGU_SEL_ES0;
        TC_BARRIER();
    }
}

static int pll_locked(void)
{
    return (int)(TC_REG32(CGU_PLL_LOCK_CTRL) & 1u);
}

static uint32_t hfrc_div_hz(void) /* HFRC_DIV_CLK: 76.8 MHz / 2^DIV_HFRC */
{
    return ALIF_HFRC_HZ >> ((TC_REG32(ANA_VBAT_ANA_REG2) >> 11) & 7u);
}

static uint32_t hfxo_div_hz(void) /* HFXO_DIV_CLK: 38.4 MHz / DIV_HFXO */
{
    uint32_t code = (TC_REG32(AON_MISC_REG1) >> 13) & 0xFu;
    return code < 8u ? ALIF_HFXO_HZ >> code : code == 14u ? ALIF_HFXO_HZ >> 8 :
           code == 15u ? ALIF_HFXO_HZ >> 10 : 0u;
}

static uint32_t osc_sys_hz(void) /* HFXO_CLK: the oscillator side of SYSPLL_CLK, SYST_REFCLK */
{
    return (TC_REG32(CGU_OSC_CTRL) & 1u) ? hfxo_div_hz() : hfrc_div_hz();
}

static uint32_t pclk_hz(void) /* SYST_PCLK = SYST_ACLK / PCLK_DIVISOR */
{
    uint32_t sel = TC_REG32(CGU_PLL_CLK_SEL), aclk = 0u;
    uint32_t source = (TC_REG32(CLKCTL_SYS_ACLK_CTRL) >> 8) & 0xFFu; /* CLKSELECT_CUR */
    if (source == 1u) { /* SYST_REFCLK: the PLL's 100 MHz or the oscillator */
        aclk = (sel & CGU_SEL_SYSREF) ? (pll_locked() ? 100u * ALIF_MHZ : 0u) : osc_sys_hz();
    } else if (source == 2u) { /* SYSPLL_CLK (the PLL's 400 MHz or the oscillator) / n */
        uint32_t sys = (sel & CGU_SEL_SYS) ? (pll_locked() ? 400u * ALIF_MHZ : 0u) : osc_sys_hz();
        aclk = sys / (((TC_REG32(CLKCTL_SYS_ACLK_DIV0) >> 16) & 0x1Fu) + 1u);
    }
    uint32_t div = TC_REG32(AON_SYSTOP_CLK_DIV) & 3u;
    return div < 3u ? aclk >> div : 0u;
}

uint32_t tc_board_clock_hz(void)
{
    uint32_t es = TC_REG32(CGU_ESCLK_SEL);
    if (TC_REG32(CGU_PLL_CLK_SEL) & CGU_SEL_ES0) {
        return pll_locked() ? ((es & CGU_ES0_PLL_MASK) + 1u) * 100u * ALIF_MHZ : 0u;
    }
    switch ((es >> CGU_ES0_OSC_SHIFT) & 3u) {
    case 0u:
        return hfrc_div_hz();
    case 1u:
        return hfrc_div_hz() / 2u;
    case 2u:
        return 2u * ALIF_HFXO_HZ; /* 76M8_CLK */
    default:
        return hfxo_div_hz();
    }
}

const char *tc_board_clock_source(void)
{
    if (TC_REG32(CGU_PLL_CLK_SEL) & CGU_SEL_ES0) {
        return "pll";
    }
    return ((TC_REG32(CGU_ESCLK_SEL) >> CGU_ES0_OSC_SHIFT) & 3u) < 2u ? "hfrc" : "hfxo";
}

uint32_t tc_board_uart_clock_hz(void)
{
    uint32_t ctrl = TC_REG32(CLKCTL_PER_SLV_UART_CTRL);
    if (!(ctrl & (1u << TC_UART_INSTANCE))) {
        return 0u; /* CKEN: gated */
    }
    if (ctrl & (1u << (8u + TC_UART_INSTANCE))) {
        return pclk_hz();
    }
    if (!(TC_REG32(CGU_CLK_ENA) & CGU_ENA_HFOSC)) {
        return 0u;
    }
    return (TC_REG32(CGU_OSC_CTRL) & (1u << 4)) ? hfxo_div_hz() : hfrc_div_hz() / 2u; /* HFOSC */
}
