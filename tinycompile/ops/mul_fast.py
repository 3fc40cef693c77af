"""Exact shortcuts for int8 MUL, checked at compile time over all 65,536 input pairs.

TFLM's int8 MUL (mul.cc, reference_integer_ops::Mul) multiplies the offset inputs,
t = (x + in1_offset) * (y + in2_offset) with |t| <= 255 * 255, requantizes t with
MultiplyByQuantizedMultiplier (multiplier m, shift -r), adds the output offset and clamps. The
result is a function of t only, and TFLM's requantization of it is one floor:

    out = floor((t * m + 2^30 + 2^(30 + r) + oo * 2^(31 + r) - [t < 0] * 2^31) / 2^(31 + r))

(tc_qmath.h, tc_requant: the nested floors of SaturatingRoundingDoublingHighMul and
RoundingDivideByPOT merge; the sign term is the half-away-from-zero rounding of negative ties).
No single linear form reproduces it (ties of both signs round apart), so both forms keep the
sign term:

- ``dsp`` (Cortex-M4/M7): with 2t from SMULBB/SMULTT of SXTAB16 lanes,
  ``(SMMLAR(2t, m, q) + (2t >> 31)) >> r``, q = 2^(r-1) + oo * 2^r, saturated by SSAT16: this is
  the formula above term for term (tc_dsp.h's tc_rq2_s8: SMMLAR(2t, m, q) = q +
  SaturatingRoundingDoublingHighMul(t, m), the sign of t standing for the sign of that), for
  shifts r in [1, 23]; the values before saturation must fit 16-bit lanes, and the whole
  65,536 cases are recomputed here anyway.
- ``m0`` (ARMv6-M and the host's C): 32-bit multiplies only, so the multiplier is halved,
  P = m / 2 rounded (under 2^30, split P = ph * 2^15 + pl, both under 2^15), S = 30 + r, and
  ``out = ((((t * ph + ((t * pl) >> 15) + rm) >> 15) + rh + (t >> 31)) >> r``: the floor of
  (t * P + rm * 2^15 + rh * 2^30 - [t < 0] * 2^30) / 2^S, every step in int32. With m even it is
  the formula above exactly; else P differs from m / 2 by one half and the form is kept only if
  some offset (a multiple of 2^15) reproduces all 65,536 clamped results, which is checked here.
"""

from __future__ import annotations

import numpy as np

from ..quant.qmath import multiply_by_quantized_multiplier_np as mbqm

V = np.arange(-128, 128, dtype=np.int64)
BIG = np.int64(1) << 62
I32 = 1 << 31


def mul_exact(f: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """(t, TFLM's clamped output) for every pair, both indexed [x + 128, y + 128]."""
    t = (V[:, None] + f["in1_offset"]) * (V[None, :] + f["in2_offset"])
    raw = mbqm(t, f["out_multiplier"], f["out_shift"]) + f["out_offset"]
    return t, np.clip(raw, f["act_min"], f["act_max"])


def _dsp(f: dict[str, int], t: np.ndarray, e: np.ndarray) -> dict[str, int]:
    """tc_mul_s8's SMMLAR form, recomputed over every pair."""
    r = -f["out_shift"]
    if not 1 <= r <= 23:
        return {}
    m, q = f["out_multiplier"], (1 << (r - 1)) + f["out_offset"] * (1 << r)
    t2 = 2 * t
    w = ((q << 32) + t2 * m + (1 << 31)) >> 32  # SMMLAR
    w = (w + (t2 >> 31)) >> r
    if np.abs(w).max() >= 1 << 15:  # SSAT16 on lanes
        return {}
    if not (np.clip(w, f["act_min"], f["act_max"]) == e).all():
        return {}
    return {"dsp_q": int(q), "dsp_r": r}


def _m0_eval(t: np.ndarray, ph: int, pl: int, rm: int, rh: int, r: int) -> np.ndarray | None:
    """The m0 form's value (before the clamp) as the int32 steps compute it, or None where an
    intermediate would leave int32."""
    y = t * ph + ((t * pl) >> 15) + rm
    if y.min() < -I32 or y.max() >= I32:
        return None
    z = (y >> 15) + rh + np.where(t < 0, -1, 0)
    if z.min() < -I32 or z.max() >= I32:
        return None
    return z >> r


def _m0(f: dict[str, int], t: np.ndarray, e: np.ndarray) -> dict[str, int]:
    r, m = -f["out_shift"], f["out_multiplier"]
    lo, hi = f["act_min"], f["act_max"]
    if not 1 <= r <= 23 or m <= 0:
        return {}
    tt, idx = np.unique(t.ravel(), return_index=True)
    ee = e.ravel()[idx]
    s = 30 + r
    for p in dict.fromkeys((m // 2, (m + 1) // 2)):
        if not 0 < p < 1 << 30:
            continue
        # R with floor((tt * p + R - [tt < 0] * 2^30) / 2^s) == ee wherever not clamped
        base = tt * p - np.where(tt < 0, 1 << 30, 0)
        low = np.where(ee > lo, ee << s, -BIG) - base
        high = np.where(ee < hi, ((ee + 1) << s) - 1, BIG) - base
        r_lo, r_hi = int(low.max()), int(high.min())
        # the multiple of 2^15 nearest TFLM's own offset (halved) inside [r_lo, r_hi]
        natural = (1 << 29) + (1 << (29 + r)) + f["out_offset"] * (1 << (30 + r))
        rr = (min(max(natural, r_lo), r_hi) >> 15) << 15
        if rr < r_lo:
            rr += 1 << 15
        if rr > r_hi:
            continue
        rh, rm = rr >> 30, (rr >> 15) & 0x7FFF
        ph, pl = p >> 15, p & 0x7FFF
        z = _m0_eval(t, ph, pl, rm, rh, r)
        if z is not None and (np.clip(z, lo, hi) == e).all():
            return {"m0_ph": ph, "m0_pl": pl, "m0_rm": rm, "m0_rh": rh, "m0_r": r}
    return {}


MUL_FORM_FIELDS = ("dsp_q", "dsp_r", "m0_ph", "m0_pl", "m0_rm", "m0_rh", "m0_r")


def mul_forms(f: dict[str, int]) -> dict[str, int]:
    """The params fields of the forms that reproduce TFLM's MUL on every pair ({} if none):
    dsp_q / dsp_r (dsp_r > 0: the M4/M7 form) and m0_ph / m0_pl / m0_rm / m0_rh / m0_r
    (m0_r > 0: the 32-bit form)."""
    t, e = mul_exact(f)
    return {**_dsp(f, t, e), **_m0(f, t, e)}


def mul_forms_check(f: dict[str, int], forms: dict[str, int]) -> None:
    """Recompute the forms over every pair (tests): raises AssertionError on a difference."""
    t, e = mul_exact(f)
    lo, hi = f["act_min"], f["act_max"]
    if forms.get("dsp_r"):
        assert _dsp(f, t, e) == {k: forms[k] for k in ("dsp_q", "dsp_r")}
    if forms.get("m0_r"):
        z = _m0_eval(t, *(forms[k] for k in ("m0_ph", "m0_pl", "m0_rm", "m0_rh", "m0_r")))
        assert z is not None and (np.clip(z, lo, hi) == e).all()
