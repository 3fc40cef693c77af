/* tinycompile board support: Cortex-M startup shared by every core family.
 *
 * Vector table (the 16 architectural entries; no peripheral interrupt is ever enabled), reset
 * handler (VTOR at this table, .data copy, .bss zero, stack painting, FPU enable on M4F/M7,
 * caches on M7 and M55 boards, UNALIGN_TRP when ARMv6-M code runs on an ARMv7-M emulator), fault
 * reporting, main().
 * Linker symbols come from the linker script rendered from templates/board/linker.ld.j2.
 */
#include <stdint.h>

#include "tc_board_io.h"

#if defined(TC_VARIANT_EMULATOR)
#include <stdlib.h>
#endif

extern uint32_t _sidata[], _sdata[], _edata[], _sbss[], _ebss[];
extern uint32_t _tc_stack_paint[], _estack[];
extern char _tc_stack_size[]; /* absolute symbol: its address is the reserve in bytes */

int main(void);
void tc_reset_handler(void)
    __attribute__((noreturn, used, optimize("no-tree-loop-distribute-patterns")));
void tc_default_handler(void);
void tc_hardfault_handler(void);
void tc_fault_report(const uint32_t *frame, uint32_t exc_return) __attribute__((noreturn, used));
void SysTick_Handler(void) __attribute__((weak, alias("tc_default_handler")));

#define TC_STACK_PAINT 0xA5C3A5C3u

typedef void (*tc_vector_t)(void);

__attribute__((section(".isr_vector"), used)) const tc_vector_t tc_vectors[16] = {
    (tc_vector_t)(uintptr_t)_estack, /* initial main stack pointer */
    tc_reset_handler,
    tc_default_handler,   /* NMI */
    tc_hardfault_handler, /* HardFault */
    tc_default_handler,   /* MemManage (ARMv7-M) */
    tc_default_handler,   /* BusFault (ARMv7-M) */
    tc_default_handler,   /* UsageFault (ARMv7-M) */
    0,
    0,
    0,
    0,
    tc_default_handler, /* SVCall */
    tc_default_handler, /* DebugMonitor (ARMv7-M) */
    0,
    tc_default_handler, /* PendSV */
    SysTick_Handler,
};

/* Board files allow caches on Cortex-M7 (ARMv7E-M) and Cortex-M55 boards (ARMv8.1-M, for which
 * GCC 12 defines __ARM_ARCH_8M_MAIN__; tinycompile/boards/loader.py). */
#if defined(TC_BOARD_ENABLE_CACHES) &&                                                             \
    (defined(__ARM_ARCH_7EM__) || defined(__ARM_ARCH_8M_MAIN__))
#define TC_CACHES 1
#endif

#if defined(TC_CACHES)
__attribute__((noinline)) static void tc_enable_caches(void)
{
    /* ARMv7-M cache maintenance (the same registers on ARMv8-M): invalidate, then enable, the L1
     * instruction and data caches. The Cortex-M55 invalidates both by itself at reset (Alif's
     * system.c enables them without it); done here too, it also covers an entry by a debugger's
     * jump, with the caches holding what an earlier image read from MRAM. */
    TC_REG32(0xE000EF50u) = 0; /* ICIALLU */
    __asm volatile("dsb\n isb" ::: "memory");
    TC_REG32(0xE000ED84u) = 0; /* CSSELR: level 1 data cache */
    __asm volatile("dsb" ::: "memory");
    uint32_t ccsidr = TC_REG32(0xE000ED80u);
    uint32_t sets = ((ccsidr >> 13) & 0x7FFFu) + 1u;
    uint32_t ways = ((ccsidr >> 3) & 0x3FFu) + 1u;
    uint32_t line_shift = (ccsidr & 7u) + 4u;
    uint32_t way_shift = ways > 1u ? (uint32_t)__builtin_clz(ways - 1u) : 0u;
    for (uint32_t s = 0; s < sets; s++) {
        for (uint32_t w = 0; w < ways; w++) {
            TC_REG32(0xE000EF60u) = (s << line_shift) | (ways > 1u ? (w << way_shift) : 0u);
        }
    }
    __asm volatile("dsb" ::: "memory");
    TC_REG32(TC_SCB_CCR) |= (1u << 17) | (1u << 16); /* IC, DC */
#if defined(__ARM_ARCH_8M_MAIN__)
    /* Cortex-M55 (CMSIS core_cm55.h): CCR.LOB (bit 19), the loop and branch info cache, and
     * ICB ACTLR.DISLOBR (bit 5) cleared, as Alif's system.c does. */
    TC_REG32(TC_SCB_CCR) |= 1u << 19;
    TC_REG32(0xE000E008u) &= ~(1u << 5);
#endif
    __asm volatile("dsb\n isb" ::: "memory");
}
#endif

