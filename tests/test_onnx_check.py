"""The ONNX reader's structural checks (tinycompile/frontend/onnx_check.py): each broken field
is refused with one line naming the node or value and the reason, before the reader uses it;
the real CLI exits 2 on them."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from tinycompile import api
from tinycompile.errors import CompileError
from tinycompile.frontend.onnx_model import plain

onnx = pytest.importorskip("onnx")
from onnx import helper, numpy_helper  # noqa: E402

from tests.onnxgen.handmade import ties  # noqa: E402

# ties(): Q -> QLinearConv -> Flatten -> QLinearMatMul -> QLinearAdd -> DQ


def _init(m: onnx.ModelProto, name: str) -> onnx.TensorProto:
    return next(t for t in m.graph.initializer if t.name == name)


def _refusal(m: onnx.ModelProto | bytes, path: Path) -> str:
    path.write_bytes(m if isinstance(m, bytes) else m.SerializeToString())
    with pytest.raises(CompileError) as ei:
        api.plan(path)
    line = str(ei.value)
    assert "\n" not in line and str(path) in line, line
    return line


def _renamed(old: bytes, new: bytes, edit: Callable[[onnx.ModelProto], None]) -> bytes:
    """ties() serialized after ``edit``, with the name ``old`` replaced by bytes of the same
    length (what protobuf cannot set from Python: text that is not UTF-8)."""
    m = ties()
    edit(m)
    data = m.SerializeToString()
    assert len(old) == len(new) and old in data
    return data.replace(old, new)


def test_plain_accepts_bytes() -> None:
    assert plain(b"ab\xff\ncd") == "ab??cd"
    assert plain("x" * 50) == "x" * 40


def test_names_not_utf8(tmp_path: Path) -> None:
    def node_name(m: onnx.ModelProto) -> None:
        m.graph.node[1].name = "NODENAME"

    line = _refusal(_renamed(b"NODENAME", b"NODE\xff\xfeME", node_name), tmp_path / "n.onnx")
    assert "op #1 QLinearConv: node 'NODE??ME': its name is not valid UTF-8 text" in line, line

    def value_name(m: onnx.ModelProto) -> None:
        for n in m.graph.node:
            for seq in (n.input, n.output):
                for k, x in enumerate(seq):
                    if x == "c":
                        seq[k] = "VV"

    line = _refusal(_renamed(b"VV", b"\xc0\x80", value_name), tmp_path / "v.onnx")
    assert "op #1 QLinearConv" in line and "value name '??' is not valid UTF-8" in line, line

    def op_type(m: onnx.ModelProto) -> None:
        m.graph.node[2].op_type = "Flatte"

    line = _refusal(_renamed(b"Flatte", b"Flat\xffe", op_type), tmp_path / "o.onnx")
    assert "op #2 Flat?e" in line and "op type is not valid UTF-8" in line, line


@pytest.mark.parametrize(
    "dims, why",
    [
        ([1099511627776], "a negative or huge dimension"),
        ([-1, 2, 3, 3], "a negative or huge dimension"),
        ([4, 2, 3, 2], "(48 values, 48 bytes) but 72 bytes of data"),
        ([1] * 9, "rank 9"),
    ],
)
def test_initializer_dims_against_data(tmp_path: Path, dims: list[int], why: str) -> None:
    m = ties()
    w = _init(m, "w")
    del w.dims[:]
    w.dims.extend(dims)
    line = _refusal(m, tmp_path / "d.onnx")
    assert "initializer 'w'" in line and why in line, line


def test_typed_data_and_types(tmp_path: Path) -> None:
    m = ties()
    z = _init(m, "xz")
    z.ClearField("raw_data")
    z.int32_data.extend([300])  # numpy would wrap it to 44
    line = _refusal(m, tmp_path / "z.onnx")
    assert "initializer 'xz' (int8) holds 300, outside [-128, 127]" in line, line
    m = ties()
    _init(m, "ws").float_data.extend([1.0])  # raw data and a typed field: raw wins, fine
    assert api.plan(_save(m, tmp_path / "both.onnx")).graph.ops
    m = ties()
    _init(m, "cb").data_type = 8  # string
    assert "initializer 'cb' is string, which is not supported" in _refusal(m, tmp_path / "s.onnx")


def _save(m: onnx.ModelProto, path: Path) -> Path:
    path.write_bytes(m.SerializeToString())
    return path


def test_graph_structure(tmp_path: Path) -> None:
    m = ties()
    m.graph.node[2].input[0] = "mm"  # Flatten reads QLinearMatMul's output: produced later
    line = _refusal(m, tmp_path / "cycle.onnx")
    assert "op #2 Flatten: input 'mm' is produced later (a cycle" in line, line
    m = ties()
    m.graph.node[3].input[0] = "nowhere"
    assert "produced by no node, initializer or graph input" in _refusal(m, tmp_path / "d.onnx")
    m = ties()
    m.graph.node[3].output[0] = "c"  # QLinearConv's output
    assert "op #3 QLinearMatMul: output 'c' is defined twice" in _refusal(m, tmp_path / "o.onnx")
    m = ties()
    del m.graph.node[3].input[7]
    line = _refusal(m, tmp_path / "arity.onnx")
    assert "has 7 inputs (needs at least 8 and at most 8)" in line, line
    m = ties()
    m.graph.output[0].name = "ghost"
    assert "graph output 'ghost' is produced by no node" in _refusal(m, tmp_path / "g.onnx")
    m = ties()
    m.opset_import.add().CopyFrom(m.opset_import[0])
    assert "imported twice" in _refusal(m, tmp_path / "dup_opset.onnx")


@pytest.mark.parametrize(
    "name, value, why",
    [
        ("strides", [0, 1], "strides [0, 1] out of range"),
        ("strides", [2], "must have 2 values"),
        ("pads", [1, 0, 1], "must have 4 values"),
        ("group", 0, "group 0 is out of range"),
        ("group", 2.0, "attribute 'group' must be an int"),
        ("group", 2, "group 2 does not fit 2 input channels and weights [4, 2, 3, 3]"),
        ("auto_pad", [b"NOTSET"], "attribute 'auto_pad' must be a string"),
    ],
)
def test_attribute_types_and_values(tmp_path: Path, name: str, value: object, why: str) -> None:
    m = ties()
    n = m.graph.node[1]
    for a in list(n.attribute):
        if a.name == name:
            n.attribute.remove(a)
    n.attribute.append(helper.make_attribute(name, value))
    line = _refusal(m, tmp_path / "a.onnx")
    assert "op #1 QLinearConv" in line and why in line, line


def test_quantization_parameters(tmp_path: Path) -> None:
    m = ties()
    _init(m, "xz").CopyFrom(numpy_helper.from_array(np.zeros(0, np.int8), "xz"))
    assert "1 quantization scales but 0 zero points" in _refusal(m, tmp_path / "zp.onnx")
    m = ties()
    _init(m, "xs").CopyFrom(numpy_helper.from_array(np.zeros(0, np.float32), "xs"))
    assert "scale must be positive and finite" in _refusal(m, tmp_path / "s.onnx")


def test_accumulator_overflow(tmp_path: Path) -> None:
    m = ties()
    cb = _init(m, "cb")
    cb.CopyFrom(numpy_helper.from_array(np.full(4, 2**31 - 100, np.int32), "cb"))
    line = _refusal(m, tmp_path / "b.onnx")
    assert "op #1 QLinearConv" in line and "can overflow the int32 accumulator" in line, line


def test_cli_exit_2(tmp_path: Path) -> None:
    m = ties()
    w = _init(m, "w")
    del w.dims[:]
    w.dims.extend([1099511627776])
    path = _save(m, tmp_path / "dims.onnx")
    r = subprocess.run([sys.executable, "-m", "tinycompile.cli", "plan", str(path)],
                       capture_output=True, text=True, timeout=120)  # fmt: skip
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "initializer 'w'" in lines[0], r.stderr
