"""Input care (issue 23): data that runs but is likely not what was meant gets one warning line
each, on stderr, and the run goes on: integer data for a float input, and float data mostly
outside what the input's quantization holds (0-255 pixels for a 1/255 scale)."""

from __future__ import annotations

import numpy as np
from conftest import MODELS, ROOT

from tinycompile.cli import main
from tinycompile.frontend import load_model
from tinycompile.run.inputs import user_inputs

DIGITS = ROOT / "examples" / "digits.tflite"  # int8 input, scale 1/255, zero point -128: [0, 1]


def test_pixels_for_a_unit_scale_input_warn_once() -> None:
    g = load_model(DIGITS)
    rng = np.random.default_rng(0)
    pixels = rng.integers(0, 256, size=(2, 8, 8, 1)).astype(np.float32)
    w = user_inputs(g, [pixels]).warnings
    assert len(w) == 1 and "divide by 255" in w[0] and "[0, 1]" in w[0]
    assert not user_inputs(g, [pixels / 255.0]).warnings  # the same data, scaled: no warning
    assert not user_inputs(g, [(pixels - 128).astype(np.int8)]).warnings  # codes: as meant


def test_integer_data_for_a_float_input_warns() -> None:
    f32 = load_model(MODELS / "ops" / "quant_f32_relu.tflite")  # a float input, quantized inside
    x = np.zeros((1, *f32.t(f32.inputs[0]).shape[1:]), np.int8)
    w = user_inputs(f32, [x]).warnings
    assert len(w) == 1 and "is float and int8 data" in w[0] and "(q - zero_point)" in w[0]
    onnx = load_model(MODELS / "onnx" / "cnn_twin.onnx")  # float interface, int8 inside
    from tinycompile.run import samples

    shape = samples.port(onnx, onnx.inputs[0]).shape
    w = user_inputs(onnx, [np.zeros((1, *shape[1:]), np.int8)]).warnings
    assert len(w) == 1 and "taken as its quantized codes" in w[0]
    assert not user_inputs(onnx, [np.zeros((1, *shape[1:]), np.float32)]).warnings


def test_run_prints_the_warning_and_goes_on(tmp_path, capsys) -> None:
    pixels = np.full((1, 8, 8, 1), 200.0, np.float32)
    np.save(tmp_path / "x.npy", pixels)
    code = main(["run", str(DIGITS), "--board", "host", "--inputs", str(tmp_path / "x.npy")])
    err = capsys.readouterr().err
    assert code == 0 and err.count("warning: ") == 1 and "100% of the float data" in err
