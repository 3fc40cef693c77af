/* tinycompile board support: STM32F4 / STM32F7 / STM32H7 / STM32U5 console USART.
 *
 * Clocks are set up by tc_clock_stm32f.c (F4/F7), tc_clock_stm32h7.c or tc_clock_stm32u5.c; the
 * baud divisor comes from the USART's kernel clock as tc_board_uart_clock_hz() decodes it at run
 * time. Register addresses are the reference manuals' (RM0090 F4, RM0385 F7, RM0433 H7, RM0456
 * U5 with ST's stm32u585xx.h). tc_board.h selects the family (TC_STM32_F4 / TC_STM32_F7 /
 * TC_STM32_H7 / TC_STM32_U5), the instance (TC_UART_INSTANCE: 1, 2, 3 or 6; 1-3 on the U5) and
 * the pins (TC_UART_TX_PORT/PIN, TC_UART_RX_PORT/PIN with port A = 0, TC_UART_AF).
 *
 * Entered after the ROM bootloader's GO (`tinycompile flash --method stm32-uart`), the chip
 * still has the bootloader's USART set up: the set-up resets the console's USART and the
 * bootloader's (TC_BOOT_UART_INSTANCE) through RCC, and returns the bootloader's pins that the
 * console does not use (TC_BOOT_TX/RX_PORT/PIN) to their reset state.
 */
#include <stdint.h>

#include "tc_board_io.h"

#if defined(TC_STM32_H7)
#define RCC_BASE 0x58024400u
#define RCC_GPIOEN (RCC_BASE + 0x0E0u) /* RCC_AHB4ENR */
#define RCC_APB1EN (RCC_BASE + 0x0E8u) /* RCC_APB1LENR */
#define RCC_APB2EN (RCC_BASE + 0x0F0u) /* RCC_APB2ENR */
#define RCC_APB1RST (RCC_BASE + 0x090u) /* RCC_APB1LRSTR */
#define RCC_APB2RST (RCC_BASE + 0x098u) /* RCC_APB2RSTR */
#define GPIO_BASE(port) (0x58020000u + 0x400u * (uint32_t)(port))
#elif defined(TC_STM32_F4) || defined(TC_STM32_F7)
#define RCC_BASE 0x40023800u
#define RCC_GPIOEN (RCC_BASE + 0x30u) /* RCC_AHB1ENR */
#define RCC_APB1EN (RCC_BASE + 0x40u) /* RCC_APB1ENR */
#define RCC_APB2EN (RCC_BASE + 0x44u) /* RCC_APB2ENR */
#define RCC_APB1RST (RCC_BASE + 0x20u) /* RCC_APB1RSTR */
#define RCC_APB2RST (RCC_BASE + 0x24u) /* RCC_APB2RSTR */
#define GPIO_BASE(port) (0x40020000u + 0x400u * (uint32_t)(port))
#elif defined(TC_STM32_U5)
/* RM0456 Rev 6 section 11.8 (non-secure aliases: the part runs non-secure with TZEN = 0) */
#define RCC_BASE 0x46020C00u
#define RCC_GPIOEN (RCC_BASE + 0x08Cu) /* RCC_AHB2ENR1 */
#define RCC_APB1EN (RCC_BASE + 0x09Cu) /* RCC_APB1ENR1 */
#define RCC_APB2EN (RCC_BASE + 0x0A4u) /* RCC_APB2ENR */
#define RCC_APB1RST (RCC_BASE + 0x074u) /* RCC_APB1RSTR1 */
#define RCC_APB2RST (RCC_BASE + 0x07Cu) /* RCC_APB2RSTR */
#define GPIO_BASE(port) (0x42020000u + 0x400u * (uint32_t)(port))
#else
#error "tc_uart_stm32.c: define TC_STM32_F4, TC_STM32_F7, TC_STM32_H7 or TC_STM32_U5"
#endif

/* USART1: its own address and enable/reset bit on the U5 (0x40013800, bit 14 of RCC_APB2ENR and
 * RCC_APB2RSTR: stm32u585xx.h, RM0456); USART2/3 sit where the F4/F7/H7 have them. */
