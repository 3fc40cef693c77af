/* tinycompile board support: the interface between the generic mains/startup and the per-family
 * drivers in firmware/boards/<family>/.
 *
 * Every build includes the generated tc_board.h (DIR/board/tc_board.h) first: it names the board,
 * the variant (TC_VARIANT_EMULATOR or TC_VARIANT_BOARD), the timer (TC_TIMER_DWT or
 * TC_TIMER_SYSTICK) and the console UART's instance, pins and baud rate.
 */
#ifndef TC_BOARD_IO_H
#define TC_BOARD_IO_H

#include <stdint.h>

#include "tc_board.h"

#if defined(TC_HOST_REGS)
/* Host tests (tests/test_clocks.py): every register access goes through a behavioural model of
 * the part's clock tree, which returns where the register's value lives. */
volatile void *tc_host_reg(uintptr_t addr, unsigned bytes);
#define TC_REG32(addr) (*(volatile uint32_t *)tc_host_reg((uintptr_t)(addr), 4u))
#define TC_REG16(addr) (*(volatile uint16_t *)tc_host_reg((uintptr_t)(addr), 2u))
#define TC_REG8(addr) (*(volatile uint8_t *)tc_host_reg((uintptr_t)(addr), 1u))
#define TC_BARRIER() ((void)0)
#else
#define TC_REG32(addr) (*(volatile uint32_t *)(uintptr_t)(addr))
#define TC_REG16(addr) (*(volatile uint16_t *)(uintptr_t)(addr))
#define TC_REG8(addr) (*(volatile uint8_t *)(uintptr_t)(addr))
#define TC_BARRIER() __asm volatile("dsb\n isb" ::: "memory")
#endif

/* Bounded wait: 1 once (reg & mask) == want, 0 after `limit` reads without it. One iteration is
 * a volatile load, a compare and a branch: at least 4 core cycles on every Cortex-M, so a bound
 * of N lasts at least 4 * N / f_core seconds (the clock files state it at the reset clock). */
static inline int tc_wait_reg32(uintptr_t addr, uint32_t mask, uint32_t want, uint32_t limit)
{
    for (uint32_t i = 0; i < limit; i++) {
        if ((TC_REG32(addr) & mask) == want) {
            return 1;
        }
    }
    return 0;
}

/* Cortex-M system control space (ARMv6-M / ARMv7-M architecture reference manuals). */
#define TC_SCB_ICSR 0xE000ED04u
#define TC_SCB_VTOR 0xE000ED08u
#define TC_SCB_CCR 0xE000ED14u
#define TC_SCB_CFSR 0xE000ED28u
#define TC_SCB_HFSR 0xE000ED2Cu
#define TC_SCB_MMFAR 0xE000ED34u
#define TC_SCB_BFAR 0xE000ED38u
#define TC_SCB_CPACR 0xE000ED88u
#define TC_SYST_CSR 0xE000E010u
#define TC_SYST_RVR 0xE000E014u
#define TC_SYST_CVR 0xE000E018u

/* Per-family clock set-up (firmware/boards/<family>/tc_clock_*.c; the qemu-m* boards' fixed
 * clock lives in mps2/tc_uart_cmsdk.c). tc_board_init sets up the board file's clock_hz and falls
 * back, source by source, to the reset clock when an oscillator or PLL does not start; every wait
 * is bounded. The three queries decode the clock tree the part really runs on. */
void tc_board_init(void);              /* clocks: called first thing in main */
uint32_t tc_board_clock_hz(void);      /* core clock now */
const char *tc_board_clock_source(void); /* its source: "pll", "hse", "hsi", "dfll", ... */
uint32_t tc_board_uart_clock_hz(void); /* the console UART's kernel clock now */

/* Per-family driver (one of firmware/boards/<family>/tc_uart_*.c). */
void tc_console_init(void);        /* console UART at TC_UART_BAUD, from the clock now */
void tc_console_putc(char c);      /* blocking */
void tc_console_flush(void);       /* wait until the last byte has left the shifter */
uint8_t tc_console_getc(void);     /* blocking: the next received byte */

/* Console text helpers (tc_console.c), all blocking. tc_console_ready is set once the UART is
 * up; the fault handler prints only then. */
extern volatile int tc_console_ready;
void tc_puts(const char *s);
void tc_put_u32(uint32_t v);
void tc_put_hex32(uint32_t v);
void tc_put_hex_bytes(const void *data, uint32_t n);

/* Semihosting (tc_semihost.c): valid only under a debugger or QEMU -semihosting. */
void tc_semihost_write0(const char *s);
void tc_semihost_exit(int code) __attribute__((noreturn));

/* Stack painting (tc_startup.c): bytes of the stack reserve ever touched since reset. */
uint32_t tc_stack_used(void);
uint32_t tc_stack_reserve(void);

/* The timer tc_timer_read() runs on: 1 = DWT->CYCCNT (core cycles), 0 = SysTick (the
 * tc_timer_systick.c builds, and DWT builds whose cycle counter does not count, as in QEMU). */
int tc_timer_kind(void);
/* SysTick on the core clock, 24-bit reload, wraps counted (tc_timer_systick.c): the SysTick
 * timer, and the DWT timer's fallback where CYCCNT does not count. */
void tc_systick_start(void);
uint32_t tc_systick_read(void);

/* Validation protocol (tc_proto.c): answers the host on the console UART for ever. The layer
 * tick array and mark are tc_main_board.c's profile hook's (null in builds without it). */
void tc_proto_loop(uint32_t *layer_ticks, uint32_t *layer_mark) __attribute__((noreturn));

/* Exit status of a firmware that took a fault (emulator variant). */
#define TC_EXIT_FAULT 70

#endif /* TC_BOARD_IO_H */
