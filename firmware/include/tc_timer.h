/* tinycompile runtime: the per-target tick counter used for profiling.
 *
 * tc_timer_read() returns a free-running 32-bit tick count; what a tick is depends on the target
 * (0 on the host, SysTick ticks in QEMU under -icount, core cycles from DWT->CYCCNT on M3/M4/M7
 * hardware, SysTick cycles on M0+). The host side converts ticks using the board description.
 */
#ifndef TC_TIMER_H
#define TC_TIMER_H

#include <stdint.h>

void tc_timer_init(void);
uint32_t tc_timer_read(void);

#endif /* TC_TIMER_H */