#if defined(TC_STM32_U5)
#define USART1_BASE 0x40013800u
#define USART1_BIT 14u
#else
#define USART1_BASE 0x40011000u
#define USART1_BIT 4u
#endif

#if TC_UART_INSTANCE == 1
#define UART_BASE USART1_BASE
#define UART_EN_REG RCC_APB2EN
#define UART_EN_BIT USART1_BIT
#elif TC_UART_INSTANCE == 2
#define UART_BASE 0x40004400u
#define UART_EN_REG RCC_APB1EN
#define UART_EN_BIT 17u
#elif TC_UART_INSTANCE == 3
#define UART_BASE 0x40004800u
#define UART_EN_REG RCC_APB1EN
#define UART_EN_BIT 18u
#elif TC_UART_INSTANCE == 6 && !defined(TC_STM32_U5)
#define UART_BASE 0x40011400u
#define UART_EN_REG RCC_APB2EN
#define UART_EN_BIT 5u
#else
#error "tc_uart_stm32.c: TC_UART_INSTANCE must be 1, 2, 3 or 6 (1, 2 or 3 on the STM32U5)"
#endif

#if defined(TC_STM32_F4)
/* USART "v1" layout: SR, DR, BRR, CR1. */
#define USART_SR (UART_BASE + 0x00u)
#define USART_TDR (UART_BASE + 0x04u)
#define USART_BRR (UART_BASE + 0x08u)
#define USART_CR1 (UART_BASE + 0x0Cu)
#define USART_CR1_UE (1u << 13)
#else
/* USART "v2" layout (F7, H7, U5): CR1, CR2, CR3, BRR, ..., ISR, ICR, RDR, TDR (the U5 adds
 * PRESC at 0x2C, its reset value dividing by 1, and a FIFO left off). */
#define USART_CR1 (UART_BASE + 0x00u)
#define USART_BRR (UART_BASE + 0x0Cu)
#define USART_SR (UART_BASE + 0x1Cu) /* ISR */
#define USART_TDR (UART_BASE + 0x28u)
#define USART_CR1_UE (1u << 0)
#endif
#define USART_CR1_TE (1u << 3)
#define USART_CR1_RE (1u << 2)
#define USART_SR_TXE (1u << 7)
#define USART_SR_TC (1u << 6)

static void tc_gpio_af(uint32_t port, uint32_t pin, uint32_t af, int pull_up)
{
    uint32_t base = GPIO_BASE(port);
    TC_REG32(RCC_GPIOEN) |= 1u << port;
    (void)TC_REG32(RCC_GPIOEN); /* read back: the clock is on before the GPIO is touched */
    TC_REG32(base + 0x08u) = (TC_REG32(base + 0x08u) & ~(3u << (2 * pin))) | (2u << (2 * pin));
    TC_REG32(base + 0x0Cu) = (TC_REG32(base + 0x0Cu) & ~(3u << (2 * pin))) |
                             ((pull_up ? 1u : 0u) << (2 * pin));
    uint32_t afr = base + 0x20u + 4u * (pin / 8u);
    TC_REG32(afr) = (TC_REG32(afr) & ~(0xFu << (4 * (pin % 8u)))) | (af << (4 * (pin % 8u)));
    TC_REG32(base + 0x00u) = (TC_REG32(base + 0x00u) & ~(3u << (2 * pin))) | (2u << (2 * pin));
}

/* USART n's enable/reset bit and whether it sits on APB2 (1, 6) or APB1 (2, 3): the same bit
 * in RCC's APBxENR and APBxRSTR. */
#define USART_BIT(n) ((n) == 1 ? USART1_BIT : (n) == 6 ? 5u : (n) == 2 ? 17u : 18u)
#define USART_APB2(n) ((n) == 1 || (n) == 6)

/* Pulse USART n's reset: whatever a bootloader left in it (its ROM USART after GO: enabled,
 * parity, another baud rate) goes back to the reset values. */
static void tc_usart_reset(uint32_t n)
{
    uint32_t rst = USART_APB2(n) ? RCC_APB2RST : RCC_APB1RST;
    TC_REG32(rst) |= 1u << USART_BIT(n);
    (void)TC_REG32(rst);
    TC_REG32(rst) &= ~(1u << USART_BIT(n));
}

