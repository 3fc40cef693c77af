"""The clock-model tests' register decoders (tests/test_clocks.py): each part's final clock
registers read back into (core clock, source, console UART kernel clock), from the reference
manuals (RM0090, RM0385, RM0433, RM0456, SAM D21 DS40001882, the RP2040 and RP2350 datasheets,
Alif's Ensemble E7 SVD), independently of tinycompile/build/clocks.py, asserting the part's
limits (PLL input and VCO ranges, bus maxima, flash wait states) and the UART divisor on the
way."""

from __future__ import annotations

import re

from tinycompile.boards import Board

MHZ = 1_000_000


class Regs(dict):
    """Register values by address; unwritten registers read as their model reset value or 0."""

    def __missing__(self, addr: int) -> int:
        return 0


def _ahb_div(code: int) -> int:  # HPRE / D1CPRE: 0xxx = 1, 1000 = 2, ..., 1111 = 512
    return 1 if code < 8 else [2, 4, 8, 16, 64, 128, 256, 512][code - 8]


def _apb_div(code: int) -> int:  # PPRE: 0xx = 1, 100 = 2, ..., 111 = 16
    return 1 if code < 4 else 1 << (code - 3)


def _check_stm32_brr(regs: Regs, usart_brr: int, kernel: int) -> None:
    brr = regs[usart_brr]
    assert brr == (kernel + 57600) // 115200, (brr, kernel)  # 16x oversampling: BRR = f / baud
    assert abs(kernel / brr - 115200) / 115200 < 0.01


# RM0090 table 10 / RM0385 table 7 (2.7-3.6 V): the highest HCLK for 0, 1, 2, ... wait states.
F_WS = {"stm32f4": [30, 60, 90, 120, 150, 168], "stm32f7": [30, 60, 90, 120, 150, 180, 210, 216]}
F_LIMITS = {"stm32f4": (168, 42, 84), "stm32f7": (216, 54, 108)}  # AHB, APB1, APB2 (MHz)


def decode_stm32f(b: Board, regs: Regs) -> tuple[int, str, int]:
    """(HCLK, source, USART kernel clock) of an STM32F4/F7, checked against the part's limits."""
    fam = b.uart.driver
    rcc, cr, cfgr, pll = 0x40023800, regs[0x40023800], regs[0x40023808], regs[0x40023804]
    sws = (cfgr >> 2) & 3
    assert sws != 3
    if sws == 2:
        m, n, p = pll & 0x3F, (pll >> 6) & 0x1FF, 2 * (((pll >> 16) & 3) + 1)
        hse = bool(pll & (1 << 22))
        fin = (b.crystal_hz if hse else 16 * MHZ) / m
        assert cr & (1 << (17 if hse else 1)), "PLL input not running"
        assert 2 <= m <= 63 and 50 <= n <= 432 and 1 * MHZ <= fin <= 2 * MHZ
        assert 100 * MHZ <= fin * n <= 432 * MHZ
        assert fin * n / ((pll >> 24) & 0xF) <= 48 * MHZ  # PLLQ: the 48 MHz clock
        sys, source = fin * n / p, "pll_hse" if hse else "pll_hsi"
    else:
        sys, source = (b.crystal_hz, "hse") if sws == 1 else (16 * MHZ, "hsi")
    hclk = sys / _ahb_div((cfgr >> 4) & 0xF)
    apb1, apb2 = hclk / _apb_div((cfgr >> 10) & 7), hclk / _apb_div((cfgr >> 13) & 7)
    ahb_max, apb1_max, apb2_max = F_LIMITS[fam]
    assert hclk <= ahb_max * MHZ and apb1 <= apb1_max * MHZ and apb2 <= apb2_max * MHZ
    acr = regs[0x40023C00]
    assert acr & 0xF >= next(ws for ws, top in enumerate(F_WS[fam]) if hclk <= top * MHZ)
    if fam == "stm32f7" and hclk > 180 * MHZ:  # above 180 MHz only with over-drive (RM0385 4.1.4)
        assert regs[0x40007000] & (3 << 16) == 3 << 16 and regs[0x40007004] & (3 << 16)
    if sws == 2:
        assert acr & (1 << 8), "prefetch"
        assert acr & ((1 << 9) if fam == "stm32f7" else (3 << 9)), "ART / caches"
    kernel = apb2 if b.uart.instance in (1, 6) else apb1
    if fam == "stm32f7":
        sel = (regs[rcc + 0x90] >> (2 * (b.uart.instance - 1))) & 3
        assert sel == 0  # USART1SEL: PCLK2
    usart = {1: 0x40011000, 2: 0x40004400, 3: 0x40004800, 6: 0x40011400}[b.uart.instance]
    _check_stm32_brr(regs, usart + (0x08 if fam == "stm32f4" else 0x0C), int(kernel))
    return int(hclk), source, int(kernel)


