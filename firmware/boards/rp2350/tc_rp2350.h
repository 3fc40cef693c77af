/* tinycompile board support: what the RP2350's clock and console files share.
 *
 * Addresses from pico-sdk 2.2.0 src/rp2350/hardware_regs/include/hardware/regs/ (addressmap.h
 * for the bases; the register and field offsets from the file named beside each). Every
 * peripheral on the APB has atomic aliases (addressmap.h REG_ALIAS_*): +0x1000 XOR, +0x2000
 * SET, +0x3000 CLR of the written bits.
 */
#ifndef TC_RP2350_H
#define TC_RP2350_H

#include <stdint.h>

#define RP_ATOMIC_SET 0x2000u
#define RP_ATOMIC_CLR 0x3000u

/* resets.h: RESET at +0x0, RESET_DONE at +0x8; the blocks' bits. */
#define RP_RESETS_RESET 0x40020000u
#define RP_RESETS_DONE 0x40020008u
#define RP_RESET_IO_BANK0 (1u << 6)
#define RP_RESET_PADS_BANK0 (1u << 9)
#define RP_RESET_PLL_SYS (1u << 14)
#define RP_RESET_UART0 (1u << 26)

/* clocks.h: CLK_REF_CTRL +0x30 (SRC bits 1:0: 0 rosc, 2 xosc), CLK_REF_DIV +0x34 (INT in bits
 * 23:16), CLK_REF_SELECTED +0x38 (one-hot), CLK_SYS_CTRL +0x3c (SRC bit 0: 0 clk_ref, 1 aux;
 * AUXSRC bits 7:5: 0 pll_sys, 2 rosc, 3 xosc), CLK_SYS_DIV +0x40 (INT in bits 31:16),
 * CLK_SYS_SELECTED +0x44, CLK_PERI_CTRL +0x48 (ENABLE bit 11, AUXSRC bits 7:5: 0 clk_sys,
 * ENABLED bit 28), CLK_PERI_DIV +0x4c (INT in bits 17:16). */
#define RP_CLK_REF_CTRL 0x40010030u
#define RP_CLK_REF_DIV 0x40010034u
#define RP_CLK_REF_SELECTED 0x40010038u
#define RP_CLK_SYS_CTRL 0x4001003Cu
#define RP_CLK_SYS_DIV 0x40010040u
#define RP_CLK_SYS_SELECTED 0x40010044u
#define RP_CLK_PERI_CTRL 0x40010048u
#define RP_CLK_PERI_DIV 0x4001004Cu

/* xosc.h: CTRL +0x0 (FREQ_RANGE 0xaa0 = 1-15 MHz in bits 11:0, ENABLE 0xfab in bits 23:12),
 * STATUS +0x4 (STABLE bit 31), STARTUP +0xc (DELAY in 256-cycle units, bits 13:0). */
#define RP_XOSC_CTRL 0x40048000u
#define RP_XOSC_STATUS 0x40048004u
#define RP_XOSC_STARTUP 0x4004800Cu

/* pll.h (PLL_SYS): CS +0x0 (REFDIV bits 5:0, LOCK bit 31), PWR +0x4 (PD bit 0, POSTDIVPD bit 3,
 * VCOPD bit 5), FBDIV_INT +0x8 (bits 11:0), PRIM +0xc (POSTDIV1 bits 18:16, POSTDIV2 14:12). */
#define RP_PLL_CS 0x40050000u
#define RP_PLL_PWR 0x40050004u
#define RP_PLL_FBDIV_INT 0x40050008u
#define RP_PLL_PRIM 0x4005000Cu

/* io_bank0.h: GPIOn_CTRL at +8n+4 (FUNCSEL bits 4:0; 2 = UART0 TX on GP0, RX on GP1).
 * pads_bank0.h: GPIOn at +4n+4 (ISO bit 8, reset 1: the pad is isolated until software
 * clears it; OD bit 7; IE bit 6, reset 0). sio.h: GPIO_IN at +0x4. */
#define RP_IO_CTRL(pin) (0x40028000u + 8u * (uint32_t)(pin) + 4u)
#define RP_PADS_GPIO(pin) (0x40038000u + 4u * (uint32_t)(pin) + 4u)
#define RP_PADS_ISO (1u << 8)
#define RP_PADS_OD (1u << 7)
#define RP_PADS_IE (1u << 6)
#define RP_SIO_GPIO_IN 0xD0000004u

/* uart.h (UART0, an Arm PL011): DR +0x0, FR +0x18, IBRD +0x24, FBRD +0x28, LCR_H +0x2c,
 * CR +0x30. */
#define RP_UART0_BASE 0x40070000u

/* The ring oscillator's frequency as the console measured it against the host's bit timing
 * (tc_uart_rp2350.c), 0 until then; set only while the chip runs on the ROSC (no crystal). */
extern uint32_t tc_rp2350_rosc_hz;

/* 1 when clk_sys runs from the ring oscillator (the crystal did not start). */
int tc_rp2350_on_rosc(void);

#endif
