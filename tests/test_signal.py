"""TFLM's signal library (issue 24): the micro_speech audio front end's operators, bit-exact with
TFLM layer by layer on spoken and synthesized audio, on the host and in QEMU, and the
audio -> features -> label pipeline with a speech classifier.

Everything here is made in this repository: the front end is
tests/models/ops/signal_frontend.tflite (tests/modelgen/signal_models.py: TFLM's graph, its
constants computed from TFLM's formulas up to the int16 features); the speech model is
tests/models/signal/speech_int8.tflite (tests/modelgen/signal_speech.py: micro_speech's shapes,
trained briefly on espeak-ng speech); the spoken words are tests/models/signal/espeak_*.wav
(tests/modelgen/signal_audio.py, a voice the classifier was not trained on). Between the two
models, the int16 features become the classifier's int8 input by TFLM's formula
(audio_preprocessor.py's int32 tail, whose CAST and DIV tinycompile does not compile), here in
numpy: the two models are compiled and run separately, each compared with TFLM's interpreter.
"""

from __future__ import annotations

import shutil
import subprocess
import wave
from pathlib import Path

import numpy as np
import pytest
from conftest import MODELS, ROOT

from tinycompile import api
from tinycompile.build.firmware import build_firmware
from tinycompile.build.host import build_host
from tinycompile.codegen import render_model
from tinycompile.errors import CompileError
from tinycompile.frontend import load_model
from tinycompile.ir import Graph, Op, Tensor
from tinycompile.ops import decode, prepare_ops
from tinycompile.paths import FIRMWARE_DIR
from tinycompile.run.emulator import run_emulator
from tinycompile.run.reference import run_tflm

FRONTEND = MODELS / "ops" / "signal_frontend.tflite"
SIGNAL = MODELS / "signal"
SPEECH = SIGNAL / "speech_int8.tflite"
GLUE = ROOT / "tests" / "fixtures" / "signal"
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
    "yes": lambda: wav("espeak_yes.wav"),
    "no": lambda: wav("espeak_no.wav"),
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
    """Spoken words -> front end -> int8 features -> the speech model: both models equal TFLM
    at every layer, and the label is the word spoken (the model is trained)."""
    fe = api.compare(FRONTEND, inputs=[frames(AUDIO[clip]())], layers=True)
    assert fe.ok, str(fe)
    x = to_int8(fe.result.outputs[0].reshape(FRAMES * 40))
    r = api.compare(SPEECH, inputs=[x.reshape(1, FRAMES * 40)], layers=True)
    assert r.ok and r.layers, str(r)
    assert LABELS[int(np.argmax(r.result.outputs[0]))] == clip


@pytest.mark.parametrize("board", ["stm32f746", "samd21"])
def test_pipeline_in_qemu(board: str) -> None:
    """The front end on spoken 'yes' in QEMU (Cortex-M7 and M0+ builds), then the speech
    model on its features: bit-exact with TFLM at every layer, label 'yes'."""
    fe = api.compare(FRONTEND, board=board, inputs=[frames(wav("espeak_yes.wav"))], layers=True)
    assert fe.ok and fe.samples == FRAMES, str(fe)
    x = to_int8(fe.result.outputs[0].reshape(1, FRAMES * 40))
    r = api.compare(SPEECH, board=board, inputs=[x], layers=True)
    assert r.ok, str(r)
    assert LABELS[int(np.argmax(r.result.outputs[0]))] == "yes"


@pytest.mark.parametrize("board", ["stm32f746", "samd21"])
@pytest.mark.parametrize("model", ["signal_rfft256", "signal_frontend_clamp"])
def test_op_models_in_qemu(model: str, board: str) -> None:
    """The RFFT's radix-2 stage and batched frames, and the clamped spectral subtraction, in
    QEMU: 20 random inputs, every layer equal to TFLM."""
    r = api.compare(MODELS / "ops" / f"{model}.tflite", board=board, n=20, layers=True)
    assert r.ok and r.layers, str(r)


def _pipeline_project(tmp: Path, board: str) -> Path:
    """One program: the front end (prefix fe) and the speech model (prefix kws), generated
    for ``board``, with the glue of tests/fixtures/signal (TFLM's micro_speech chaining) as the
    runner's model."""
    proj = tmp / "pipeline"
    for model, prefix in ((FRONTEND, "fe"), (SPEECH, "kws")):
        for rel, text in render_model(api.plan(model, board=board), prefix).items():
            (proj / rel).parent.mkdir(parents=True, exist_ok=True)
            (proj / rel).write_text(text, encoding="ascii")
    for f in ("tc_model.h", "tc_model.c"):
        shutil.copy(GLUE / f, proj / "model" / f)
    shutil.copytree(FIRMWARE_DIR, proj / "runtime")
    return proj