# RM0433 table 17 at VOS1: (highest AXI clock, wait states, WRHIGHFREQ).
H7_FLASH = [(70, 0, 0), (140, 1, 1), (185, 2, 1), (210, 2, 2), (225, 3, 2)]


def decode_stm32h7(b: Board, regs: Regs) -> tuple[int, str, int]:
    rcc = 0x58024400
    cr, cfgr = regs[rcc], regs[rcc + 0x10]
    sws = (cfgr >> 3) & 7
    hsi = 64 * MHZ >> ((cr >> 3) & 3)
    if sws == 3:
        sel, cfg, div = regs[rcc + 0x28], regs[rcc + 0x2C], regs[rcc + 0x30]
        src, m = sel & 3, (sel >> 4) & 0x3F
        assert src in (0, 2) and cr & (1 << (17 if src == 2 else 2)), "PLL input not running"
        ref = (b.crystal_hz if src == 2 else hsi) / m
        rge, vcosel = (cfg >> 2) & 3, (cfg >> 1) & 1
        assert [1, 2, 4, 8][rge] * MHZ <= ref <= [2, 4, 8, 16][rge] * MHZ
        assert not cfg & 1 and cfg & (1 << 16)  # integer mode, DIVP1 enabled
        n, p = (div & 0x1FF) + 1, ((div >> 9) & 0x7F) + 1
        assert 4 <= n <= 512 and p % 2 == 0  # PLL1: even DIVP1 only
        vco = ref * n
        lo, hi = (150, 420) if vcosel else (192, 836)  # medium / wide VCO (revision Y limits)
        assert lo * MHZ <= vco <= hi * MHZ and (vcosel or ref >= 2 * MHZ)
        sys, source = vco / p, "pll_hse" if src == 2 else "pll_hsi"
    else:
        assert sws in (0, 2)
        sys, source = (b.crystal_hz, "hse") if sws == 2 else (hsi, "hsi")
    d1, d2, d3 = regs[rcc + 0x18], regs[rcc + 0x1C], regs[rcc + 0x20]
    cpu = sys / _ahb_div((d1 >> 8) & 0xF)
    hclk = cpu / _ahb_div(d1 & 0xF)
    apbs = [hclk / _apb_div((r >> s) & 7) for r, s in ((d1, 4), (d2, 4), (d2, 8), (d3, 4))]
    vos = (regs[0x58024818] >> 14) & 3
    if cpu > 64 * MHZ:
        assert vos == 3  # VOS1: CPU 400, AXI/AHB 200, APB 100 MHz
    assert cpu <= 400 * MHZ and hclk <= 200 * MHZ and max(apbs) <= 100 * MHZ
    acr = regs[0x52002000]
    need = next(x for x in H7_FLASH if hclk <= x[0] * MHZ)
    assert acr & 0xF >= need[1] and (acr >> 4) & 3 >= need[2]
    if source.startswith("pll"):
        assert (acr & 0xF, (acr >> 4) & 3) == need[1:], "latency and programming delay"
    assert regs[rcc + 0x54] & 7 == 0  # USART234578SEL: rcc_pclk1
    kernel = int(apbs[1])
    _check_stm32_brr(regs, 0x4000480C, kernel)
    return int(cpu), source, kernel


