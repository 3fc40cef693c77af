/* tinycompile board support: SAMD21 clock set-up (SAM D21 datasheet DS40001882: SYSCTRL, GCLK,
 * NVMCTRL, NVM software calibration area).
 *
 * Reset leaves the core on OSC8M / 8 = 1 MHz; a bootloader that jumps here (SAM-BA's G, a UF2
 * bootloader) may leave it on the DFLL48M at 48 MHz, in closed loop on XOSC32K. Order: OSC8M
 * enabled at prescaler 1 (8 MHz, the fallback clock, reset_clock_hz) and generator 0 moved onto
 * it first, so that nothing below stops the clock the core runs on; one flash wait state
 * (NVMCTRL RWS, needed above 24 MHz at 3.3 V) and manual page writes (MANW: the errata's stray
 * writes into flash; uf2-samdx1 does the same), then
 *  1. XOSC32K (the board's 32.768 kHz crystal) -> generator 1 -> DFLL48M reference, DFLL48M in
 *     closed loop with MUL = TC_DFLL_MUL (32768 * MUL = clock_hz): wait for coarse and fine lock;
 *  2. if the crystal or the lock fails: DFLL48M in open loop at the factory coarse calibration
 *     (NVM software calibration area bits 63:58), fine step at mid-range: 48 MHz nominal;
 *  3. if the DFLL never reports ready: stay on OSC8M 8 MHz.
 * Generator 0 (core, buses and the console SERCOM) is then switched to the source that worked.
 */
#include <stdint.h>

#include "tc_board_io.h"

#define NVMCTRL_CTRLB 0x41004004u
#define NVM_SW_CALIB_HI 0x00806024u /* bits 63:32 of the software calibration area */
#define SYSCTRL_PCLKSR 0x4000080Cu
#define SYSCTRL_XOSC32K 0x40000814u
#define SYSCTRL_OSC8M 0x40000820u
#define SYSCTRL_DFLLCTRL 0x40000824u
#define SYSCTRL_DFLLVAL 0x40000828u
#define SYSCTRL_DFLLMUL 0x4000082Cu
#define GCLK_STATUS 0x40000C01u
#define GCLK_CLKCTRL 0x40000C02u
#define GCLK_GENCTRL 0x40000C04u
#define GCLK_GENDIV 0x40000C08u

#define PCLKSR_XOSC32KRDY (1u << 1)
#define PCLKSR_OSC8MRDY (1u << 3)
#define PCLKSR_DFLLRDY (1u << 4)
#define PCLKSR_DFLLLCKF (1u << 6)
#define PCLKSR_DFLLLCKC (1u << 7)
#define DFLLCTRL_ENABLE (1u << 1)
#define DFLLCTRL_MODE (1u << 2)
#define GCLK_SRC_XOSC32K 0x05u
#define GCLK_SRC_OSC8M 0x06u
#define GCLK_SRC_DFLL48M 0x07u
#define GCLK_ID_DFLL48M_REF 0x00u
#define OPEN_LOOP_HZ 48000000u
#define OSC8M_HZ 8000000u

/* Bounds in reads (>= 4 cycles each, at OSC8M 8 MHz): the crystal 6,000,000 (>= 3 s; XOSC32K
 * STARTUP = 6 is 65536 cycles of OSCULP32K, 2 s, as the Arduino core, its Zero bootloader and
 * uf2-samdx1 set it, with the automatic amplitude control off: the errata's AAMPEN problem);
 * DFLL lock 1,000,000 (>= 0.5 s; closed-loop lock takes a few ms from the coarse calibration);
 * register synchronisation 20000 (>= 10 ms; a few cycles of the slowest clock involved). */
#define WAIT_XTAL 6000000u
#define WAIT_LOCK 1000000u
#define WAIT_SYNC 20000u

static uint32_t g_hz = 1000000u;
static const char *g_source = "osc8m";

static int gclk_sync(void)
{
    for (uint32_t i = 0; i < WAIT_SYNC; i++) {
        if ((TC_REG8(GCLK_STATUS) & 0x80u) == 0) { /* SYNCBUSY */
            return 1;
        }
    }
    return 0;
}

static int dfll_sync(void)
{
    return tc_wait_reg32(SYSCTRL_PCLKSR, PCLKSR_DFLLRDY, PCLKSR_DFLLRDY, WAIT_SYNC);
}

static void generator(uint32_t id, uint32_t src)
{
    TC_REG32(GCLK_GENDIV) = id; /* divide by 1 */
    (void)gclk_sync();
    TC_REG32(GCLK_GENCTRL) = id | (src << 8) | (1u << 16) | (1u << 17); /* GENEN, IDC */
    (void)gclk_sync();
}

