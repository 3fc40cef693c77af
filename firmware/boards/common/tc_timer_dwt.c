/* tinycompile board support: tc_timer.h on the DWT cycle counter (Cortex-M3/M4/M7/M33 parts).
 * A tick is one core clock cycle; the 32-bit counter wraps and differences stay exact.
 *
 * Where CYCCNT does not advance (QEMU models no DWT: reads return 0; a part without the
 * counter), the timer falls back to SysTick on the core clock with wrap counting
 * (tc_systick_start / tc_systick_read of tc_timer_systick.c, built beside this file);
 * tc_timer_kind() says which one runs (0 SysTick, 1 DWT).
 */
#include <stdint.h>

#include "tc_board_io.h"
#include "tc_timer.h"

#define TC_DEMCR 0xE000EDFCu
#define TC_DWT_CTRL 0xE0001000u
#define TC_DWT_CYCCNT 0xE0001004u
#define TC_DWT_LAR 0xE0001FB0u

static int g_tc_dwt = 1;

void tc_timer_init(void)
{
    TC_REG32(TC_DEMCR) |= 1u << 24;       /* TRCENA */
#if !defined(__ARM_ARCH_8M_MAIN__)
    TC_REG32(TC_DWT_LAR) = 0xC5ACCE55u;   /* unlock (needed on Cortex-M7) */
#endif /* ARMv8-M (Cortex-M33) has no DWT_LAR at 0xFB0: CMSIS core_cm33.h lists only LSR */
    TC_REG32(TC_DWT_CYCCNT) = 0;
    TC_REG32(TC_DWT_CTRL) |= 1u;          /* CYCCNTENA */
    for (volatile int i = 0; i < 8; i++) {
    }
    g_tc_dwt = TC_REG32(TC_DWT_CYCCNT) != 0;
    if (!g_tc_dwt) {
        tc_systick_start();
    }
}

uint32_t tc_timer_read(void)
{
    return g_tc_dwt ? TC_REG32(TC_DWT_CYCCNT) : tc_systick_read();
}

int tc_timer_kind(void)
{
    return g_tc_dwt;
}
