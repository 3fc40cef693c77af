/* tinycompile board support, internal: starting an STM32's HSE, shared by the F4/F7, H7 and U5
 * clock files (firmware/boards/stm32/tc_clock_stm32*.c), whose RCC_CR keep HSEON, HSERDY and
 * HSEBYP at bits 16, 17 and 18 (RM0090, RM0385, RM0433, RM0456). Included once, after the
 * including file defines RCC_CR (its address), CR_HSEON, CR_HSERDY, CR_HSEBYP and WAIT_OSC (its
 * bounded wait). start_hse(bypass): the HSE off (HSEBYP is writable only then), the bypass as
 * asked, on, and 1 once ready; 0, and the HSE off again, when it does not start in time. */
#ifndef TC_STM32_HSE_H
#define TC_STM32_HSE_H

#include "tc_board_io.h"

static int start_hse(int bypass)
{
    TC_REG32(RCC_CR) &= ~CR_HSEON;
    if (!tc_wait_reg32(RCC_CR, CR_HSERDY, 0u, WAIT_OSC)) {
        return 0;
    }
    if (bypass) {
        TC_REG32(RCC_CR) |= CR_HSEBYP;
    } else {
        TC_REG32(RCC_CR) &= ~CR_HSEBYP;
    }
    TC_REG32(RCC_CR) |= CR_HSEON;
    if (tc_wait_reg32(RCC_CR, CR_HSERDY, CR_HSERDY, WAIT_OSC)) {
        return 1;
    }
    TC_REG32(RCC_CR) &= ~CR_HSEON;
    return 0;
}

#endif /* TC_STM32_HSE_H */
