"""Clock plans: the PLL, prescaler and flash settings giving a board its `clock_hz`, as tc_board.h
macros for firmware/boards/<family>/tc_clock_*.c (limits from RM0090, RM0385, RM0433, RM0456, the
SAM D21 datasheet, the RP2040 and RP2350 datasheets and Alif's Ensemble E7 SVD). A clock no setting
reaches exactly is refused."""

from __future__ import annotations

from collections.abc import Callable

from ..boards import Board
from ..errors import CompileError

MHZ = 1_000_000
Defines = list[tuple[str, str]]

# STM32F4/F7 (RM0090 6.3.2, RM0385 5.3.2; datasheets DS8626, DS10916 at 2.7-3.6 V).
STM32F_LIMITS = {
    "stm32f4": {"ahb": 168 * MHZ, "apb1": 42 * MHZ, "apb2": 84 * MHZ},
    "stm32f7": {"ahb": 216 * MHZ, "apb1": 54 * MHZ, "apb2": 108 * MHZ},  # with over-drive
}
STM32F_HSI = 16 * MHZ
STM32H7_HSI = 64 * MHZ
# STM32H7 at VOS1 (RM0433 / DS12110): CPU, AXI/AHB, APB maxima; flash latency and WRHIGHFREQ by
# AXI clock (RM0433 table "FLASH recommended number of wait states and programming delay").
H7_VOS1 = {"cpu": 400 * MHZ, "ahb": 200 * MHZ, "apb": 100 * MHZ}
H7_FLASH_VOS1 = ((70 * MHZ, 0, 0), (140 * MHZ, 1, 1), (185 * MHZ, 2, 1), (210 * MHZ, 2, 2))
APB_CODES = {1: 0, 2: 4, 4: 5, 8: 6, 16: 7}
AHB_CODES = {1: 0, 2: 8, 4: 9, 8: 10, 16: 11, 64: 12, 128: 13, 256: 14, 512: 15}


def _fail(board: Board, why: str) -> CompileError:
    return CompileError(f"board {board.name}: clock_hz {board.clock_hz}: {why}")


def _prescaler(board: Board, hz: int, limit: int, codes: dict[int, int]) -> tuple[int, int]:
    """The smallest divider bringing `hz` exactly to at most `limit`, and its register code."""
    for div, code in codes.items():
        if hz // div <= limit and hz % div == 0:
            return div, code
    raise _fail(board, f"no bus prescaler brings {hz} Hz under {limit} Hz")


