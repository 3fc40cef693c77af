"""int16 activations (issue 24): SOFTMAX int16 -> int16 and int8 -> int16, LOGISTIC and TANH
int16, QUANTIZE to and from int32 (and int32 graph inputs and outputs), and the keyword model in
the style of TFLM's keyword_scrambled benchmark (int8 SVDFs, int8 -> int16 SOFTMAX, int32
output), against TFLM on the host and in QEMU; the tables against their definition; what TFLM
refuses, refused in one line.

The models (tests/models/ops, made by tests/modelgen/ops_int16_act.py) are also compared layer by
layer by tests/test_ops_registry.py, and the int16-input ones by tests/test_ops_int16.py (with
its checks that the activations stay alive).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import MODELS
from modelgen.real_kws import streams
from modelgen.tflite_writer import Node, T, write

from tinycompile import api, cli
from tinycompile.errors import CompileError
from tinycompile.frontend import load_model
from tinycompile.frontend.tflite import read_tflite
from tinycompile.ops import tables as TB
from tinycompile.run.inputs import make_inputs, user_inputs
from tinycompile.run.reference import run_tflm

OPS = MODELS / "ops"
KWS = OPS / "keyword_s16_softmax.tflite"
STEPS = 24
HAVE_QEMU = bool(shutil.which("qemu-system-arm") and shutil.which("arm-none-eabi-gcc"))
S15 = 2.0**-15


def _kws_frames(n: int = STEPS, seed: int = 5) -> np.ndarray:
    """Keyword-like frames of one stream, in order, quantized as the model's int8 input."""
    q = load_model(KWS).t(load_model(KWS).inputs[0]).quant
    x = streams(n, seed=seed)[0]
    return np.clip(np.round(x / q.s) + q.zp, -128, 127).astype(np.int8)


def test_keyword_model_has_keyword_scrambled_layer_types() -> None:
    g = load_model(KWS)
    kinds = [op.kind for op in g.ops]
    assert kinds[:2] == ["QUANTIZE", "FULLY_CONNECTED"] and kinds.count("SVDF") == 3
    assert kinds[-3:] == ["FULLY_CONNECTED", "SOFTMAX", "QUANTIZE"]
    sm, q = g.ops[-2], g.ops[-1]
    assert (g.t(sm.inputs[0]).dtype, g.t(sm.outputs[0]).dtype) == ("int8", "int16")
    assert g.t(q.outputs[0]).dtype == "int32" and g.t(g.inputs[0]).dtype == "int8"
    ranks = [op.options.get("rank") for op in g.ops if op.kind == "SVDF"]
    assert sorted(set(ranks)) == [1, 2]
    for op in g.ops:
        if op.kind == "SVDF":
            assert g.t(op.inputs[2]).dtype == "int16" and g.t(op.inputs[4]).dtype == "int16"


def test_keyword_model_bit_exact_step_by_step_on_host() -> None:
    """24 frames of one stream through one instance: every layer, the int32 output and the three
    SVDF states after every frame equal TFLM's; the outputs are alive and the state matters."""
    x = _kws_frames()
    r = api.compare(KWS, inputs=[x], layers=True)
    assert r.ok and r.mismatches == 0, str(r)
    assert len(r.layers) >= len(load_model(KWS).ops) - 1  # every layer
    assert len(r.state) == 3 and all(s["mismatches"] == 0 for s in r.state)
    probs = np.asarray(r.reference_outputs[0]).reshape(STEPS, -1)
    assert probs.dtype == np.int32 and len(np.unique(probs)) > 40
    assert len(np.unique(probs.argmax(axis=1))) >= 3, "always the same winner"
    fresh = run_tflm(KWS, [x], reset_between=True).outputs[0].reshape(STEPS, -1)
    assert not np.array_equal(fresh, probs)