void tc_reset_handler(void)
{
    /* VTOR at this image's vector table: entered through a bootloader's jump (the STM32 ROM's
     * GO, SAM-BA's G) or a debugger's (flash --method gdb), it may still point at another's. */
    TC_REG32(0xE000ED08u) = (uint32_t)(uintptr_t)tc_vectors;
    __asm volatile("dsb\n isb" ::: "memory");
    uint32_t *src = _sidata;
    uint32_t *dst = _sdata;
    while (dst < _edata) {
        *dst++ = *src++;
    }
    for (dst = _sbss; dst < _ebss; dst++) {
        *dst = 0;
    }
    /* Paint all free RAM below the current frame so tc_stack_used() can measure the stack. */
    uint32_t sp;
    __asm volatile("mov %0, sp" : "=r"(sp));
    for (dst = _tc_stack_paint; (uintptr_t)dst < sp - 64u; dst++) {
        *dst = TC_STACK_PAINT;
    }
#if defined(__ARM_FP)
    TC_REG32(TC_SCB_CPACR) |= 0xFu << 20; /* CP10, CP11: full access */
    __asm volatile("dsb\n isb" ::: "memory");
#endif
#if defined(TC_EMU_UNALIGN_TRP)
    /* ARMv6-M code on an ARMv7-M emulator: make unaligned accesses fault as on a real M0+. */
    TC_REG32(TC_SCB_CCR) |= 1u << 3;
#endif
#if defined(TC_CACHES)
    tc_enable_caches();
#endif
#if defined(TC_VARIANT_EMULATOR)
    extern void initialise_monitor_handles(void);
    initialise_monitor_handles();
#endif
    int rc = main();
#if defined(TC_VARIANT_EMULATOR)
    exit(rc);
#else
    (void)rc;
    for (;;) {
        __asm volatile("wfi");
    }
#endif
}

uint32_t tc_stack_used(void)
{
    const uint32_t *p = _tc_stack_paint;
    while (p < _estack && *p == TC_STACK_PAINT) {
        p++;
    }
    return (uint32_t)((uintptr_t)_estack - (uintptr_t)p);
}

uint32_t tc_stack_reserve(void)
{
    return (uint32_t)(uintptr_t)_tc_stack_size;
}

/* HardFault: find the stacked frame (MSP or PSP, from EXC_RETURN bit 2) and report it. */
__attribute__((naked)) void tc_hardfault_handler(void)
{
    __asm volatile("movs r0, #4\n"
                   "mov r1, lr\n"
                   "tst r0, r1\n"
                   "beq 1f\n"
                   "mrs r0, psp\n"
                   "b 2f\n"
                   "1: mrs r0, msp\n"
                   "2: ldr r2, =tc_fault_report\n"
                   "bx r2\n"
                   ".ltorg\n");
}

static void tc_fault_line(void (*out)(const char *), const uint32_t *frame, uint32_t exc_return)
{
    static const char hex[] = "0123456789abcdef";
    char buf[16];
    struct {
        const char *name;
        uint32_t value;
    } fields[] = {
        {"tc-fault: HardFault pc=0x", frame[6]},
        {" lr=0x", frame[5]},
        {" exc_return=0x", exc_return},
#if defined(__ARM_ARCH_7M__) || defined(__ARM_ARCH_7EM__)
        {" cfsr=0x", TC_REG32(TC_SCB_CFSR)},
        {" hfsr=0x", TC_REG32(TC_SCB_HFSR)},
        {" mmfar=0x", TC_REG32(TC_SCB_MMFAR)},
        {" bfar=0x", TC_REG32(TC_SCB_BFAR)},
#endif
    };
    for (unsigned i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        out(fields[i].name);
        for (int d = 0; d < 8; d++) {
            buf[d] = hex[(fields[i].value >> (28 - 4 * d)) & 0xFu];
        }
        buf[8] = 0;
        out(buf);
    }
    out("\n");
}

#if defined(TC_VARIANT_EMULATOR)
void tc_fault_report(const uint32_t *frame, uint32_t exc_return)
{
    tc_fault_line(tc_semihost_write0, frame, exc_return);
    tc_semihost_exit(TC_EXIT_FAULT);
}

void tc_default_handler(void)
{
    uint32_t ipsr;
    __asm volatile("mrs %0, ipsr" : "=r"(ipsr));
    tc_semihost_write0("tc-fault: unexpected exception ");
    char num[4] = {(char)('0' + (ipsr / 10u) % 10u), (char)('0' + ipsr % 10u), '\n', 0};
    tc_semihost_write0(num);
    tc_semihost_exit(TC_EXIT_FAULT);
}
#else
/* Real boards: report on the console (when it is up), then stop here for a debugger. */
void tc_fault_report(const uint32_t *frame, uint32_t exc_return)
{
    if (tc_console_ready) {
        tc_fault_line(tc_puts, frame, exc_return);
        tc_console_flush();
    }
    for (;;) {
    }
}

void tc_default_handler(void)
{
    uint32_t ipsr;
    __asm volatile("mrs %0, ipsr" : "=r"(ipsr));
    if (tc_console_ready) {
        tc_puts("tc-fault: unexpected exception ");
        tc_put_u32(ipsr);
        tc_puts("\n");
        tc_console_flush();
    }
    for (;;) {
    }
}
#endif
