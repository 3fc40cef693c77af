/* tinycompile board support: tc_timer.h on SysTick (Cortex-M0+ boards and every emulator build).
 *
 * SysTick runs from the core clock (CLKSOURCE=1) with the full 24-bit reload; a tiny handler
 * counts wraps. A read takes the counter with interrupts masked and adds a wrap that is pending
 * but not yet counted. On hardware a tick is a core cycle. Under QEMU with -icount shift=7 the
 * counter follows virtual time: on the mps2 machines (25 MHz) that is 3.2 ticks per instruction.
 *
 * tc_systick_start / tc_systick_read are also the fallback of tc_timer_dwt.c (built beside this
 * file in DWT builds, TC_TIMER_DWT, which then leaves the tc_timer.h functions to it).
 */
#include <stdint.h>

#include "tc_board_io.h"
#include "tc_timer.h"

static volatile uint32_t g_tc_wraps;

void SysTick_Handler(void)
{
    g_tc_wraps++;
}

void tc_systick_start(void)
{
    TC_REG32(TC_SYST_CSR) = 0;
    TC_REG32(TC_SYST_RVR) = 0x00FFFFFFu;
    TC_REG32(TC_SYST_CVR) = 0; /* clears the counter: the next tick reloads it */
    g_tc_wraps = 0;
    TC_REG32(TC_SYST_CSR) = 7u; /* ENABLE | TICKINT | CLKSOURCE (core clock) */
}

uint32_t tc_systick_read(void)
{
    uint32_t primask;
    __asm volatile("mrs %0, primask\n cpsid i" : "=r"(primask)::"memory");
    uint32_t v = TC_REG32(TC_SYST_CVR);
    uint32_t w = g_tc_wraps;
    if (TC_REG32(TC_SCB_ICSR) & (1u << 26)) { /* PENDSTSET: a wrap not yet counted */
        v = TC_REG32(TC_SYST_CVR);
        w++;
    }
    __asm volatile("msr primask, %0" ::"r"(primask) : "memory");
    /* The counter counts 0 -> 0xFFFFFF (reload) -> ... -> 1 -> 0 (wrap): 2^24 ticks a period. */
    return (w << 24) + ((0x01000000u - v) & 0x00FFFFFFu);
}

#if !defined(TC_TIMER_DWT)
void tc_timer_init(void)
{
    tc_systick_start();
}

uint32_t tc_timer_read(void)
{
    return tc_systick_read();
}

int tc_timer_kind(void)
{
    return 0;
}
#endif
