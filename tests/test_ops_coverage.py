"""The README's "Coverage of TFLM's operators" table: every operator TFLM's op resolver can
register is a row, with the activation types it runs here (int8, int16 of 16x8 models, float32
at the model's boundary) or the reason it is refused. The type columns are checked against the
op test models (tests/models/ops, which tests/test_ops_registry.py compares with TFLM layer by
layer): a "yes" needs a model that shows it, and a model that shows it needs a "yes"."""

from __future__ import annotations

import functools
import re
from pathlib import Path

from conftest import op_models

from tinycompile.frontend import load_model
from tinycompile.ops import OPS, load_all

ROOT = Path(__file__).resolve().parent.parent

# MicroMutableOpResolver's Add*() of tflite-micro 90b983c2 (2026-08-20, the baseline's commit):
# builtins by their schema name, custom operators by the name TFLM registers them under
TFLM_OPS = (
    "ABS ADD ADD_N ARG_MAX ARG_MIN ASSIGN_VARIABLE AVERAGE_POOL_2D BATCH_MATMUL BATCH_TO_SPACE_ND "
    "BROADCAST_ARGS BROADCAST_TO CALL_ONCE CAST CEIL CIRCULAR_BUFFER CONCATENATION CONV_2D COS "
    "CUMSUM TFLM_DECODE SignalDelay DEPTH_TO_SPACE DEPTHWISE_CONV_2D DEQUANTIZE "
    "TFLite_Detection_PostProcess DIV DYNAMIC_UPDATE_SLICE EMBEDDING_LOOKUP SignalEnergy ELU "
    "EQUAL ETHOSU EXP EXPAND_DIMS SignalFftAutoScale FILL SignalFilterBank SignalFilterBankLog "
    "SignalFilterBankSquareRoot SignalFilterBankSpectralSubtraction FLOOR FLOOR_DIV FLOOR_MOD "
    "SignalFramer FULLY_CONNECTED GATHER GATHER_ND GREATER GREATER_EQUAL HARD_SWISH IF "
    "SignalIrfft L2_NORMALIZATION L2_POOL_2D LEAKY_RELU LESS LESS_EQUAL LOG LOGICAL_AND "
    "LOGICAL_NOT LOGICAL_OR LOGISTIC LOG_SOFTMAX MAXIMUM MAX_POOL_2D MIRROR_PAD MEAN MINIMUM MUL "
    "NEG NOT_EQUAL SignalOverlapAdd PACK PAD PADV2 SignalPCAN PRELU QUANTIZE READ_VARIABLE "
    "REDUCE_ALL REDUCE_MAX REDUCE_MIN RELU RELU6 RESHAPE RESIZE_BILINEAR RESIZE_NEAREST_NEIGHBOR "
    "REVERSE_V2 SignalRfft ROUND RSQRT SELECT_V2 SHAPE SIN SLICE SOFTMAX SPACE_TO_BATCH_ND "
    "SPACE_TO_DEPTH SPLIT SPLIT_V SQUEEZE SQRT SQUARE SQUARED_DIFFERENCE STRIDED_SLICE "
    "SignalStacker SUB SUM SVDF TANH TRANSPOSE_CONV TRANSPOSE UNPACK UNIDIRECTIONAL_SEQUENCE_LSTM "
    "VAR_HANDLE WHILE SignalWindow ZEROS_LIKE"
).split()
TYPES = ("int8", "int16", "float32")


def _table() -> dict[str, list[str]]:
    """{operator: [int8, int16, float32 cells, notes]} of the README's coverage table."""
    text = (ROOT / "README.md").read_text()
    section = text.split("## Coverage of TFLM's operators", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, list[str]] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) != 5 or set(cells[0]) <= set("-: "):
            continue
        if cells[0] == "operator":
            continue
        name = cells[0].strip("`")
        assert name not in rows, f"{name} has two rows"
        rows[name] = cells[1:]
    return rows


@functools.cache
def _shown() -> dict[str, set[str]]:
    """{kind: activation types} shown by the op test models that compile (not the refused)."""
    found: dict[str, set[str]] = {}
    for path in op_models():
        if path.suffix != ".tflite":
            continue
        g = load_model(path)
        for op in g.ops:
            types = found.setdefault(op.kind, set())
            for tid in (*op.inputs, *op.outputs):
                if tid < 0:
                    continue
                t = g.t(tid)
                if not t.is_const and not t.variable and t.dtype in TYPES:
                    types.add(t.dtype)
    return found


def test_every_tflm_operator_has_a_row() -> None:
    rows = _table()
    assert len(TFLM_OPS) == len(set(TFLM_OPS)) == 118
    assert sorted(rows) == sorted(TFLM_OPS), (
        sorted(set(TFLM_OPS) - set(rows)),
        sorted(set(rows) - set(TFLM_OPS)),
    )


def test_type_columns_agree_with_the_test_models() -> None:
    load_all()
    wrong = []
    for name, (i8, i16, f32, notes) in _table().items():
        shown = _shown().get(name, set()) if name in OPS else set()
        for ty, cell in zip(TYPES, (i8, i16, f32), strict=True):
            assert cell in ("yes", "-"), f"{name}: {ty} cell {cell!r} is neither 'yes' nor '-'"
            if (cell == "yes") != (ty in shown):
                wrong.append(f"{name} {ty}: README {cell!r}, models show {sorted(shown)}")
        if not shown:
            assert notes, f"{name} is not supported: its row must say why"
    assert not wrong, "\n".join(wrong)


def test_every_registered_operator_of_tflm_is_covered() -> None:
    """An operator unit for a TFLM operator shows at least one type (its test model)."""
    load_all()
    for name in TFLM_OPS:
        if name in OPS and not OPS[name].internal:
            assert _shown().get(name), f"{name} is registered but no op model shows a type"


def test_the_row_names_are_operators() -> None:
    assert all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", n) for n in _table())
