/* tinycompile board support: tc_timer.h on the DWT cycle counter (Cortex-M3/M4/M7 hardware).
 * A tick is one core clock cycle; the 32-bit counter wraps and differences stay exact.
 */
#include <stdint.h>

#include "tc_board_io.h"
#include "tc_timer.h"

#define TC_DEMCR 0xE000EDFCu
#define TC_DWT_CTRL 0xE0001000u
#define TC_DWT_CYCCNT 0xE0001004u
#define TC_DWT_LAR 0xE0001FB0u

void tc_timer_init(void)
{
    TC_REG32(TC_DEMCR) |= 1u << 24;       /* TRCENA */
    TC_REG32(TC_DWT_LAR) = 0xC5ACCE55u;   /* unlock (needed on Cortex-M7) */
    TC_REG32(TC_DWT_CYCCNT) = 0;
    TC_REG32(TC_DWT_CTRL) |= 1u;          /* CYCCNTENA */
}

uint32_t tc_timer_read(void)
{
    return TC_REG32(TC_DWT_CYCCNT);
}
