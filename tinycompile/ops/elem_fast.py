"""Exact shortcuts for int8 ADD, found and proven at compile time.

TFLM's int8 ADD (add.cc, reference_integer_ops::Add) rescales both inputs (left shift 20, one
SaturatingRoundingDoublingHighMul and rounding shift each), sums them, requantizes the sum and
clamps. The result is a function of the two input bytes only: 65,536 cases, which the compiler
computes exactly (``add_exact``) and then searches for a linear form that reproduces every one:

- ``lin``: ``clamp((x * P + y * Q + R) >> K)`` in int32 (wrapping sums: only the final value has
  to fit), two multiply-accumulates per element; the portable and ARMv6-M loops.
- ``dsp``: ``clamp((R + floor(P * x / 256) + floor(Q * y / 256)) >> 16)``: what SMLAWB/SMLAWT
  compute from input bytes placed in the high byte of 16-bit lanes, two lanes per instruction,
  the final shift being a halfword pick (PKHTB); the Cortex-M4/M7 loop.

P and Q start from the exact real slopes (input scale / output scale) and R is the middle of the
interval every case allows; a form is kept only if all 65,536 clamped results equal TFLM's, so
the kernels stay bit-exact by construction (on random scales about 98% of ADDs have both forms;
the others keep the rescaling path). No flash beyond four words.
"""

from __future__ import annotations

import numpy as np

from ..quant.qmath import multiply_by_quantized_multiplier_np as mbqm

V = np.arange(-128, 128, dtype=np.int64)
BIG = np.int64(1) << 62
I32 = 1 << 31


def add_exact(f: dict[str, int]) -> np.ndarray:
    """TFLM's clamped int8 ADD output for every pair: E[x + 128, y + 128]."""
    left = f["left_shift"]
    a = mbqm((V + f["in1_offset"]) << left, f["in1_multiplier"], f["in1_shift"])
    b = mbqm((V + f["in2_offset"]) << left, f["in2_multiplier"], f["in2_shift"])
    raw = mbqm(a[:, None] + b[None, :], f["out_multiplier"], f["out_shift"]) + f["out_offset"]
    return np.clip(raw, f["act_min"], f["act_max"])


def _slope(f: dict[str, int], name: str) -> float:
    """d(output)/d(input byte) of one input, from the fixed-point factors themselves."""
    m, s = f[f"{name}_multiplier"], f[f"{name}_shift"]
    mo, so = f["out_multiplier"], f["out_shift"]
    return m * 2.0 ** (s - 31) * 2.0 ** f["left_shift"] * mo * 2.0 ** (so - 31)


def _fit_r(e: np.ndarray, lo: int, hi: int, k: int, base: np.ndarray) -> int | None:
    """An R with clamp((base + R) >> k, lo, hi) == e everywhere and |base + R| < 2^31."""
    low = np.where(e > lo, e << k, -BIG)  # (base + R) >> k >= e unless clamped low
    high = np.where(e < hi, ((e + 1) << k) - 1, BIG)
    r_lo, r_hi = int((low - base).max()), int((high - base).min())
    if r_lo > r_hi:
        return None
    r = max(r_lo, min(r_hi, (r_lo + r_hi) // 2))
    t = base + r
    if t.min() < -I32 or t.max() >= I32:
        return None
    return r


def _search(e, lo, hi, k, p0, q0, term) -> tuple[int, int, int] | None:
    for dp in (0, -1, 1, -2, 2):
        for dq in (0, -1, 1, -2, 2):
            p, q = p0 + dp, q0 + dq
            if not (-I32 <= p < I32 and -I32 <= q < I32):
                continue
            base = term(p)[:, None] + term(q)[None, :]
            r = _fit_r(e, lo, hi, k, base)
            if r is not None:
                return p, q, r
    return None


ADD_FORM_FIELDS = ("lin_k", "lin_p", "lin_q", "lin_r", "dsp_ok", "dsp_p", "dsp_q", "dsp_r")


def add_forms(f: dict[str, int]) -> dict[str, int]:
    """The params fields of the forms found (none: {}): lin_k/lin_p/lin_q/lin_r and
    dsp_ok/dsp_p/dsp_q/dsp_r."""
    e = add_exact(f)
    lo, hi = f["act_min"], f["act_max"]
    al, be = _slope(f, "in1"), _slope(f, "in2")
    out: dict[str, int] = {}
    # dsp: K = 16, P ~ slope * 2^24 (the byte sits 8 bits up in its lane, SMLAW drops 16)
    if max(abs(al), abs(be)) < 64:
        hit = _search(e, lo, hi, 16, round(al * 2**24), round(be * 2**24), lambda p: (p * V) >> 8)
        if hit:
            out.update(dsp_ok=1, dsp_p=hit[0], dsp_q=hit[1], dsp_r=hit[2])
    # lin: the largest shifts whose sums stay in int32 first
    span = (abs(al) + abs(be)) * 128 + abs(f["out_offset"]) + 256
    for k in [k for k in range(30, 0, -1) if span * 2.0**k < 2**30][:3]:
        hit = _search(e, lo, hi, k, round(al * 2**k), round(be * 2**k), lambda p: p * V)
        if hit:
            out.update(lin_k=k, lin_p=hit[0], lin_q=hit[1], lin_r=hit[2])
            break
    return out


def add_forms_check(f: dict[str, int], forms: dict[str, int]) -> None:
    """Recompute both forms over every pair (tests): raises AssertionError on a difference."""
    e = add_exact(f)
    lo, hi = f["act_min"], f["act_max"]
    x, y = V[:, None], V[None, :]
    if forms.get("lin_k"):
        t = (x * forms["lin_p"] + y * forms["lin_q"] + forms["lin_r"] + I32) % (2 * I32) - I32
        assert (np.clip(t >> forms["lin_k"], lo, hi) == e).all()
    if forms.get("dsp_ok"):
        t = forms["dsp_r"] + ((forms["dsp_p"] * x) >> 8) + ((forms["dsp_q"] * y) >> 8)
        assert (t >= -I32).all() and (t < I32).all()
        assert (np.clip(t >> 16, lo, hi) == e).all()
