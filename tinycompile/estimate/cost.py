"""Cycles from executed instructions: each instruction classed by its mnemonic, each class given
the cycles the core's Technical Reference Manual states, then a memory factor and a calibration
factor per core.

Classes (``classify``): alu, mul (32-bit and 64-bit multiplies, the DSP MACs), div, load, store
(``load_n``/``store_n``: LDM/STM/PUSH/POP, one per register moved), branch (taken or not: the
trace knows, from the next executed address), call (BL, BLX), ret (BX, POP {pc}).

Cycles per class (``CORE_CYCLES``):
- Cortex-M0+ (Arm DDI 0484C, table 3-1): data processing 1, MULS 1 (the fast multiplier, as on
  the SAMD21 and RP2040), LDR/STR 2, LDM/STM/PUSH/POP 1+N, taken branch 2 (not taken 1), BL 3,
  BX/BLX 2, POP with PC 3+N.
- Cortex-M4 (Arm DDI 0439B, table 3-1): data processing 1, MUL/MLA and the 64-bit and DSP MACs 1,
  SDIV/UDIV 2-12 (7 taken), LDR 2 but 1 when it follows another load or store (the pipelined
  case the manual describes), STR 1 (write buffer), LDM/STM 1+N, taken branch 1+P with P = 2
  (the refill from a prefetching flash interface), BL 3, BX 3.
- Cortex-M7 (no public cycle table: a dual-issue, six-stage core with a branch predictor): an
  ALU op 0.5 (pairs with another), a MAC 1, a load or store 1 (64-bit bus: LDM/STM 0.5 a
  register), a taken branch 1.5 (predicted loops cost ~1), not taken 0.5, BL/BX 2.

The memory factor (``BOARD_MEMORY``) multiplies a board's cycles for what the TRMs leave out:
flash wait states on instruction and weight reads the board's accelerators do not hide. The
calibration factor (``CALIBRATION``) is fitted per core to published measurements of a model
and board (docs/latency_calibration.md, benchmarks/calibrate_latency.py); the error band
(``BAND``) is what the rows left after that fit, or a stated guess where no row exists.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_BRANCH = re.compile(r"b(eq|ne|cs|cc|hs|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le|al)?|cbn?z|tb[bh]")
_MUL = re.compile(
    r"(mul|mla|mls|[su]mull|[su]mlal|smul\w*|smla\w*|smlal\w*|smmul\w*|smmla\w*|smmls\w*"
    r"|smuad\w*|smusd\w*|smlsd\w*|smlald\w*|smlsld\w*|umaal|vmul\w*|vmla\w*|vfma\w*)s?"
)
_COND = "(eq|ne|cs|cc|hs|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le)"


def _regs(operands: str) -> int:
    """Registers in a {...} list (ranges counted)."""
    m = re.search(r"\{([^}]*)\}", operands)
    if not m:
        return 1
    n = 0
    for part in m.group(1).split(","):
        part = part.strip()
        r = re.fullmatch(r"[rd](\d+)-[rd](\d+)", part)
        n += int(r.group(2)) - int(r.group(1)) + 1 if r else 1
    return max(n, 1)


def classify(mnemonic: str, operands: str) -> tuple[str, int]:
    """(class, registers moved: 1 except for LDM/STM/PUSH/POP) of one Thumb instruction."""
    base = mnemonic.split(".")[0].lower()
    ops = operands.lower()
    if base in ("bl", "blx"):
        return "call", 1
    if base == "bx" or (base == "pop" and "pc" in ops):
        return "ret", _regs(ops)
    if re.fullmatch(_BRANCH, base):
        return "branch", 1
    if base in ("push", "stmdb", "stmia", "stm", "stmea", "vpush", "vstmia", "vstmdb"):
        return "store_n", _regs(ops)
    if base in ("pop", "ldmia", "ldm", "ldmdb", "ldmfd", "vpop", "vldmia", "vldmdb"):
        return "load_n", _regs(ops)
    if base in ("ldrd", "ldrexd"):
        return "load_n", 2
    if base in ("strd",):
        return "store_n", 2
    if base.startswith("ldr") or base.startswith("vldr") or base.startswith("ldrex"):
        return "load", 1
    if base.startswith("str") or base.startswith("vstr"):
        return "store", 1
    if base in ("sdiv", "udiv") or base.startswith("vdiv") or base.startswith("vsqrt"):
        return "div", 1
    stem = re.sub(_COND + "$", "", base) if base not in ("mls", "smmls") else base
    if re.fullmatch(_MUL, stem) or re.fullmatch(_MUL, base):
        return "mul", 1
    return "alu", 1


@dataclass(frozen=True)
class CoreCycles:
    """Cycles per class; ``*_n`` per register moved, plus ``multi_base`` per instruction."""

    alu: float
    mul: float
    div: float
    load: float
    load_pipelined: float  # a load right after a load or store
    store: float
    per_reg: float
    multi_base: float
    branch_taken: float
    branch_not_taken: float
    call: float
    ret: float


CORE_CYCLES = {
    "cortex-m0plus": CoreCycles(1, 1, 1, 2, 2, 2, 1, 1, 2, 1, 3, 3),
    "cortex-m4": CoreCycles(1, 1, 7, 2, 1, 1, 1, 1, 3, 1, 3, 3),
    "cortex-m7": CoreCycles(0.5, 1, 4, 1, 1, 1, 0.5, 1, 1.5, 0.5, 2, 2),
}
CORE_CYCLES["cortex-m3"] = CORE_CYCLES["cortex-m4"]  # the same pipeline (no DSP MACs)
CORE_CYCLES["cortex-m33"] = CORE_CYCLES["cortex-m4"]  # the DSP extension's timing as the M4's
CORE_CYCLES["cortex-m0"] = CORE_CYCLES["cortex-m0plus"]


@dataclass(frozen=True)
class Memory:
    """A board family's memory factor and why."""

    factor: float
    why: str