def _stm32f_pll(board: Board, src: int) -> tuple[int, int, int, int]:
    """M, N, P, Q for the F4/F7 main PLL from `src` Hz: VCO input 1-2 MHz (the highest that
    works), VCO 100-432 MHz, N 50-432, P 2/4/6/8, Q 2-15 keeping the 48 MHz clock <= 48 MHz."""
    target = board.clock_hz
    for m in range(2, 64):
        if src % m or not MHZ <= src // m <= 2 * MHZ:
            continue
        fin = src // m
        for p in (2, 4, 6, 8):
            if (target * p) % fin:
                continue
            n = target * p // fin
            if 50 <= n <= 432 and 100 * MHZ <= fin * n <= 432 * MHZ:
                q = next((q for q in range(2, 16) if fin * n // q <= 48 * MHZ), 15)
                return m, n, p, q
    raise _fail(board, f"no main-PLL setting reaches it exactly from {src} Hz")


def _stm32f(board: Board) -> Defines:
    assert board.uart is not None
    lim = STM32F_LIMITS[board.uart.driver]
    if board.clock_hz > lim["ahb"]:
        raise _fail(board, f"above the part's {lim['ahb']} Hz")
    if not board.crystal_hz:
        raise _fail(board, "crystal_hz (the HSE frequency) is missing")
    defs: Defines = []
    for name, src in (("HSE", board.crystal_hz), ("HSI", STM32F_HSI)):
        for key, value in zip("MNPQ", _stm32f_pll(board, src), strict=True):
            defs.append((f"TC_PLL_{name}_{key}", f"{value}u"))
    latency = -(-board.clock_hz // (30 * MHZ)) - 1  # 30 MHz per wait state at 2.7-3.6 V
    _, ppre1 = _prescaler(board, board.clock_hz, lim["apb1"], APB_CODES)
    _, ppre2 = _prescaler(board, board.clock_hz, lim["apb2"], APB_CODES)
    return defs + [
        ("TC_FLASH_LATENCY", f"{latency}u"),
        ("TC_RCC_HPRE", "0u"),
        ("TC_RCC_PPRE1", f"{ppre1}u"),
        ("TC_RCC_PPRE2", f"{ppre2}u"),
    ]


def _stm32h7_pll(board: Board, src: int) -> tuple[int, int, int, int, int]:
    """DIVM1, DIVN1, DIVP1, PLL1RGE, PLL1VCOSEL from `src` Hz: input 2-16 MHz (the highest that
    works) with the wide VCO (192-836 MHz), DIVN1 4-512, DIVP1 even 2-128."""
    target = board.clock_hz
    for m in range(1, 64):
        if src % m or not 2 * MHZ <= src // m <= 16 * MHZ:
            continue
        ref = src // m
        for p in range(2, 129, 2):
            if (target * p) % ref:
                continue
            n = target * p // ref
            if 4 <= n <= 512 and 192 * MHZ <= ref * n <= 836 * MHZ:
                rge = 1 if ref < 4 * MHZ else 2 if ref < 8 * MHZ else 3  # 2-4, 4-8, 8-16 MHz
                return m, n, p, rge, 0
    raise _fail(board, f"no PLL1 setting reaches it exactly from {src} Hz")


def _stm32h7(board: Board) -> Defines:
    if board.clock_hz > H7_VOS1["cpu"]:
        raise _fail(board, f"above {H7_VOS1['cpu']} Hz, the maximum at voltage scale 1")
    if not board.crystal_hz:
        raise _fail(board, "crystal_hz (the HSE frequency) is missing")
    defs: Defines = []
    for name, src in (("HSE", board.crystal_hz), ("HSI", STM32H7_HSI)):
        for key, value in zip(
            ("M", "N", "P", "RGE", "VCOSEL"), _stm32h7_pll(board, src), strict=True
        ):
            defs.append((f"TC_PLL_{name}_{key}", f"{value}u"))
    hdiv, hpre = _prescaler(board, board.clock_hz, H7_VOS1["ahb"], AHB_CODES)
    hclk = board.clock_hz // hdiv
    _, ppre = _prescaler(board, hclk, H7_VOS1["apb"], APB_CODES)
    latency, wrhighfreq = next((ws, wr) for top, ws, wr in H7_FLASH_VOS1 if hclk <= top)
    return defs + [
        ("TC_FLASH_LATENCY", f"{latency}u"),
        ("TC_FLASH_WRHIGHFREQ", f"{wrhighfreq}u"),
        ("TC_RCC_D1CPRE", "0u"),
        ("TC_RCC_HPRE", f"{hpre}u"),
        ("TC_RCC_D1PPRE", f"{ppre}u"),
        ("TC_RCC_D2PPRE1", f"{ppre}u"),
        ("TC_RCC_D2PPRE2", f"{ppre}u"),
        ("TC_RCC_D3PPRE", f"{ppre}u"),
    ]


# STM32U5 (STM32U575/585) at voltage range 1: SYSCLK, AHB and APB1-3 up to 160 MHz (ST's LL,
# stm32u5xx_ll_utils.c UTILS_MAX_FREQUENCY_SCALE0; the B-U585I-IOT02A's own CubeMX project runs
# every bus at 160 MHz); 32 MHz per flash wait state in range 1 (stm32u5xx_ll_utils.c
# UTILS_SCALE1_LATENCYx_FREQ). PLL1 (RM0456 Rev 6, 11.8.12): input 4-16 MHz after PLL1M 1-16,
# PLL1RGE 0 for 4-8 MHz, 3 for 8-16 MHz; PLL1N 4-512; PLL1R 1 or even (2-128). VCO: searched in
# 128-344 MHz, where ST's LL bound (64-344 MHz) and the 128-544 MHz third-party drivers quote
# overlap (the datasheet's figure not read here). The EPOD booster (needed above 55 MHz, RM0456
# PWR_VOSR.BOOSTEN) takes the PLL1 input clock / PLL1MBOOST (RCC_PLL1CFGR), which must be 4-16 MHz
# (Zephyr's U5 clock driver; RM0456's own sentence not read here). The RC oscillator the PLL falls
# back to: MSIS at its 4 MHz reset range (stm32u5xx_hal_rcc.c).
U5_MSIS = 4 * MHZ
U5_RANGE1 = 160 * MHZ
U5_MBOOST = {1: 0, 2: 1, 4: 2, 6: 3, 8: 4, 10: 5, 12: 6, 14: 7, 16: 8}  # divider: PLL1MBOOST


def _stm32u5_pll(board: Board, src: int) -> tuple[int, int, int, int, int]:
    """PLL1M, PLL1N, PLL1R, PLL1RGE, PLL1MBOOST from `src` Hz (the highest input that works;
    the booster's clock divided as little as brings it to 16 MHz or less)."""
    target = board.clock_hz
    fits = [code for div, code in U5_MBOOST.items() if 4 * MHZ * div <= src <= 16 * MHZ * div]
    if not fits:
        raise _fail(board, f"no PLL1MBOOST brings {src} Hz into the EPOD booster's 4-16 MHz")
    for m in range(1, 17):
        if src % m or not 4 * MHZ <= src // m <= 16 * MHZ:
            continue
        ref = src // m
        for r in (*range(2, 129, 2), 1):  # as ST's projects: R 2 first
            if (target * r) % ref:
                continue
            n = target * r // ref
            if 4 <= n <= 512 and 128 * MHZ <= ref * n <= 344 * MHZ:
                return m, n, r, 0 if ref <= 8 * MHZ else 3, fits[0]
    raise _fail(board, f"no PLL1 setting reaches it exactly from {src} Hz")


def _stm32u5(board: Board) -> Defines:
    """PLL1 from the HSE (when the board has one) and from MSIS 4 MHz; 160 MHz at most."""
    if board.clock_hz > U5_RANGE1:
        raise _fail(board, f"above {U5_RANGE1} Hz, the maximum at voltage range 1")
    defs: Defines = []
    sources = ([("HSE", board.crystal_hz)] if board.crystal_hz else []) + [("MSIS", U5_MSIS)]
    for name, src in sources:
        for key, value in zip(
            ("M", "N", "R", "RGE", "MBOOST"), _stm32u5_pll(board, src), strict=True
        ):
            defs.append((f"TC_PLL_{name}_{key}", f"{value}u"))
    latency = -(-board.clock_hz // (32 * MHZ)) - 1  # 32 MHz per wait state at range 1
    return defs + [
        ("TC_FLASH_LATENCY", f"{latency}u"),
        ("TC_RCC_HPRE", "0u"),
        ("TC_RCC_PPRE1", "0u"),
        ("TC_RCC_PPRE2", "0u"),
        ("TC_RCC_PPRE3", "0u"),
    ]


def _samd21(board: Board) -> Defines:
    """DFLL48M in closed loop on the 32.768 kHz crystal: clock_hz = 32768 * MUL, at most 48 MHz."""
    if board.crystal_hz != 32768:
        raise _fail(board, "the DFLL48M reference needs crystal_hz = 32768 (XOSC32K)")
    if board.clock_hz % 32768 or board.clock_hz > 48 * MHZ:
        raise _fail(board, "DFLL48M gives 32768 * MUL Hz, at most 48 MHz")
    return [("TC_DFLL_MUL", f"{board.clock_hz // 32768}u")]


def _rp2040(board: Board) -> Defines:
    """PLL_SYS: reference >= 5 MHz, FBDIV 16-320, VCO 750-1600 MHz (the highest that works),
    POSTDIV1 >= POSTDIV2, both 1-7."""
    xosc = board.crystal_hz
    if not xosc:
        raise _fail(board, "crystal_hz (the XOSC frequency) is missing")
    for refdiv in range(1, 64):
        if xosc % refdiv or xosc // refdiv < 5 * MHZ:
            continue
        ref = xosc // refdiv
        for fbdiv in range(320, 15, -1):
            vco = ref * fbdiv
            if not 750 * MHZ <= vco <= 1600 * MHZ:
                continue
            for pd1 in range(7, 0, -1):
                for pd2 in range(pd1, 0, -1):
                    if vco == board.clock_hz * pd1 * pd2:
                        return [
                            ("TC_PLL_REFDIV", f"{refdiv}u"),
                            ("TC_PLL_FBDIV", f"{fbdiv}u"),
                            ("TC_PLL_POSTDIV1", f"{pd1}u"),
                            ("TC_PLL_POSTDIV2", f"{pd2}u"),
                        ]
    raise _fail(board, "no PLL_SYS setting reaches it exactly")


RP2350_MAX_CLK_SYS = 150 * MHZ  # RP2350 datasheet; pico-sdk platform_defs.h SYS_CLK_HZ


def _rp2350(board: Board) -> Defines:
    """PLL_SYS as on the RP2040 (pico-sdk's pll_init checks the same ranges on both chips:
    FBDIV 16-320, VCO 750-1600 MHz, POSTDIV 1-7), clk_sys at most 150 MHz."""
    if board.clock_hz > RP2350_MAX_CLK_SYS:
        raise _fail(board, f"above the part's {RP2350_MAX_CLK_SYS} Hz")
    return _rp2040(board)


# Alif Ensemble E7, the M55-HP core (RTSS_HP_CLK): the PLL frequencies CGU ESCLK_SEL.ES0_PLL
# selects (Debug/SVD/AE722F80F55D5LS_CM55_HP_View.svd, field ES0_PLL: 0-3 = 100-400 MHz), at most
# SOC_FEAT_M55_HP_MAX_HZ (soc_features.h). The SE sets the PLL itself; the core picks its tap.
ALIF_ES0_PLL_HZ = (100 * MHZ, 200 * MHZ, 300 * MHZ, 400 * MHZ)


def _alif(board: Board) -> Defines:
    if board.clock_hz not in ALIF_ES0_PLL_HZ:
        raise _fail(board, "the M55-HP core's PLL clock is 100, 200, 300 or 400 MHz (ES0_PLL)")
    return [("TC_ALIF_ES0_PLL", f"{ALIF_ES0_PLL_HZ.index(board.clock_hz)}u")]


FAMILIES: dict[str, Callable[[Board], Defines]] = {
    "stm32f4": _stm32f,
    "stm32f7": _stm32f,
    "stm32h7": _stm32h7,
    "stm32u5": _stm32u5,
    "samd21": _samd21,
    "rp2040": _rp2040,
    "rp2350": _rp2350,
    "alif": _alif,
}


def clock_defines(board: Board) -> Defines:
    """The tc_board.h macros of the board's clock set-up (its console driver names the family)."""
    assert board.uart is not None
    defs: Defines = [
        ("TC_BOARD_RESET_CLOCK_HZ", f"{board.reset_clock_hz or board.clock_hz}u"),
        ("TC_CRYSTAL_HZ", f"{board.crystal_hz}u"),
        ("TC_CRYSTAL_BYPASS", "1" if board.crystal_bypass else "0"),
    ]
    family = FAMILIES.get(board.uart.driver)
    return defs + (family(board) if family else [])