@pytest.mark.qemu
@pytest.mark.skipif(not HAVE_QEMU, reason="needs qemu-system-arm and arm-none-eabi-gcc")
@pytest.mark.parametrize("board", ["stm32f746", "samd21"])
def test_keyword_model_bit_exact_in_qemu(board: str, tmp_path: Path) -> None:
    r = api.compare(KWS, board=board, inputs=[_kws_frames(12)], layers=True, workdir=tmp_path)
    assert r.ok and r.mismatches == 0 and r.layers, str(r)
    assert all(s["mismatches"] == 0 for s in r.state)


QEMU_MODELS = [
    "softmax16_rows3d",
    "softmax16_beta_rows",
    "softmax_s8_s16_rows",
    "logistic16_direct",
    "tanh16_pot11_s8in",
    "relu16",
    "quantize_s32_chain",
    "quantize_s32_in",
]


@pytest.mark.qemu
@pytest.mark.skipif(not HAVE_QEMU, reason="needs qemu-system-arm and arm-none-eabi-gcc")
@pytest.mark.parametrize("board", ["stm32f746", "samd21"])
def test_int16_activation_models_in_qemu(board: str, tmp_path: Path) -> None:
    """The int16 kernels (and the int32 QUANTIZE pairs, int32 inputs) on the Cortex-M7 and the
    Cortex-M0+ stand-ins, every layer."""
    for name in QEMU_MODELS:
        r = api.compare(OPS / f"{name}.tflite", board=board, n=10, seed=3, workdir=tmp_path / name)
        assert r.ok and r.mismatches == 0, f"{name}: {r}"


