/* tinycompile board support: Alif Ensemble console on a DesignWare APB UART (UART0-7; the
 * DevKit's UART4 reaches the PRG USB port's USB-serial bridge on P12_1 / P12_2).
 *
 * Registers (Debug/SVD/AE722F80F55D5LS_CM55_HP_View.svd, peripheral LPUART, from which UART0-7
 * derive; the 16550 set with DesignWare's additions): RBR/THR/DLL +0x00, IER/DLH +0x04, FCR
 * +0x08, LCR +0x0C (DLAB 7), MCR +0x10, LSR +0x14 (DR 0, THRE 5, TEMT 6), USR +0x7C (TFNF 1),
 * SRR +0x88 (UR 0, RFR 1, XFR 2), DLF +0xC0 (the divisor's sixteenths, DLF_SIZE 4).
 * Set-up: the UART's clock enabled and taken from SYST_PCLK (CLKCTL_PER_SLV UART_CTRL CKEN and
 * CLK_SEL: sys_ctrl_uart.h; RTE_Device.h: RTE_UART4_CLK_SOURCE 1), a software reset (SRR: what an
 * earlier image set is gone), the divisor from the clock tc_board_uart_clock_hz() decodes (in
 * sixteenths, rounded: Alif's uart.c truncates), 8N1, FIFOs on, a wait of 32 x divisor loops
 * before use (uart.c: "hardware requires this delay before operating on new baud"), then the pins
 * (pin function TC_UART_AF; pad: RX with its receiver on and a pull-up, TX with a pull-up, 4 mA:
 * DevKit-E7.json pad_config 0x29 / 0x28).
 */
#include <stdint.h>

#include "tc_alif.h"
#include "tc_board_io.h"

#define UART ALIF_UART_BASE(TC_UART_INSTANCE)
#define UART_RBR_THR_DLL (UART + 0x00u)
#define UART_IER_DLH (UART + 0x04u)
#define UART_FCR (UART + 0x08u)
#define UART_LCR (UART + 0x0Cu)
#define UART_MCR (UART + 0x10u)
#define UART_LSR (UART + 0x14u)
#define UART_USR (UART + 0x7Cu)
#define UART_SRR (UART + 0x88u)
#define UART_DLF (UART + 0xC0u)

#define LCR_DLAB 0x80u
#define LCR_8N1 0x03u
#define LSR_DR 0x01u
#define LSR_TEMT 0x40u
#define USR_TFNF 0x02u

void tc_console_init(void)
{
    /* CKEN, CLK_SEL = SYST_PCLK */
    TC_REG32(CLKCTL_PER_SLV_UART_CTRL) |= (0x101u << TC_UART_INSTANCE);
    TC_REG32(UART_SRR) = 7u; /* UR, RFR, XFR */
    uint32_t div16 = (tc_board_uart_clock_hz() + TC_UART_BAUD / 2u) / TC_UART_BAUD;
    TC_REG32(UART_LCR) = LCR_DLAB;
    TC_REG32(UART_RBR_THR_DLL) = (div16 >> 4) & 0xFFu;
    TC_REG32(UART_IER_DLH) = (div16 >> 12) & 0xFFu;
    TC_REG32(UART_DLF) = div16 & 0xFu;
    TC_REG32(UART_LCR) = LCR_8N1;
    TC_REG32(UART_IER_DLH) = 0u; /* no interrupts */
    TC_REG32(UART_MCR) = 0u;
    TC_REG32(UART_FCR) = 7u; /* FIFOs enabled, both reset */
    for (volatile uint32_t i = 0; i < 32u * (div16 >> 4); i++) {
    }
    TC_REG32(ALIF_PINMUX(TC_UART_RX_PORT, TC_UART_RX_PIN)) =
        ((uint32_t)(ALIF_PAD_REN | ALIF_PAD_PULLUP | ALIF_PAD_4MA) << 16) | TC_UART_AF;
    TC_REG32(ALIF_PINMUX(TC_UART_TX_PORT, TC_UART_TX_PIN)) =
        ((uint32_t)(ALIF_PAD_PULLUP | ALIF_PAD_4MA) << 16) | TC_UART_AF;
}

void tc_console_putc(char c)
{
    while (!(TC_REG32(UART_USR) & USR_TFNF)) {
    }
    TC_REG32(UART_RBR_THR_DLL) = (uint8_t)c;
}

void tc_console_flush(void)
{
    while (!(TC_REG32(UART_LSR) & LSR_TEMT)) { /* FIFO and shift register empty */
    }
}

/* Receive (validation protocol): wait for LSR.DR, read RBR (errors dropped: the protocol's CRC
 * catches a damaged byte). */
uint8_t tc_console_getc(void)
{
    while (!(TC_REG32(UART_LSR) & LSR_DR)) {
    }
    return (uint8_t)(TC_REG32(UART_RBR_THR_DLL) & 0xFFu);
}
