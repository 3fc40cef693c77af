/* tinycompile board support: RP2040 second-stage boot (boot2) for the Raspberry Pi Pico's
 * Winbond W25Q080 QSPI flash, written for this project from the RP2040 datasheet (chapter 4.10,
 * the Synopsys SSI at XIP_SSI_BASE; 2.19.6.3, the QSPI pads) and the W25Q80DV datasheet
 * (instructions 05h/35h/06h/01h/EBh, continuous read mode). Same contract as tc_boot2.S: the
 * boot ROM copies these 252 bytes + CRC-32 to SRAM and runs them; entered from the ROM (lr == 0)
 * it points VTOR at the application's vector table at 0x10000100, loads SP from it and jumps to
 * its reset handler; called from code (lr != 0) it returns. Position independent.
 *
 * Where the generic 03h boot2 reads one bit per clock at clk_sys / 4 with a full command and
 * address per 32-bit access, this one reads four bits per clock at clk_sys / 2 (the divider the
 * pico-sdk uses: 62.5 MHz at the firmware's 125 MHz, within the part's 104 MHz) and, once in
 * continuous read mode, sends no instruction: an XIP cache miss costs ~20 SCK instead of ~64.
 *   1. QSPI pads: SCLK 8 mA with fast slew, the data pads without Schmitt triggers.
 *   2. Standard SPI, 8-bit frames: read status register 2 (35h); if its QE bit (S9) is clear,
 *      write enable (06h) and write status registers (01h, SR1 = 0, SR2 = QE), then poll status
 *      register 1 (05h) until BUSY clears (QE is non-volatile: written once per part).
 *   3. Quad: one Fast Read Quad I/O (EBh), address 0 with mode bits A0h (M5-4 = 10b: stay in
 *      continuous read mode), 4 dummy clocks.
 *   4. XIP: no instruction; the mode bits A0h follow every 24-bit address (SPI_CTRLR0.XIP_CMD
 *      with INST_L = 0), address and data on four lines, 4 dummy clocks, 32-bit frames.
 */
    .equ SSI_SR,           0x28
    .equ SSI_DR0,          0x60
    .equ SR_BUSY,          0x01
    .equ SR_TFE,           0x04
    .equ PADS_QSPI_BASE,   0x40020000
    .equ PAD_SCLK,         0x04
    .equ PAD_SD0,          0x08
    .equ PAD_SCHMITT,      0x02
    .equ PAD_SCLK_FAST_8MA, (2 << 4) | 1           /* DRIVE = 8 mA, SLEWFAST */
    .equ CLKDIV,           2
    /* CTRLR0: DFS_32 (20:16), TMOD (9:8: 0 = transmit and receive, 3 = EEPROM read), SPI_FRF
     * (22:21: 0 = standard, 2 = quad). */
    .equ CTRLR0_STD8,      (7 << 16)
    .equ CTRLR0_QUAD32,    (2 << 21) | (31 << 16) | (3 << 8)
    /* SPI_CTRLR0: TRANS_TYPE (1:0), ADDR_L (5:2, in 4-bit units: 8 = 24-bit address + 8 mode
     * bits), INST_L (9:8: 0 = none, 2 = 8 bits), WAIT_CYCLES (15:11), XIP_CMD (31:24). */
    .equ SPI_CTRLR0_EB,    (4 << 11) | (2 << 8) | (8 << 2) | 1  /* instruction on one line */
    .equ SPI_CTRLR0_XIP,   (0xA0 << 24) | (4 << 11) | (8 << 2) | 2  /* all on four lines */
    .equ CMD_WRITE_ENABLE, 0x06
    .equ CMD_WRITE_STATUS, 0x01
    .equ CMD_READ_STATUS1, 0x05
    .equ CMD_READ_STATUS2, 0x35
    .equ CMD_QUAD_IO_READ, 0xEB
    .equ MODE_CONTINUOUS,  0xA0
    .equ SR2_QE,           0x02