@pytest.mark.qemu
@pytest.mark.skipif(not HAVE_QEMU, reason="needs qemu-system-arm and arm-none-eabi-gcc")
@pytest.mark.parametrize("name", ["quantize_s32_in", "keyword_s16_softmax"])
def test_validate_over_serial_with_int32_io(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    """`validate` sends an int32 input and reads an int32 output over the serial protocol (the
    board firmware in QEMU, stm32f407's netduinoplus2)."""
    args = ["validate", str(OPS / f"{name}.tflite"), "--board", "stm32f407", "--port", "qemu"]
    code = cli.main([*args, "-n", "3", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    d = json.loads(out)
    assert d["bit_exact"] and len(d["inputs"]) == 3


def test_int32_input_from_user_data() -> None:
    """An int32 graph input takes the user's int32 codes (and refuses values beyond int32)."""
    path = OPS / "quantize_s32_in.tflite"
    g = load_model(path)
    x = np.arange(-25000, 25000, 500, dtype=np.int32).reshape(2, 2, 25)
    ui = user_inputs(g, [x])
    assert ui.arrays[0].dtype == np.int32
    r = api.compare(path, inputs=ui)
    assert r.ok, str(r)
    with pytest.raises(CompileError, match="wants int32 data"):
        user_inputs(g, [np.full((1, 2, 25), 2**40, np.int64)])


def test_random_int32_inputs_span_the_quantize_ranges() -> None:
    g = load_model(OPS / "quantize_s32_in.tflite")
    x = make_inputs(g, 50, 1)[0]
    assert x.dtype == np.int32 and x.min() < -128 * 200 and x.max() > 127 * 200


# ------------------------------------------------------------------ tables and parameters


def test_softmax_s16_tables_match_libm_expf() -> None:
    """The exp table TFLM's LUTPopulate builds with the C library's expf: ours (the correctly
    rounded float32 exp) is the same; and the tables' ends are TFLM's."""
    exp_lut, recip_lut = TB.softmax_s16_luts()
    assert exp_lut.shape == recip_lut.shape == (513,)
    assert exp_lut[512] == 32767 and recip_lut[0] == 32767 and recip_lut[512] == 16384
    assert np.all(np.diff(exp_lut.astype(int)) >= 0) and np.all(np.diff(recip_lut.astype(int)) <= 0)
    name = ctypes.util.find_library("m")
    if name is None:
        pytest.skip("no C math library")
    libm = ctypes.CDLL(name)
    libm.expf.restype, libm.expf.argtypes = ctypes.c_float, [ctypes.c_float]
    f32 = np.float32
    ref = TB.lut_populate_int16(
        f32(f32(10) / f32(65535)),
        32767,
        f32(f32(2) / f32(65535)),
        0,
        lambda v: f32(libm.expf(float(v))),
    )
    assert np.array_equal(ref, exp_lut)


def test_lut_lookup16_interpolates() -> None:
    lut = np.arange(513, dtype=np.int16) * 64 - 16384  # a line: lookups land on it exactly
    for v in (-32768, -1, 0, 1, 127, 128, 32767):
        assert TB.lut_lookup16(v, lut) == (v + 1) >> 1  # v / 2, halves rounded up


@pytest.mark.parametrize(
    ("scale", "tanh", "want"),
    [
        (2.0**-12, False, (3, 0)),  # TFLM's power-of-two case
        (2.0**-12, True, (3, 0)),
        (2.0**-11, True, (6, 0)),  # TANH only
        (2.0**-11, False, (24576, 12)),  # LOGISTIC: the general path (6 doubled 12 times)
        (1e-4, False, (20132, 14)),  # 1.2288 doubled 14 times, truncated
    ],
)
def test_sigmoid16_params(scale: float, tanh: bool, want: tuple[int, int]) -> None:
    assert TB.sigmoid16_params(scale, tanh) == want


# ------------------------------------------------------------------ refusals (TFLM's)


def _one(kind: str, in_t, out_t, beta: float | None = None):
    opts = ("NONE", None)
    if beta is not None:
        from modelgen.ops_int16_act import _softmax_options

        opts = ("SoftmaxOptions", _softmax_options(beta))
    tensors = [T("x", (2, 8), in_t[0], quant=in_t[1]), T("y", (2, 8), out_t[0], quant=out_t[1])]
    return read_tflite(write(tensors, [Node(kind, [0], [1], *opts)], [0], [1]), source="t")


def _refusal(g) -> str:
    with pytest.raises(CompileError) as e:
        api.plan(g)
    return str(e.value)


@pytest.mark.parametrize(
    ("kind", "in_t", "out_t", "message"),
    [
        ("SOFTMAX", ("int16", (1e-4, 0)), ("int16", (1 / 256, 0)),
         "op #0 SOFTMAX: int16 output must have scale 1/32768 and zero point 0"),
        ("SOFTMAX", ("int16", (1e-4, 3)), ("int16", (S15, 0)),
         "int16 activation tensor 0 has zero point 3 (16x8 needs 0)"),
        ("SOFTMAX", ("int8", (0.1, 0)), ("int16", (1 / 65536, 0)),
         "int8 -> int16 output must have scale 1/65536 and zero point -32768"),
        ("SOFTMAX", ("int16", (1e-4, 0)), ("int8", (1 / 256, -128)),
         "int8 activation tensor 1 in a 16x8 op (int16 expected)"),
        ("SOFTMAX", ("int16", (10.0, 0)), ("int16", (S15, 0)),
         "op #0 SOFTMAX: input scale * beta = 10 is too large"),
        ("LOGISTIC", ("int16", (1e-4, 0)), ("int16", (2.0**-14, 0)),
         "op #0 LOGISTIC: int16 output scale must be 2^-15"),
        ("TANH", ("int16", (4.0, 0)), ("int16", (S15, 0)),
         "op #0 TANH: int16 input scale 4 is too large (TFLM: multiplier > 32767)"),
        ("HARD_SWISH", ("int16", (1e-4, 0)), ("int16", (1e-4, 0)),
         "op #0 HARD_SWISH: int16 activations are not supported for HARD_SWISH (16x8)"),
        ("QUANTIZE", ("float32", None), ("int32", (0.01, 0)),
         "op #0 QUANTIZE: float32 -> int32 quantization is not supported (TFLM has none)"),
    ],
)  # fmt: skip
def test_refusals(kind: str, in_t, out_t, message: str) -> None:
    beta = 1.0 if kind == "SOFTMAX" else None
    assert message in _refusal(_one(kind, in_t, out_t, beta))
