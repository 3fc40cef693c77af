"""ONNX models the compiler refuses, each with one line naming the node and its op type: float
models (exit 2 from the command line), dynamic shapes, opsets out of range, unsupported operators
and attributes, a missing external data file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tinycompile import api
from tinycompile.errors import CompileError

onnx = pytest.importorskip("onnx")
from onnx import helper  # noqa: E402

from tests.onnxgen.handmade import ties  # noqa: E402
from tests.onnxgen.models import cnn  # noqa: E402


def _save(m, path: Path, **kw) -> Path:
    onnx.save(m, path, **kw)
    return path


def _refusal(path: Path) -> str:
    with pytest.raises(CompileError) as ei:
        api.plan(path)
    line = str(ei.value)
    assert "\n" not in line and "Traceback" not in line
    return line


def test_float_model_cli_exit_2(tmp_path: Path) -> None:
    path = _save(cnn()[0], tmp_path / "float.onnx")
    r = subprocess.run([sys.executable, "-m", "tinycompile.cli", "plan", str(path)],
                       capture_output=True, text=True, timeout=120)  # fmt: skip
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "float (unquantized) model" in lines[0], r.stderr


def test_dynamic_shape(tmp_path: Path) -> None:
    m = ties()
    m.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "N"
    line = _refusal(_save(m, tmp_path / "dyn.onnx"))
    assert "QuantizeLinear" in line and "dynamic shape" in line, line


def test_opset_out_of_range(tmp_path: Path) -> None:
    m = ties()
    m.opset_import[0].version = 99  # newer than the installed onnx defines
    assert "opset 99 is out of the supported range 10.." in _refusal(_save(m, tmp_path / "o.onnx"))


def test_unsupported_op_and_attribute(tmp_path: Path) -> None:
    m = ties()
    m.graph.node[4].op_type = "QLinearWhere"
    m.graph.node[4].name = "mul\nweird\x00name" + "x" * 80
    line = _refusal(_save(m, tmp_path / "op.onnx"))
    assert "op #4 QLinearWhere" in line and "QLinearWhere is not supported" in line, line
    assert "mul?weird?name" in line and "x" * 41 not in line, line
    m = ties()
    m.graph.node[1].attribute.append(helper.make_attribute("auto_pad", "SAME_UPPER"))
    line = _refusal(_save(m, tmp_path / "attr.onnx"))
    assert "QLinearConv" in line and "auto_pad is not supported" in line, line


def test_nonzero_weight_zero_point_is_accepted(tmp_path: Path) -> None:
    """Once refused, now compiled (issue 19): int8 weights with zero point 3 are exact."""
    m = ties()
    for t in m.graph.initializer:
        if t.name == "wz":
            t.CopyFrom(onnx.numpy_helper.from_array(np.full(4, 3, np.int8), "wz"))
    r = api.compare(_save(m, tmp_path / "wz.onnx"), n=8)
    assert r.ok, str(r)


def test_missing_external_data(tmp_path: Path) -> None:
    path = tmp_path / "ext.onnx"
    _save(ties(), path, save_as_external_data=True, all_tensors_to_one_file=True,
          location="weights.bin", size_threshold=0)  # fmt: skip
    assert api.plan(path).graph.ops  # present: loaded
    (tmp_path / "weights.bin").unlink()
    line = _refusal(path)
    assert "external data file 'weights.bin'" in line and "missing" in line, line


def test_dynamic_quantization(tmp_path: Path) -> None:
    m = ties()
    m.graph.node[3].op_type = "MatMulInteger"
    line = _refusal(_save(m, tmp_path / "dyn_q.onnx"))
    assert "op #3 MatMulInteger" in line and "quantize_dynamic" in line, line