# STM32U575/585 (RM0456 Rev 6; bit positions as ST's stm32u585xx.h). MSIS frequencies by range
# (RCC_ICSCR1.MSISRANGE, or RCC_CSR.MSISSRANGE while MSIRGSEL is 0); the HCLK each flash wait
# state allows in voltage ranges 4, 3, 2, 1 and each range's SYSCLK maximum (ST's LL,
# stm32u5xx_ll_utils.c: range 1 32 MHz per wait state, 160 MHz).
U5_MSI = [48, 24, 16, 12, 4, 2, 1.33, 1, 3.072, 1.536, 1.024, 0.768, 0.4, 0.2, 0.133, 0.1]
U5_WS_STEP = {0: 8 * MHZ, 1: 12.5 * MHZ, 2: 25 * MHZ, 3: 32 * MHZ}  # VOS 00 = range 4
U5_RANGE_MAX = {0: 25 * MHZ, 1: 55 * MHZ, 2: 110 * MHZ, 3: 160 * MHZ}


def decode_stm32u5(b: Board, regs: Regs) -> tuple[int, str, int]:
    """(HCLK, source, USART kernel clock) of an STM32U5, checked against the part's limits."""
    rcc, pwr = 0x46020C00, 0x46020800
    cr, icscr1, cfgr1 = regs[rcc], regs[rcc + 0x08], regs[rcc + 0x1C]
    msis_range = icscr1 >> 28 if icscr1 & (1 << 23) else (regs[rcc + 0xF4] >> 12) & 0xF
    msis = round(U5_MSI[msis_range] * MHZ)
    sws = (cfgr1 >> 2) & 3
    if sws == 3:
        cfg, div = regs[rcc + 0x28], regs[rcc + 0x34]
        src = cfg & 3
        ready_bit = {1: 2, 2: 10, 3: 17}[src]  # MSISRDY, HSIRDY, HSERDY
        assert cr & (1 << ready_bit), "PLL1 input not running"
        fin = {1: msis, 2: 16 * MHZ, 3: b.crystal_hz}[src]
        m, n = ((cfg >> 8) & 0xF) + 1, (div & 0x1FF) + 1
        r = ((div >> 24) & 0x7F) + 1
        ref, rge = fin / m, (cfg >> 2) & 3
        assert 4 * MHZ <= ref <= 16 * MHZ and 4 <= n <= 512
        assert rge == (0 if ref <= 8 * MHZ else 3)  # 00: 4-8 MHz, 11: 8-16 MHz
        assert r == 1 or r % 2 == 0  # PLL1R: 1 or even (RM0456 RCC_PLL1DIVR)
        assert not cfg & (1 << 4) and cfg & (1 << 18)  # integer mode, pll1_r_ck enabled
        assert 128 * MHZ <= ref * n <= 344 * MHZ
        mboost = (cfg >> 12) & 0xF
        assert 4 * MHZ <= fin / (2 * mboost if mboost else 1) <= 16 * MHZ  # booster's clock
        sys, source = ref * n / r, {1: "pll_msis", 2: "pll_hsi", 3: "pll_hse"}[src]
    else:
        sys = {0: msis, 1: 16 * MHZ, 2: b.crystal_hz}[sws]
        source = {0: "msis", 1: "hsi", 2: "hse"}[sws]
    cfgr2, cfgr3 = regs[rcc + 0x20], regs[rcc + 0x24]
    hclk = sys / _ahb_div(cfgr2 & 0xF)
    apb = [hclk / _apb_div((c >> s) & 7) for c, s in ((cfgr2, 4), (cfgr2, 8), (cfgr3, 4))]
    vosr = regs[pwr + 0x0C]
    vos = (vosr >> 16) & 3
    assert sys <= U5_RANGE_MAX[vos] and max(apb) <= hclk <= 160 * MHZ
    if sys > 55 * MHZ:  # the EPOD booster on and ready (RM0456 PWR_VOSR.BOOSTEN)
        assert vosr & (1 << 18) and vosr & (1 << 14)
    acr = regs[0x40022000]
    need = -(-hclk // U5_WS_STEP[vos]) - 1
    assert acr & 0xF >= need
    if source.startswith("pll"):
        assert acr & 0xF == need and acr & (1 << 8), "latency and prefetch"
    assert regs[0x40030400] & 1, "ICACHE enabled"
    sel = (regs[rcc + 0xE0] >> (2 * (b.uart.instance - 1))) & 3
    assert sel == 0  # USARTxSEL: the APB clock
    kernel = int(apb[1] if b.uart.instance == 1 else apb[0])  # USART1 on APB2, USART2/3 on APB1
    usart = {1: 0x40013800, 2: 0x40004400, 3: 0x40004800}[b.uart.instance]
    _check_stm32_brr(regs, usart + 0x0C, kernel)
    return int(hclk), source, kernel


def decode_samd21(b: Board, regs: Regs, text: str) -> tuple[int, str, int]:
    gens = {
        int(g): (int(c, 16), int(d, 16)) for g, c, d in re.findall(r"gen (\d+) (\S+) (\S+)", text)
    }
    clks = {int(i): int(v, 16) for i, v in re.findall(r"clk (\d+) (\S+)", text)}

    def gen_hz(g: int) -> tuple[float, str]:
        ctrl, div = gens[g]
        assert ctrl & (1 << 16), "generator enabled"
        src, d = (ctrl >> 8) & 0x1F, max(1, (div >> 8) & 0xFFFF)
        if src == 6:
            return 8 * MHZ / (1 << ((regs[0x40000820] >> 8) & 3)) / d, "osc8m"
        if src == 5:
            assert regs[0x4000080C] & 2 and regs[0x40000814] & 6 == 6  # XOSC32K: crystal, on
            return 32768 / d, "xosc32k"
        assert src == 7
        dfll, val = regs[0x40000824] & 0xFFFF, regs[0x40000828]
        assert dfll & 2, "DFLL48M enabled"
        if dfll & 4:  # closed loop: 32768 Hz reference times MUL
            ref = clks[0]
            assert ref & (1 << 14)
            ref_hz, name = gen_hz((ref >> 8) & 0xF)
            assert name == "xosc32k" and regs[0x4000080C] & 0xC0 == 0xC0  # locked
            return ref_hz * (regs[0x4000082C] & 0xFFFF) / d, "dfll"
        coarse = regs[0x00806024] >> 26
        assert (val >> 10) & 0x3F == coarse and val & 0x3FF == 512  # factory coarse, mid fine
        return 48 * MHZ / d, "dfll_open"

    hz, source = gen_hz(0)
    assert hz <= 48 * MHZ
    if hz > 24 * MHZ:
        assert (regs[0x41004004] >> 1) & 0xF >= 1  # NVM: 1 wait state above 24 MHz at 3.3 V
    core = clks[0x14 + b.uart.instance]
    assert core & (1 << 14)
    kernel, _ = gen_hz((core >> 8) & 0xF)
    baud = regs[0x42000800 + 0x400 * b.uart.instance + 0x0C] & 0xFFFF
    actual = kernel / 16 * (1 - baud / 65536)
    assert baud == 65536 - round(65536 * 16 * 115200 / kernel)
    assert abs(actual - 115200) / 115200 < 0.005
    return int(hz), source, int(kernel)


def decode_rp2040(b: Board, regs: Regs) -> tuple[int, str, int]:
    ref_sel, sys_sel, sys_ctrl = regs[0x40008038], regs[0x40008044], regs[0x4000803C]
    assert ref_sel in (1, 4) and sys_sel in (1, 2)
    if sys_sel == 2:
        assert (sys_ctrl >> 5) & 7 == 0 and ref_sel == 4  # aux = pll_sys; its reference: XOSC
        cs, pwr, fb, prim = regs[0x40028000], regs[0x40028004], regs[0x40028008], regs[0x4002800C]
        assert cs & (1 << 31) and pwr & 0x29 == 0 and regs[0x40024004] & (1 << 31)
        ref = b.crystal_hz / (cs & 0x3F)
        pd1, pd2 = (prim >> 16) & 7, (prim >> 12) & 7
        assert ref >= 5 * MHZ and 16 <= fb <= 320 and 1 <= pd2 <= pd1 <= 7
        assert 750 * MHZ <= ref * fb <= 1600 * MHZ
        hz, source = ref * fb / pd1 / pd2, "pll"
    else:
        hz, source = (b.crystal_hz, "xosc") if ref_sel == 4 else (b.reset_clock_hz, "rosc")
    hz /= max(1, regs[0x40008040] >> 8)
    assert hz <= 133 * MHZ
    peri = regs[0x40008048]
    assert peri & (1 << 11) and (peri >> 5) & 7 == 0  # clk_peri on, from clk_sys
    ibrd, fbrd = regs[0x40034024], regs[0x40034028]
    assert 64 * ibrd + fbrd == round(4 * hz / 115200)
    assert abs(4 * hz / (64 * ibrd + fbrd) - 115200) / 115200 < 0.01
    return int(hz), source, int(hz)


def decode_rp2350(b: Board, regs: Regs) -> tuple[int, str, int]:
    """RP2350 datasheet chapter 8 (register fields as pico-sdk's src/rp2350/hardware_regs give
    them): CLOCKS at 0x40010000, XOSC 0x40048000, PLL_SYS 0x40050000, UART0 0x40070000."""
    ref_sel, sys_sel, sys_ctrl = regs[0x40010038], regs[0x40010044], regs[0x4001003C]
    assert ref_sel in (1, 4) and sys_sel in (1, 2)
    assert regs[0x40010034] == 1 << 16  # CLK_REF_DIV: INT (bits 23:16) 1
    if sys_sel == 2:  # clk_sys on its aux mux: only PLL_SYS, fed by the crystal, is right here
        assert (sys_ctrl >> 5) & 7 == 0 and ref_sel == 4
        cs, pwr, fb, prim = regs[0x40050000], regs[0x40050004], regs[0x40050008], regs[0x4005000C]
        assert cs & (1 << 31) and pwr & 0x29 == 0 and regs[0x40048004] & (1 << 31)
        ref = b.crystal_hz / (cs & 0x3F)
        pd1, pd2 = (prim >> 16) & 7, (prim >> 12) & 7
        assert ref >= 5 * MHZ and 16 <= fb <= 320 and 1 <= pd2 <= pd1 <= 7
        assert 750 * MHZ <= ref * fb <= 1600 * MHZ
        hz, source = ref * fb / pd1 / pd2, "pll"
    else:
        hz, source = (b.crystal_hz, "xosc") if ref_sel == 4 else (b.reset_clock_hz, "rosc")
    assert regs[0x40010040] & 0xFFFF == 0  # CLK_SYS_DIV: no fraction; INT in bits 31:16
    hz /= max(1, regs[0x40010040] >> 16)
    assert hz <= 150 * MHZ
    peri = regs[0x40010048]
    assert peri & (1 << 11) and peri & (1 << 28) and (peri >> 5) & 7 == 0  # on, from clk_sys
    assert (regs[0x4001004C] >> 16) & 3 == 1  # CLK_PERI_DIV: INT 1
    assert regs[0x40020000] & ((1 << 6) | (1 << 9) | (1 << 26)) == 0  # IO/PADS_BANK0, UART0 run
    for pin in (0, 1):  # GP0 TX, GP1 RX: FUNCSEL 2 (UART0); pad input on, driver on, not isolated
        assert regs[0x40028004 + 8 * pin] & 0x1F == 2
        pad = regs[0x40038004 + 4 * pin]
        assert pad & (1 << 8) == 0 and pad & (1 << 6) and pad & (1 << 7) == 0
    ibrd, fbrd = regs[0x40070024], regs[0x40070028]
    assert 64 * ibrd + fbrd == round(4 * hz / 115200)
    assert abs(4 * hz / (64 * ibrd + fbrd) - 115200) / 115200 < 0.01
    assert regs[0x40070030] & 0x301 == 0x301  # UARTEN, TXE, RXE
    return int(hz), source, int(hz)


def decode_alif(b: Board, regs: Regs, crystal: bool) -> tuple[int, str, int]:
    """(M55-HP core clock, source, UART kernel clock) of an Alif Ensemble E7, from the CGU, AON,
    CLKCTL_SYS and CLKCTL_PER_SLV registers as the E7's SVD (AE722F80F55D5LS_CM55_HP_View.svd)
    and the kit's ConductorTool clocks.h define them; the limits from soc_features.h."""
    cgu = 0x1A602000
    osc_ctrl, locked, sel, es, ena = (regs[cgu + o] for o in (0, 4, 8, 0x10, 0x14))
    hfrc = 76_800_000 >> ((regs[0x1A60A03C] >> 11) & 7)  # HFRC_DIV_CLK
    code = (regs[0x1A604030] >> 13) & 0xF
    hfxo = 38_400_000 // {14: 256, 15: 1024}.get(code, 1 << code)  # HFXO_DIV_CLK
    assert code < 8 or code in (14, 15)
    assert ena & (1 << 12), "RTSS_HP_CLK enabled"
    if sel & (1 << 16):  # RTSS_HP_CLK from the PLL: ES0_PLL 100, 200, 300, 400 MHz
        assert locked & 1 and crystal
        hz, source = ((es & 3) + 1) * 100 * MHZ, "pll"
    else:  # ES0_OSC: 76.8 / 38.4 MHz RC, 76.8 / 38.4 MHz from the crystal
        osc = (es >> 8) & 3
        assert crystal or osc < 2
        taps = [(hfrc, "hfrc"), (hfrc // 2, "hfrc"), (76_800_000, "hfxo"), (hfxo, "hfxo")]
        hz, source = taps[osc]
    assert hz <= 400 * MHZ  # SOC_FEAT_M55_HP_MAX_HZ
    osc_sys = hfxo if osc_ctrl & 1 else hfrc  # HFXO_CLK, the oscillator side of the PLL muxes
    for bit in (4, 0):  # SYSPLL_CLK, SYST_REFCLK from the PLL: only when it is locked
        assert not sel & (1 << bit) or locked & 1
    syspll = 400 * MHZ if sel & (1 << 4) else osc_sys
    refclk = 100 * MHZ if sel & 1 else osc_sys
    aclk_sel, aclk_div = (regs[0x1A010820] >> 8) & 0xFF, ((regs[0x1A010824] >> 16) & 0x1F) + 1
    aclk = {1: refclk, 2: syspll // aclk_div}[aclk_sel]
    div = regs[0x1A604020]
    assert div & 3 < 3 and (div >> 8) & 3 < 3
    hclk, pclk = aclk >> ((div >> 8) & 3), aclk >> (div & 3)
    assert aclk <= 400 * MHZ and hclk <= 200 * MHZ and pclk <= 100 * MHZ
    ctrl, n = regs[0x4902F008], b.uart.instance
    assert ctrl & (1 << n), "the UART's clock enabled (CKEN)"
    if ctrl & (1 << (8 + n)):
        kernel = pclk
    else:  # HFOSC_CLK
        assert ena & (1 << 23)
        kernel = hfxo if osc_ctrl & (1 << 4) else hfrc // 2
    uart = 0x49018000 + 0x1000 * n  # the model keeps DLL, DLH at +0x100, +0x104
    div16 = 16 * ((regs[uart + 0x104] << 8) | regs[uart + 0x100]) + (regs[uart + 0xC0] & 0xF)
    assert div16 == (kernel + 57600) // 115200, (div16, kernel)  # kernel / (16 * DLx.DLF)
    assert abs(kernel / div16 - 115200) / 115200 < 0.01
    assert regs[uart + 0x0C] == 0x03  # LCR: 8N1, DLAB off
    return int(hz), source, int(kernel)
