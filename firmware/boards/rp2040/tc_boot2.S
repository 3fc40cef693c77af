/* tinycompile board support: RP2040 second-stage boot (boot2), written for this project.
 *
 * The RP2040 boot ROM copies the first 256 bytes of the QSPI flash into SRAM, checks that the
 * last 4 bytes are the CRC-32 (poly 0x04C11DB7, init 0xFFFFFFFF, no reflection, no final XOR) of
 * the first 252, and runs them. This code configures the flash interface (the Synopsys SSI at
 * XIP_SSI_BASE) for execute-in-place with the standard serial read command 03h, which every SPI
 * NOR flash supports: 32-bit data frames, EEPROM-read transfer mode, 8-bit instruction 0x03 and a
 * 24-bit address, one frame per access, SCK = clk_sys / 4. Then, entered from the ROM (lr == 0),
 * it points VTOR at the application's vector table at 0x10000100 (right after this block), loads
 * the stack pointer from it and jumps to its reset handler; called from code (lr != 0) it returns.
 * Position independent (pc-relative literals only), so it runs wherever the ROM puts it.
 * firmware_build.py pads the assembled code to 252 bytes and appends the checksum.
 */
    /* CTRLR0: DFS_32 (bits 20:16) = 31 (32-bit frames), TMOD (bits 9:8) = 3 (EEPROM read),
     * SPI_FRF (bits 22:21) = 0 (standard SPI). */
    .equ CTRLR0_XIP,       (31 << 16) | (3 << 8)
    /* SPI_CTRLR0: XIP_CMD (bits 31:24) = 0x03, INST_L (bits 9:8) = 2 (8-bit instruction),
     * ADDR_L (bits 5:2) = 6 (24-bit address), TRANS_TYPE (bits 1:0) = 0 (all standard SPI). */
    .equ SPI_CTRLR0_XIP,   (0x03 << 24) | (2 << 8) | (6 << 2)
    .equ CLKDIV,           4

#include "tc_boot2_entry.inc"
    ldr r3, =XIP_SSI_BASE
    movs r1, #0
    str r1, [r3, #SSI_SSIENR]       /* the SSI must be disabled to be reconfigured */
    movs r1, #CLKDIV
    str r1, [r3, #SSI_BAUDR]
    ldr r1, =CTRLR0_XIP
    str r1, [r3, #SSI_CTRLR0]
    ldr r1, =SPI_CTRLR0_XIP
    ldr r0, =(XIP_SSI_BASE + SSI_SPI_CTRLR0)
    str r1, [r0]
    movs r1, #0
    str r1, [r3, #SSI_CTRLR1]       /* NDF = 0: one data frame per transfer */
    movs r1, #1
    str r1, [r3, #SSI_SSIENR]       /* re-enable: XIP reads now go through 03h commands */
#include "tc_boot2_exit.inc"
    .ltorg
    .size tc_boot2_entry, . - tc_boot2_entry