def _tflm_pipeline(audio: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """TFLM's interpreter on both models: the int8 feature rows and the speech model's scores."""
    rows = to_int8(run_tflm(FRONTEND, [frames(audio)]).outputs[0].reshape(FRAMES, 40))
    scores = run_tflm(SPEECH, [rows.reshape(1, FRAMES * 40)]).outputs[0].reshape(4)
    return rows, scores


@pytest.mark.parametrize("board", ["host", "stm32f746", "samd21"])
def test_one_firmware_audio_to_label(board: str, tmp_path: Path) -> None:
    """The whole pipeline in one program (host, and QEMU on the Cortex-M7 and M0+ builds):
    49 frames of spoken words in, every frame's int8 features and the final scores out,
    equal to TFLM's interpreter running both models; the label is the word spoken."""
    proj = _pipeline_project(tmp_path, board)
    for clip in ("yes", "no"):
        audio = AUDIO[clip]()
        x = frames(audio)
        data = np.uint32(FRAMES).tobytes() + x.astype("<i2").tobytes()
        if board == "host":
            exe = build_host(proj)
            (proj / "tc_in.bin").write_bytes(data)
            r = subprocess.run([str(exe)], cwd=proj, capture_output=True, timeout=120)
            assert r.returncode == 0, r.stderr
            out = (proj / "tc_out.bin").read_bytes()
        else:
            fw = build_firmware(proj, board, variant="emulator", profile=False)
            (tmp_path / "tc_in.bin").write_bytes(data)
            out = run_emulator(fw, tmp_path, timeout_s=300).output
        y = np.frombuffer(out, np.int8).reshape(FRAMES, 44)
        rows, scores = _tflm_pipeline(audio)
        assert np.array_equal(y[:, :40], rows)
        assert np.array_equal(y[-1, 40:], scores) and (y[:-1, 40:] == -128).all()
        assert LABELS[int(np.argmax(y[-1, 40:]))] == clip


def _rfft_graph(length: int, dtype_code: int = 7) -> Graph:
    ts = [Tensor(0, "x", (480,), "int16"), Tensor(1, "y", (2 * (length // 2 + 1),), "int16")]
    op = Op(0, "CUSTOM(SignalRfft)", [0], [1], options={"T": dtype_code, "fft_length": length})
    return Graph("rfft", ts, [op], [0], [1])


@pytest.mark.parametrize(
    ("length", "code", "msg"),
    [
        (480, 7, "fft_length 480 is not a power of 2 in [4, 65536]"),
        (512, 2, "only the int16 RFFT is supported (not int32 or float32)"),
        (256, 7, "frames of 480 into 258 values do not fit fft_length 256"),
    ],
)
def test_rfft_refusals(length: int, code: int, msg: str) -> None:
    with pytest.raises(CompileError) as ei:
        api.plan(_rfft_graph(length, code))
    assert msg in str(ei.value) and "CUSTOM(SignalRfft)" in str(ei.value)


def test_options_are_read_from_the_flexbuffer() -> None:
    g = load_model(FRONTEND)
    ss = next(op for op in g.ops if op.kind == "CUSTOM(SignalFilterBankSpectralSubtraction)")
    assert ss.options["smoothing"] == 409 and ss.options["clamping"] is False
    p = api.plan(FRONTEND)
    assert p.state_bytes >= 160  # the noise estimate: 40 uint32 of state


def test_paths_exist() -> None:
    assert all(Path(p).exists() for p in (FRONTEND, SPEECH))


def _window_graph(options: dict) -> Graph:
    ts = [
        Tensor(0, "x", (1, 480), "int16"),
        Tensor(1, "w", (480,), "int16", data=np.ones(480, np.int16)),
        Tensor(2, "y", (1, 480), "int16"),
    ]
    return Graph("w", ts, [Op(0, "CUSTOM(SignalWindow)", [0, 1], [2], options=options)], [0], [2])


def _fb_graph(const_weights: bool) -> Graph:
    k = np.array([0, 1, 2], np.int16)
    ts = [
        Tensor(0, "e", (8,), "uint32"),
        Tensor(1, "w", (4,), "int16", data=np.ones(4, np.int16) if const_weights else None),
        Tensor(2, "u", (4,), "int16", data=np.ones(4, np.int16)),
        Tensor(3, "f", (3,), "int16", data=k),
        Tensor(4, "s", (3,), "int16", data=k),
        Tensor(5, "n", (3,), "int16", data=np.array([1, 1, 9], np.int16)),
        Tensor(6, "o", (2,), "uint64"),
    ]
    op = Op(0, "CUSTOM(SignalFilterBank)", [0, 1, 2, 3, 4, 5], [6], options={"num_channels": 2})
    return Graph("fb", ts, [op], [0, 1] if not const_weights else [0], [6])


def test_filter_bank_refuses_bands_outside_its_tables() -> None:
    """(uint32 / uint64 graph inputs and outputs are refused first: the op is prepared alone.)"""
    g = _fb_graph(True)
    decode(g)
    _, found = prepare_ops(g)
    assert "channel band 2 reaches outside the energies or the weights" in str(found[0])
    g = _fb_graph(False)
    decode(g)
    _, found = prepare_ops(g)
    assert "(weights or band tables) must be a constant" in str(found[0])


@pytest.mark.parametrize(
    ("g", "msg"),
    [
        (_window_graph({"shift": 40}), "shift 40 is outside [0, 31]"),
        (_window_graph({}), "custom option 'shift' is missing"),
    ],
    ids=["shift", "missing"],
)
def test_signal_refusals(g: Graph, msg: str) -> None:
    found = api.check(g)
    assert found and msg in str(found[0]), [str(e) for e in found]


def test_malformed_custom_options_are_refused(tmp_path: Path) -> None:
    from tests.modelgen.tflite_writer import Node, T, write

    ts = [T("x", (4,), "int16"), T("y", (4,), "int16"), T("s", (), "int32")]
    node = Node("CUSTOM:SignalFftAutoScale", [0], [1, 2], custom_options=b"\x07\xff\xff")
    (tmp_path / "bad.tflite").write_bytes(write(ts, [node], [0], [1]))
    with pytest.raises(CompileError, match="malformed custom options"):
        load_model(tmp_path / "bad.tflite")
