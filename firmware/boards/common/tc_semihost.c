/* tinycompile board support: raw semihosting calls (ARM semihosting specification v2).
 *
 * Used by the fault handler and the emulator main, which must not depend on newlib's state.
 * Under QEMU (-semihosting-config enable=on) SYS_WRITE0 prints on QEMU's console and
 * SYS_EXIT_EXTENDED makes QEMU exit with the given status.
 */
#include <stdint.h>

#include "tc_board_io.h"

#define TC_SYS_WRITE0 0x04u
#define TC_SYS_EXIT 0x18u
#define TC_SYS_EXIT_EXTENDED 0x20u
#define TC_ADP_STOPPED_APPLICATION_EXIT 0x20026u

static uint32_t tc_semihost_call(uint32_t op, const void *arg)
{
    register uint32_t r0 __asm("r0") = op;
    register const void *r1 __asm("r1") = arg;
    __asm volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

void tc_semihost_write0(const char *s)
{
    tc_semihost_call(TC_SYS_WRITE0, s);
}

void tc_semihost_exit(int code)
{
    uint32_t block[2] = {TC_ADP_STOPPED_APPLICATION_EXIT, (uint32_t)code};
    tc_semihost_call(TC_SYS_EXIT_EXTENDED, block);
    /* A host without SYS_EXIT_EXTENDED: plain exit (status not carried). */
    tc_semihost_call(TC_SYS_EXIT, (const void *)(uintptr_t)TC_ADP_STOPPED_APPLICATION_EXIT);
    for (;;) {
    }
}
