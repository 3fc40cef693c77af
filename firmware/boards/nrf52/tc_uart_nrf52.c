/* tinycompile board support: nRF52840 clocks and console on UARTE0 (EasyDMA UART).
 *
 * Clocks: tc_clock_nrf52.c (the CPU always runs at 64 MHz; HFXO for an accurate baud rate). UARTE transmits from RAM through EasyDMA, so bytes are staged in a RAM buffer and sent a
 * line (or 64 bytes) at a time. Addresses per the nRF52840 Product Specification. tc_board.h gives
 * TC_UART_TX_PORT/PIN and TC_UART_RX_PORT/PIN (P0 = 0, P1 = 1).
 */
#include <stdint.h>

#include "tc_board_io.h"

#define UARTE0 0x40002000u
#define UARTE_TASKS_STARTRX (UARTE0 + 0x000u)
#define UARTE_TASKS_STARTTX (UARTE0 + 0x008u)
#define UARTE_EVENTS_ENDRX (UARTE0 + 0x110u)
#define UARTE_EVENTS_ENDTX (UARTE0 + 0x120u)
#define UARTE_ENABLE (UARTE0 + 0x500u)
#define UARTE_PSEL_RTS (UARTE0 + 0x508u)
#define UARTE_PSEL_TXD (UARTE0 + 0x50Cu)
#define UARTE_PSEL_CTS (UARTE0 + 0x510u)
#define UARTE_PSEL_RXD (UARTE0 + 0x514u)
#define UARTE_BAUDRATE (UARTE0 + 0x524u)
#define UARTE_RXD_PTR (UARTE0 + 0x534u)
#define UARTE_RXD_MAXCNT (UARTE0 + 0x538u)
#define UARTE_TXD_PTR (UARTE0 + 0x544u)
#define UARTE_TXD_MAXCNT (UARTE0 + 0x548u)
#define UARTE_CONFIG (UARTE0 + 0x56Cu)
#define GPIO_PORT(port) (0x50000000u + 0x300u * (uint32_t)(port))

#if TC_UART_BAUD != 115200
#error "tc_uart_nrf52.c: only 115200 baud is tabulated"
#endif
#define UARTE_BAUD_115200 0x01D60000u

static uint8_t g_tx[64];
static uint32_t g_fill;
static volatile uint8_t g_rx;

void tc_console_init(void)
{
    uint32_t tx_port = GPIO_PORT(TC_UART_TX_PORT);
    TC_REG32(tx_port + 0x508u) = 1u << TC_UART_TX_PIN;        /* OUTSET: idle high */
    TC_REG32(tx_port + 0x700u + 4u * TC_UART_TX_PIN) = 3u;     /* output, input buffer off */
    TC_REG32(GPIO_PORT(TC_UART_RX_PORT) + 0x700u + 4u * TC_UART_RX_PIN) = 3u << 2; /* pull-up */
    TC_REG32(UARTE_PSEL_TXD) = ((uint32_t)TC_UART_TX_PORT << 5) | TC_UART_TX_PIN;
    TC_REG32(UARTE_PSEL_RXD) = ((uint32_t)TC_UART_RX_PORT << 5) | TC_UART_RX_PIN;
    TC_REG32(UARTE_PSEL_RTS) = 0xFFFFFFFFu;
    TC_REG32(UARTE_PSEL_CTS) = 0xFFFFFFFFu;
    TC_REG32(UARTE_BAUDRATE) = UARTE_BAUD_115200;
    TC_REG32(UARTE_CONFIG) = 0; /* 8N1, no flow control */
    TC_REG32(UARTE_ENABLE) = 8u;
    g_fill = 0;
    /* The receiver runs from here on, not from the first tc_console_getc: what the host sends
     * during the start-up report waits in g_rx and the RX FIFO instead of being lost. */
    TC_REG32(UARTE_RXD_PTR) = (uint32_t)(uintptr_t)&g_rx;
    TC_REG32(UARTE_RXD_MAXCNT) = 1u;
    TC_REG32(UARTE_EVENTS_ENDRX) = 0;
    TC_REG32(UARTE_TASKS_STARTRX) = 1;
}

void tc_console_flush(void)
{
    if (g_fill == 0) {
        return;
    }
    TC_REG32(UARTE_TXD_PTR) = (uint32_t)(uintptr_t)g_tx;
    TC_REG32(UARTE_TXD_MAXCNT) = g_fill;
    TC_REG32(UARTE_EVENTS_ENDTX) = 0;
    TC_REG32(UARTE_TASKS_STARTTX) = 1;
    while (TC_REG32(UARTE_EVENTS_ENDTX) == 0) {
    }
    g_fill = 0;
}

void tc_console_putc(char c)
{
    g_tx[g_fill++] = (uint8_t)c;
    if (g_fill == sizeof(g_tx) || c == '\n') {
        tc_console_flush();
    }
}

/* Receive (validation protocol): UARTE receives through EasyDMA too, one byte at a time into
 * g_rx. The receiver is started by tc_console_init and restarted after each byte; bytes
 * arriving in between wait in the UARTE's RX FIFO. Pending transmit bytes are sent first (a
 * reply always ends with a flush anyway). */
uint8_t tc_console_getc(void)
{
    tc_console_flush();
    while (TC_REG32(UARTE_EVENTS_ENDRX) == 0) {
    }
    uint8_t b = g_rx;
    TC_REG32(UARTE_EVENTS_ENDRX) = 0;
    TC_REG32(UARTE_TASKS_STARTRX) = 1; /* the next byte */
    return b;
}