BOARD_MEMORY = {
    "stm32f4": Memory(1.0, "ART accelerator (prefetch, 1 KB I-cache, 8-line D-cache) at 5 WS"),
    "stm32f7": Memory(1.0, "L1 I/D caches 4 KB + ART on AXI flash at 7 WS"),
    "stm32h7": Memory(1.0, "L1 I/D caches 16 KB, flash at 4 WS"),
    "stm32u5": Memory(1.0, "ICACHE 8 KB (code and flash data) + prefetch, flash at 4 WS"),
    "samd21": Memory(1.15, "NVM at 1 WS, 64-bit fetch, small cache: weight reads wait"),
    "rp2040": Memory(1.3, "XIP flash: 16 KB cache, weights streamed from QSPI miss it"),
    "nrf52": Memory(1.05, "flash at 0 WS with the instruction cache"),
    "qemu": Memory(1.0, "emulated: no memory model"),
}


def memory_for(board_name: str, uart_driver: str | None) -> Memory:
    """The memory factor of a board (by its family; 1.0 when unknown)."""
    for key in (board_name, uart_driver or ""):
        for fam, m in BOARD_MEMORY.items():
            if key.startswith(fam):
                return m
    return Memory(1.0, "no memory model for this board")


# Fitted by benchmarks/calibrate_latency.py to the published rows of docs/latency_calibration.md:
# Cortex-M4 on MLPerf Tiny v1.0's NUCLEO-L4R5ZI rows (microTVM + CMSIS-NN, 120 MHz, flash at 5
# wait states behind the ART accelerator): the manual's cycles undercount by 1.20 there. No
# published row exists for the cores below 1.0: they keep the manual's figures.
# Cortex-M33: the M4 cycles with a factor fitted on the eight M33 rows (RA6M4 at 200 MHz, nRF5340
# at 128 MHz): 1.04 (the M4 model with 1.20 overestimated them by 15%, geometric mean).
CALIBRATION = {
    "cortex-m4": 1.20,
    "cortex-m3": 1.20,
    "cortex-m33": 1.04,
    "cortex-m7": 1.0,
    "cortex-m0plus": 1.0,
}
# The relative band stated with an estimate: Cortex-M4 rows -14..+8% after the fit, and the
# Cortex-M33 rows it was checked on -4..+31% (with their own factor -17..+14%, fitted on the same
# rows); M7 and M0+ have no published row of a model this project runs with comparable kernels:
# a stated guess.
BAND = {
    "cortex-m4": 0.3,
    "cortex-m3": 0.35,
    "cortex-m33": 0.2,
    "cortex-m7": 0.5,
    "cortex-m0plus": 0.5,
}