#include "tc_boot2_entry.inc"
    ldr r3, =PADS_QSPI_BASE
    movs r0, #PAD_SCLK_FAST_8MA
    str r0, [r3, #PAD_SCLK]
    ldr r0, [r3, #PAD_SD0]
    movs r1, #PAD_SCHMITT
    bics r0, r1
    str r0, [r3, #PAD_SD0]
    str r0, [r3, #PAD_SD0 + 4]
    str r0, [r3, #PAD_SD0 + 8]
    str r0, [r3, #PAD_SD0 + 12]

    ldr r3, =XIP_SSI_BASE
    movs r1, #0
    str r1, [r3, #SSI_SSIENR]       /* disabled to be reconfigured */
    movs r1, #CLKDIV
    str r1, [r3, #SSI_BAUDR]
    ldr r1, =CTRLR0_STD8
    str r1, [r3, #SSI_CTRLR0]
    movs r1, #1
    str r1, [r3, #SSI_SSIENR]

    movs r0, #CMD_READ_STATUS2
    bl read_status
    movs r1, #SR2_QE
    tst r0, r1
    bne 2f
    movs r0, #CMD_WRITE_ENABLE
    str r0, [r3, #SSI_DR0]
    bl wait_idle
    ldr r0, [r3, #SSI_DR0]          /* the byte clocked in while 06h went out */
    movs r0, #CMD_WRITE_STATUS
    str r0, [r3, #SSI_DR0]
    movs r0, #0
    str r0, [r3, #SSI_DR0]          /* SR1 */
    movs r0, #SR2_QE
    str r0, [r3, #SSI_DR0]          /* SR2 */
    bl wait_idle
    ldr r0, [r3, #SSI_DR0]
    ldr r0, [r3, #SSI_DR0]
    ldr r0, [r3, #SSI_DR0]
1:
    movs r0, #CMD_READ_STATUS1
    bl read_status
    lsrs r0, r0, #1                 /* BUSY (bit 0) into the carry */
    bcs 1b
2:
    movs r1, #0
    str r1, [r3, #SSI_SSIENR]
    ldr r1, =CTRLR0_QUAD32
    str r1, [r3, #SSI_CTRLR0]
    movs r1, #0
    str r1, [r3, #SSI_CTRLR1]       /* NDF = 0: one 32-bit frame per read */
    ldr r1, =SPI_CTRLR0_EB
    movs r2, #SSI_SPI_CTRLR0
    str r1, [r3, r2]
    movs r1, #1
    str r1, [r3, #SSI_SSIENR]
    movs r1, #CMD_QUAD_IO_READ
    str r1, [r3, #SSI_DR0]
    movs r1, #MODE_CONTINUOUS       /* address 0, then the mode bits */
    str r1, [r3, #SSI_DR0]
    bl wait_idle

    movs r1, #0
    str r1, [r3, #SSI_SSIENR]
    ldr r1, =SPI_CTRLR0_XIP
    movs r2, #SSI_SPI_CTRLR0
    str r1, [r3, r2]
    movs r1, #1
    str r1, [r3, #SSI_SSIENR]       /* XIP reads now: address + A0h, four lines */

#include "tc_boot2_exit.inc"

/* A status register: its command (r0) and one more byte out, the second byte in (r0). */
read_status:
    push {lr}
    str r0, [r3, #SSI_DR0]
    str r0, [r3, #SSI_DR0]
    bl wait_idle
    ldr r0, [r3, #SSI_DR0]
    ldr r0, [r3, #SSI_DR0]
    pop {pc}

/* Until the transmit FIFO is empty and the SSI idle (the transfer done, chip select released). */
wait_idle:
    ldr r1, [r3, #SSI_SR]
    movs r2, #SR_TFE
    tst r1, r2
    beq wait_idle
    movs r2, #SR_BUSY
    tst r1, r2
    bne wait_idle
    bx lr
    .ltorg
    .size tc_boot2_entry, . - tc_boot2_entry