static uint32_t coarse_calibration(void)
{
    uint32_t coarse = TC_REG32(NVM_SW_CALIB_HI) >> 26;
    return coarse == 0x3Fu ? 0x1Fu : coarse; /* erased: the middle of the range */
}

/* DFLL48M in closed loop on XOSC32K; 1 once locked. */
static int dfll_closed_loop(void)
{
    /* XTALEN, EN32K, STARTUP = 6 (AAMPEN off), then ENABLE. */
    TC_REG16(SYSCTRL_XOSC32K) = (uint16_t)((1u << 2) | (1u << 3) | (6u << 8));
    TC_REG16(SYSCTRL_XOSC32K) |= (uint16_t)(1u << 1);
    if (!tc_wait_reg32(SYSCTRL_PCLKSR, PCLKSR_XOSC32KRDY, PCLKSR_XOSC32KRDY, WAIT_XTAL)) {
        return 0;
    }
    generator(1u, GCLK_SRC_XOSC32K);
    TC_REG16(GCLK_CLKCTRL) = (uint16_t)(GCLK_ID_DFLL48M_REF | (1u << 8) | (1u << 14)); /* gen 1 */
    (void)gclk_sync();
    /* Errata: clear ONDEMAND (DFLLCTRL = 0) before writing the other DFLL registers. */
    TC_REG16(SYSCTRL_DFLLCTRL) = 0u;
    if (!dfll_sync()) {
        return 0;
    }
    TC_REG32(SYSCTRL_DFLLMUL) = (31u << 26) | (511u << 16) | TC_DFLL_MUL; /* CSTEP, FSTEP: 1/2 */
    (void)dfll_sync();
    TC_REG32(SYSCTRL_DFLLVAL) = (coarse_calibration() << 10) | 512u;
    (void)dfll_sync();
    TC_REG16(SYSCTRL_DFLLCTRL) = (uint16_t)(DFLLCTRL_ENABLE | DFLLCTRL_MODE);
    uint32_t lock = PCLKSR_DFLLLCKC | PCLKSR_DFLLLCKF;
    if (dfll_sync() && tc_wait_reg32(SYSCTRL_PCLKSR, lock, lock, WAIT_LOCK)) {
        return 1;
    }
    TC_REG16(SYSCTRL_DFLLCTRL) = 0u;
    (void)dfll_sync();
    return 0;
}

/* DFLL48M in open loop at the factory calibration; 1 once ready. */
static int dfll_open_loop(void)
{
    TC_REG16(SYSCTRL_DFLLCTRL) = 0u;
    if (!dfll_sync()) {
        return 0;
    }
    TC_REG32(SYSCTRL_DFLLVAL) = (coarse_calibration() << 10) | 512u;
    (void)dfll_sync();
    TC_REG16(SYSCTRL_DFLLCTRL) = (uint16_t)DFLLCTRL_ENABLE;
    if (dfll_sync()) {
        return 1;
    }
    TC_REG16(SYSCTRL_DFLLCTRL) = 0u;
    return 0;
}

void tc_board_init(void)
{
    /* PRESC = 0 (8 MHz), ENABLE; then the core onto it, whatever it ran on */
    TC_REG32(SYSCTRL_OSC8M) = (TC_REG32(SYSCTRL_OSC8M) & ~(3u << 8)) | (1u << 1);
    (void)tc_wait_reg32(SYSCTRL_PCLKSR, PCLKSR_OSC8MRDY, PCLKSR_OSC8MRDY, WAIT_SYNC);
    generator(0u, GCLK_SRC_OSC8M);
    g_hz = OSC8M_HZ;
    /* RWS = 1, MANW = 1 */
    TC_REG32(NVMCTRL_CTRLB) = (TC_REG32(NVMCTRL_CTRLB) & ~(0xFu << 1)) | (1u << 1) | (1u << 7);
    if (dfll_closed_loop()) {
        g_hz = 32768u * TC_DFLL_MUL;
        g_source = "dfll";
    } else if (dfll_open_loop()) {
        g_hz = OPEN_LOOP_HZ;
        g_source = "dfll_open";
    }
    generator(0u, g_hz == OSC8M_HZ ? GCLK_SRC_OSC8M : GCLK_SRC_DFLL48M);
}

uint32_t tc_board_clock_hz(void)
{
    return g_hz;
}

const char *tc_board_clock_source(void)
{
    return g_source;
}

uint32_t tc_board_uart_clock_hz(void)
{
    return g_hz; /* the console SERCOM's core clock is generator 0 */
}
