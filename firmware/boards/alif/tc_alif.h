/* tinycompile board support: what the Alif Ensemble E7 clock and console files share, the
 * registers of the M55-HP core's clock tree and of its DesignWare UARTs.
 *
 * Sources (github:alifsemi/alif_ensemble-cmsis-dfp): the bases from Device/soc/AE722F80F55D5/
 * include/rtss_hp/soc.h (CGU_BASE, AON_BASE, CLKCTL_SYS_BASE, CLKCTL_PER_SLV_BASE, PINMUX_BASE,
 * UARTn_BASE); the fields and their values from Debug/SVD/AE722F80F55D5LS_CM55_HP_View.svd
 * (peripherals CGU, AON, CLKCTL_SYS, CLKCTL_PER_SLV, PINMUX, LPUART, from which UART0-7 derive);
 * the oscillator dividers from Boards/DevKit-e7/Layers/M55_HP/ConductorTool/clocks.h (DIV_HFXO,
 * DIV_HFRC). No vendor header is included.
 */
#ifndef TC_ALIF_H
#define TC_ALIF_H

#include <stdint.h>

/* Oscillators (ConductorTool clocks.h: HFRC 76800000, HFXO 38400000; the kit's crystal:
 * DevKit-E7.json "external_clock_sources" OSC_HFXO 38400000). */
#define ALIF_HFRC_HZ 76800000u
#define ALIF_HFXO_HZ 38400000u
#define ALIF_MHZ 1000000u

/* CGU, clock generation unit (soc.h CGU_BASE; SVD peripheral CGU). */
#define CGU_BASE 0x1A602000u
#define CGU_OSC_CTRL (CGU_BASE + 0x00u)      /* XTAL_DEAD 20, CLKMON_ENA 16, PERIPH_XTAL_SEL 4,
                                              * SYS_XTAL_SEL 0 (0: 76.8 MHz RC, 1: 38.4 MHz XTAL) */
#define CGU_PLL_LOCK_CTRL (CGU_BASE + 0x04u) /* PLL_CALIB 4, PLL_LOCK 0 (1: PLL locked) */
#define CGU_PLL_CLK_SEL (CGU_BASE + 0x08u)   /* ES1 20, ES0 16, SYS 4, SYSREF 0 (1: the PLL) */
#define CGU_ESCLK_SEL (CGU_BASE + 0x10u)     /* ES1_OSC 13:12, ES0_OSC 9:8, ES1_PLL 5:4,
                                              * ES0_PLL 1:0 */
#define CGU_CLK_ENA (CGU_BASE + 0x14u)       /* CLK38P4M 23 (HFOSC_CLK), ES0 12 (RTSS_HP_CLK) */
#define CGU_SEL_ES0 (1u << 16)
#define CGU_SEL_SYS (1u << 4)
#define CGU_SEL_SYSREF (1u << 0)
#define CGU_ENA_HFOSC (1u << 23)
#define CGU_ENA_ES0 (1u << 12)
/* ESCLK_SEL.ES0_OSC: 0 76.8 MHz RC (HFRC_DIV_CLK), 1 38.4 MHz RC (HFRC_DIV2), 2 76.8 MHz from
 * the crystal (76M8_CLK), 3 38.4 MHz crystal (HFXO_DIV_CLK). ES0_PLL: 0-3 = 100-400 MHz. */
#define CGU_ES0_OSC_SHIFT 8u
#define CGU_ES0_PLL_MASK 3u

/* AON (soc.h AON_BASE): SYSTOP_CLK_DIV (HCLK_DIVISOR 9:8, PCLK_DIVISOR 1:0: 0 /1, 1 /2, 2 /4,
 * of SYST_ACLK: ConductorTool DIV_SYST_HCLK, DIV_SYST_PCLK), MISC_REG1 (CLKDIV 16:13, the HFXO
 * divider: codes 0-7 = /1../128, 14 /256, 15 /1024: ConductorTool DIV_HFXO). */
#define AON_SYSTOP_CLK_DIV 0x1A604020u
#define AON_MISC_REG1 0x1A604030u
/* The HFRC divider: VBAT_ANA_REG2 (ANA at 0x1A60A000, +0x3C) bits 13:11, /2^n (DIV_HFRC). */
#define ANA_VBAT_ANA_REG2 0x1A60A03Cu

/* CLKCTL_SYS (soc.h CLKCTL_SYS_BASE): SYST_ACLK's source, CLKSELECT 7:0 and CLKSELECT_CUR 15:8
 * (1: SYST_REFCLK, 2: SYSPLL_CLK through ACLK_DIV0; 0: gated), ACLK_DIV0's CLKDIV 4:0 and
 * CLKDIV_CUR 20:16 (SYSPLL_CLK / (n + 1)). */
#define CLKCTL_SYS_ACLK_CTRL 0x1A010820u
#define CLKCTL_SYS_ACLK_DIV0 0x1A010824u

/* CLKCTL_PER_SLV (soc.h CLKCTL_PER_SLV_BASE): EXPMST0_CTRL (IPCLK_FORCE 31, PCLK_FORCE 30),
 * UART_CTRL (CKEN 7:0 one bit per UART, CLK_SEL 15:8: 0 HFOSC_CLK, 1 SYST_PCLK;
 * drivers/include/sys_ctrl_uart.h). */
#define CLKCTL_PER_SLV_EXPMST0_CTRL 0x4902F000u
#define CLKCTL_PER_SLV_UART_CTRL 0x4902F008u

/* PINMUX (soc.h PINMUX_BASE): one word per pin at port * 0x20 + pin * 4, the pin's function in
 * bits 2:0 and its pad control in 23:16 (drivers/source/pinconf.c; SVD PINMUX P_n fields REN
 * 16, SMT 17, SR 18, P 20:19, E 22:21, DRV 23). */
#define ALIF_PINMUX(port, pin) (0x1A603000u + 0x20u * (uint32_t)(port) + 4u * (uint32_t)(pin))
#define ALIF_PAD_REN 0x01u     /* receiver enable */
#define ALIF_PAD_PULLUP 0x08u  /* driver disabled state: pull-up */
#define ALIF_PAD_4MA 0x20u     /* output drive strength 4 mA */

/* UART0-7: DesignWare APB UART (soc.h UART0_BASE 0x49018000 .. UART7_BASE 0x4901F000). */
#define ALIF_UART_BASE(n) (0x49018000u + 0x1000u * (uint32_t)(n))

#endif
