/* tinycompile board support: SAMD21 (Arduino Zero) console on a SERCOM USART.
 *
 * Clocks: tc_clock_samd21.c (generator 0 on DFLL48M, else OSC8M); the SERCOM's core clock is
 * generator 0 and the baud value comes from its frequency at run time. Register addresses per
 * the SAM D21 datasheet.
 * tc_board.h gives TC_UART_INSTANCE (SERCOM number), TC_UART_TX_PORT/PIN, TC_UART_RX_PORT/PIN
 * (port A = 0), TC_UART_PMUX (peripheral function, A = 0), TC_UART_TXPO and TC_UART_RXPO.
 */
#include <stdint.h>

#include "tc_board_io.h"

#define PM_APBCMASK 0x40000420u
#define GCLK_STATUS 0x40000C01u
#define GCLK_CLKCTRL 0x40000C02u
#define PORT_GROUP(port) (0x41004400u + 0x80u * (uint32_t)(port))

#define SERCOM_BASE (0x42000800u + 0x400u * (uint32_t)TC_UART_INSTANCE)
#define USART_CTRLA (SERCOM_BASE + 0x00u)
#define USART_CTRLB (SERCOM_BASE + 0x04u)
#define USART_BAUD (SERCOM_BASE + 0x0Cu)
#define USART_INTFLAG (SERCOM_BASE + 0x18u)
#define USART_SYNCBUSY (SERCOM_BASE + 0x1Cu)
#define USART_DATA (SERCOM_BASE + 0x28u)

#define GCLK_ID_SERCOM0_CORE 0x14u

static void gclk_sync(void)
{
    while (TC_REG8(GCLK_STATUS) & 0x80u) { /* SYNCBUSY */
    }
}

static void tc_pin_mux(uint32_t port, uint32_t pin, uint32_t func, int input)
{
    uint32_t group = PORT_GROUP(port);
    uint32_t pmux = group + 0x30u + pin / 2u;
    uint8_t shift = (uint8_t)((pin & 1u) ? 4u : 0u);
    TC_REG8(pmux) = (uint8_t)((TC_REG8(pmux) & ~(0xFu << shift)) | (func << shift));
    TC_REG8(group + 0x40u + pin) = (uint8_t)(1u | (input ? 2u : 0u)); /* PMUXEN, INEN */
}

void tc_console_init(void)
{
    TC_REG32(PM_APBCMASK) |= 1u << (2u + TC_UART_INSTANCE);
    TC_REG16(GCLK_CLKCTRL) = (uint16_t)((GCLK_ID_SERCOM0_CORE + TC_UART_INSTANCE) | (0u << 8) |
                                        (1u << 14)); /* generator 0, CLKEN */
    gclk_sync();
    tc_pin_mux(TC_UART_TX_PORT, TC_UART_TX_PIN, TC_UART_PMUX, 0);
    tc_pin_mux(TC_UART_RX_PORT, TC_UART_RX_PIN, TC_UART_PMUX, 1);

    TC_REG32(USART_CTRLA) = 1u; /* SWRST */
    while (TC_REG32(USART_SYNCBUSY) & 1u) {
    }
    /* Internal clock, 16x arithmetic sampling, LSB first, pads per the board file. */
    TC_REG32(USART_CTRLA) = (1u << 2) | ((uint32_t)TC_UART_TXPO << 16) |
                            ((uint32_t)TC_UART_RXPO << 20) | (1u << 30);
    TC_REG32(USART_CTRLB) = (1u << 16) | (1u << 17); /* TXEN, RXEN, 8 bits */
    while (TC_REG32(USART_SYNCBUSY) & 4u) {
    }
    /* BAUD = 65536 * (1 - 16 * baud / f_ref) */
    uint32_t ref_hz = tc_board_uart_clock_hz(); /* generator 0, as tc_board_init left it */
    uint64_t frac = ((uint64_t)65536u * 16u * TC_UART_BAUD + ref_hz / 2u) / ref_hz;
    TC_REG16(USART_BAUD) = (uint16_t)(65536u - (uint32_t)frac);
    TC_REG32(USART_CTRLA) |= 2u; /* ENABLE */
    while (TC_REG32(USART_SYNCBUSY) & 2u) {
    }
}

void tc_console_putc(char c)
{
    while ((TC_REG8(USART_INTFLAG) & 1u) == 0) { /* DRE */
    }
    TC_REG16(USART_DATA) = (uint8_t)c;
}

void tc_console_flush(void)
{
    while ((TC_REG8(USART_INTFLAG) & 2u) == 0) { /* TXC */
    }
}

/* Receive (validation protocol): wait for INTFLAG.RXC (bit 2), read DATA. A buffer overflow
 * (STATUS.BUFOVF, bit 2) is cleared by writing 1; the protocol's CRC catches the lost byte. */
#define USART_STATUS (SERCOM_BASE + 0x1Au)

uint8_t tc_console_getc(void)
{
    while ((TC_REG8(USART_INTFLAG) & 4u) == 0) { /* RXC */
    }
    if (TC_REG16(USART_STATUS) & 4u) {
        TC_REG16(USART_STATUS) = 4u;
    }
    return (uint8_t)TC_REG16(USART_DATA);
}