#if defined(TC_BOOT_TX_PORT) || defined(TC_BOOT_RX_PORT)
/* A pin back to its reset state: input (analog on the U5, its GPIOs' reset mode: RM0456
 * GPIOx_MODER), no pull, AF0 (a bootloader's USART pin that the console does not use, so that
 * it no longer drives or feeds that USART). */
static void tc_gpio_release(uint32_t port, uint32_t pin)
{
    uint32_t base = GPIO_BASE(port);
    TC_REG32(RCC_GPIOEN) |= 1u << port;
    (void)TC_REG32(RCC_GPIOEN);
#if defined(TC_STM32_U5)
    TC_REG32(base + 0x00u) |= 3u << (2 * pin);
#else
    TC_REG32(base + 0x00u) &= ~(3u << (2 * pin));
#endif
    TC_REG32(base + 0x0Cu) &= ~(3u << (2 * pin));
    uint32_t afr = base + 0x20u + 4u * (pin / 8u);
    TC_REG32(afr) &= ~(0xFu << (4 * (pin % 8u)));
}
#endif

void tc_console_init(void)
{
#if defined(TC_BOOT_UART_INSTANCE)
    if (TC_BOOT_UART_INSTANCE != TC_UART_INSTANCE) {
        tc_usart_reset(TC_BOOT_UART_INSTANCE);
    }
#endif
#if defined(TC_BOOT_TX_PORT)
    tc_gpio_release(TC_BOOT_TX_PORT, TC_BOOT_TX_PIN);
#endif
#if defined(TC_BOOT_RX_PORT)
    tc_gpio_release(TC_BOOT_RX_PORT, TC_BOOT_RX_PIN);
#endif
    tc_gpio_af(TC_UART_TX_PORT, TC_UART_TX_PIN, TC_UART_AF, 0);
    tc_gpio_af(TC_UART_RX_PORT, TC_UART_RX_PIN, TC_UART_AF, 1);
    TC_REG32(UART_EN_REG) |= 1u << UART_EN_BIT;
    (void)TC_REG32(UART_EN_REG);
    tc_usart_reset(TC_UART_INSTANCE);
    TC_REG32(USART_CR1) = 0;
    uint32_t kernel_hz = tc_board_uart_clock_hz(); /* decoded from RCC: the clock it really has */
    TC_REG32(USART_BRR) = (kernel_hz + TC_UART_BAUD / 2u) / TC_UART_BAUD; /* 16x oversampling */
    TC_REG32(USART_CR1) = USART_CR1_TE | USART_CR1_RE;
    TC_REG32(USART_CR1) |= USART_CR1_UE;
}

void tc_console_putc(char c)
{
    while ((TC_REG32(USART_SR) & USART_SR_TXE) == 0) {
    }
    TC_REG32(USART_TDR) = (uint8_t)c;
}

void tc_console_flush(void)
{
    while ((TC_REG32(USART_SR) & USART_SR_TC) == 0) {
    }
}

/* Receive (validation protocol). RXNE is bit 5 of SR (F4) / ISR (F7, H7, U5). An overrun (ORE,
 * bit 3) stops reception on F7/H7/U5 until ICR.ORECF clears it; on F4 reading SR then DR clears
 * it. The received byte after an overrun is still returned: the protocol's CRC catches the loss. */
#if defined(TC_STM32_F4)
#define USART_RDR (UART_BASE + 0x04u)
#else
#define USART_RDR (UART_BASE + 0x24u)
#define USART_ICR (UART_BASE + 0x20u)
#endif
#define USART_SR_RXNE (1u << 5)
#define USART_SR_ORE (1u << 3)

uint8_t tc_console_getc(void)
{
    for (;;) {
        uint32_t sr = TC_REG32(USART_SR);
        if (sr & USART_SR_RXNE) {
            return (uint8_t)TC_REG32(USART_RDR);
        }
        if (sr & USART_SR_ORE) {
#if defined(TC_STM32_F4)
            (void)TC_REG32(USART_RDR);
#else
            TC_REG32(USART_ICR) = USART_SR_ORE;
#endif
        }
    }
}
