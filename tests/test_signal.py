"""TFLM's signal library (issue 24): the micro_speech audio front end's operators, bit-exact with
TFLM layer by layer on recorded and synthesized audio, on the host and in QEMU, and the
audio -> features -> label pipeline with TFLM's speech model.

The front end is tests/models/ops/signal_frontend.tflite (tests/modelgen/signal_models.py:
TFLM's graph and constants up to the int16 features). The speech model is TFLM's own
micro_speech_quantized.tflite (tests/models/signal/); between the two, the int16 features
become the classifier's int8 input by TFLM's formula (audio_preprocessor.py's int32 tail, whose
CAST and DIV tinycompile does not compile), here in numpy: the two models are compiled and run
separately, each compared with TFLM.
"""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np
import pytest
from conftest import MODELS

from tinycompile import api
from tinycompile.errors import CompileError
from tinycompile.frontend import load_model
from tinycompile.ir import Graph, Op, Tensor
from tinycompile.ops import load_all

FRONTEND = MODELS / "ops" / "signal_frontend.tflite"
SIGNAL = MODELS / "signal"
SPEECH = SIGNAL / "micro_speech_quantized.tflite"
RATE, WINDOW, STRIDE, FRAMES = 16000, 480, 320, 49
LABELS = ("silence", "unknown", "yes", "no")


def wav(name: str) -> np.ndarray:
    with wave.open(str(SIGNAL / name)) as w:
        assert w.getframerate() == RATE and w.getsampwidth() == 2 and w.getnchannels() == 1
        return np.frombuffer(w.readframes(w.getnframes()), "<i2").astype(np.int16)


def synth(kind: str, seed: int = 0) -> np.ndarray:
    """One second of int16 audio at 16 kHz: a tone, a chirp, or noise with a tone burst."""
    t = np.arange(RATE) / RATE
    rng = np.random.default_rng(seed)
    if kind == "tone":
        x = 0.3 * np.sin(2 * np.pi * 440 * t) + 0.1 * np.sin(2 * np.pi * 2500 * t)
    elif kind == "chirp":
        x = 0.5 * np.sin(2 * np.pi * (100 * t + 3000 * t * t))
    else:
        x = 0.05 * rng.standard_normal(RATE)
        x[6000:9000] += 0.4 * np.sin(2 * np.pi * 1000 * t[6000:9000])
    return np.clip(np.round(x * 32767), -32768, 32767).astype(np.int16)


def frames(audio: np.ndarray) -> np.ndarray:
    """TFLM's micro_speech framing: 49 windows of 30 ms every 20 ms, one inference each."""
    return np.stack([audio[k * STRIDE : k * STRIDE + WINDOW] for k in range(FRAMES)])


def to_int8(features: np.ndarray) -> np.ndarray:
    """audio_preprocessor.py's int16 -> int8 feature scaling (its int32 tail)."""
    v = (features.astype(np.int32) * 256 + 333) // 666 - 128
    return np.clip(v, -128, 127).astype(np.int8)


AUDIO = {
    "yes": lambda: wav("yes_1000ms.wav"),
    "no": lambda: wav("no_1000ms.wav"),
    "tone": lambda: synth("tone"),
    "chirp": lambda: synth("chirp"),
    "noise": lambda: synth("noise"),
}


@pytest.mark.parametrize("clip", AUDIO)
def test_frontend_on_audio_matches_tflm(clip: str) -> None:
    """49 frames in order through one instance (the noise estimate carries over, as in TFLM):
    every layer of every frame equal."""
    r = api.compare(FRONTEND, inputs=[frames(AUDIO[clip]())], layers=True)
    assert r.ok and r.layers and r.samples == FRAMES, str(r)
    feats = r.result.outputs[0].reshape(FRAMES, 40)
    assert feats.max() > 100 and len(np.unique(feats)) > 50  # alive, not saturated


@pytest.mark.parametrize("clip", ["yes", "no"])
def test_audio_to_label_pipeline(clip: str) -> None:
    """Recorded speech -> front end -> int8 features -> TFLM's speech model: both models equal
    TFLM at every layer, and the label is the word spoken."""
    fe = api.compare(FRONTEND, inputs=[frames(AUDIO[clip]())], layers=True)
    assert fe.ok, str(fe)
    x = to_int8(fe.result.outputs[0].reshape(FRAMES * 40))
    r = api.compare(SPEECH, inputs=[x.reshape(1, FRAMES * 40)], layers=True)
    assert r.ok and r.layers, str(r)
    assert LABELS[int(np.argmax(r.result.outputs[0]))] == clip


@pytest.mark.parametrize("board", ["stm32f746", "samd21"])
def test_pipeline_in_qemu(board: str) -> None:
    """The front end on recorded speech in QEMU (Cortex-M7 and M0+ builds), then the speech
    model on its features: bit-exact with TFLM at every layer, label 'yes'."""
    fe = api.compare(FRONTEND, board=board, inputs=[frames(wav("yes_1000ms.wav"))], layers=True)
    assert fe.ok and fe.samples == FRAMES, str(fe)
    x = to_int8(fe.result.outputs[0].reshape(1, FRAMES * 40))
    r = api.compare(SPEECH, board=board, inputs=[x], layers=True)
    assert r.ok, str(r)
    assert LABELS[int(np.argmax(r.result.outputs[0]))] == "yes"


def _rfft_graph(length: int, dtype_code: int = 7) -> Graph:
    ts = [Tensor(0, "x", (480,), "int16"), Tensor(1, "y", (2 * (length // 2 + 1),), "int16")]
    op = Op(0, "CUSTOM(SignalRfft)", [0], [1], options={"T": dtype_code, "fft_length": length})
    return Graph("rfft", ts, [op], [0], [1])


@pytest.mark.parametrize(
    ("length", "code", "msg"),
    [
        (480, 7, "fft_length 480 is not a power of 2 (>= 4)"),
        (512, 2, "only the int16 RFFT is supported (not int32 or float32)"),
        (256, 7, "frames of 480 into 258 values do not fit fft_length 256"),
    ],
)
def test_rfft_refusals(length: int, code: int, msg: str) -> None:
    with pytest.raises(CompileError) as ei:
        api.plan(_rfft_graph(length, code))
    assert msg in str(ei.value) and "CUSTOM(SignalRfft)" in str(ei.value)


def test_tflm_frontend_model_names_what_is_missing() -> None:
    """TFLM's own audio_preprocessor_int8.tflite loads (uint32/uint64 tensors, custom options)
    and is refused for its int32 tail with the operator's name."""
    g = load_model(SIGNAL / "audio_preprocessor_int8.tflite")
    kinds = {op.kind for op in g.ops}
    assert "CUSTOM(SignalPCAN)" in kinds and g.t(24).dtype == "uint32"
    assert {"CAST", "DIV"} <= kinds and not {"CAST", "DIV"} & set(load_all())
    with pytest.raises(CompileError, match="operator CAST is not supported"):
        api.plan(SIGNAL / "audio_preprocessor_int8.tflite")


def test_options_are_read_from_the_flexbuffer() -> None:
    g = load_model(FRONTEND)
    ss = next(op for op in g.ops if op.kind == "CUSTOM(SignalFilterBankSpectralSubtraction)")
    assert ss.options["smoothing"] == 409 and ss.options["clamping"] is False
    p = api.plan(FRONTEND)
    assert p.state_bytes >= 160  # the noise estimate: 40 uint32 of state


def test_paths_exist() -> None:
    assert all(Path(p).exists() for p in (FRONTEND, SPEECH))
