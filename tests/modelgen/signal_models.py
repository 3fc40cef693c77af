"""Generate the signal library's test models (TFLM's micro_speech audio front end) into
tests/models/ops/.

Run from the repository root: ``python -m tests.modelgen.signal_models`` (no TensorFlow
needed). TFLM builds its front end (tensorflow/lite/micro/examples/micro_speech/
audio_preprocessor.py) from TensorFlow ops of tflite_micro's signal library, which the
tflite_micro wheel does not ship, so the graph is written directly (``tflite_writer``): the
same CUSTOM operators, flexbuffer options, tensor types and constants (Hann window, filter bank
tables, PCAN gain table: read from TFLM's own audio_preprocessor_int8.tflite, kept in
tests/models/signal/) from 480 int16 samples (30 ms at 16 kHz) to 40 int16 log-mel features.
TFLM's model computes the energies of bins 5..240 only (then zeroes the others with CAST /
STRIDED_SLICE / CONCATENATION); this one computes all 257 (the filter bank reads only 5..240:
the features are the same) so that every value of every layer can be compared with TFLM's. It
ends at the int16 features: TFLM's int32 tail to int8 (CAST, DIV) is not compiled.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import tflite
from flatbuffers import flexbuffers

from .common import MODELS_DIR
from .tflite_writer import Node, T, write

OUT = MODELS_DIR / "ops"
TFLM_FRONTEND = MODELS_DIR / "signal" / "audio_preprocessor_int8.tflite"


def _tflm_constants(path: Path) -> dict[str, np.ndarray]:
    """The constant inputs of TFLM's front end, by the operator and position that reads them."""
    m = tflite.Model.GetRootAsModel(path.read_bytes(), 0)
    sg = m.Subgraphs(0)
    out: dict[str, np.ndarray] = {}
    for i in range(sg.OperatorsLength()):
        op = sg.Operators(i)
        code = m.OperatorCodes(op.OpcodeIndex()).CustomCode()
        if not code:
            continue
        for k, tid in enumerate(op.InputsAsNumpy()):
            t = sg.Tensors(int(tid))
            raw = m.Buffers(t.Buffer()).DataAsNumpy()
            if not isinstance(raw, np.ndarray) or raw.size == 0:
                continue
            out[f"{code.decode()}:{k}"] = np.frombuffer(raw.tobytes(), np.int16).copy()
    return out


def _opts(**kw: object) -> bytes:
    return bytes(flexbuffers.Dumps(kw))


def frontend(
    *,
    clamping: bool = False,
    smoothing: tuple[int, int] = (409, 983),
    snr_shift: int = 6,
    log: tuple[int, int] = (3, 64),
) -> bytes:
    """TFLM's micro_speech front end (FeatureParams defaults) up to the int16 log features;
    the keywords vary the spectral subtraction, PCAN and log options."""
    c = _tflm_constants(TFLM_FRONTEND)
    ss, s_alt = smoothing
    ts = [
        T("audio", (1, 480), "int16"),  # 0
        T("hann_window", (480,), "int16", data=c["SignalWindow:1"]),  # 1
        T("windowed", (1, 480), "int16"),  # 2
        T("flat_shape", (1,), "int32", data=np.array([480], np.int32)),  # 3
        T("windowed_flat", (480,), "int16"),  # 4
        T("scaled", (480,), "int16"),  # 5
        T("scale_shift", (), "int32"),  # 6
        T("spectrum", (514,), "int16"),  # 7
        T("energy", (257,), "uint32"),  # 8
        T("fb_weights", (316,), "int16", data=c["SignalFilterBank:1"]),  # 9
        T("fb_unweights", (316,), "int16", data=c["SignalFilterBank:2"]),  # 10
        T("fb_freq_starts", (41,), "int16", data=c["SignalFilterBank:3"]),  # 11
        T("fb_weight_starts", (41,), "int16", data=c["SignalFilterBank:4"]),  # 12
        T("fb_widths", (41,), "int16", data=c["SignalFilterBank:5"]),  # 13
        T("filterbank", (40,), "uint64"),  # 14
        T("fb_sqrt", (40,), "uint32"),  # 15
        T("denoised", (40,), "uint32"),  # 16
        T("noise_estimate", (40,), "uint32"),  # 17
        T("pcan_gain_lut", (125,), "int16", data=c["SignalPCAN:2"]),  # 18
        T("agc", (40,), "uint32"),  # 19
        T("features", (40,), "int16"),  # 20
    ]
    bits = 14
    nodes = [
        Node("CUSTOM:SignalWindow", [0, 1], [2], custom_options=_opts(shift=12)),
        Node("RESHAPE", [2, 3], [4]),
        Node("CUSTOM:SignalFftAutoScale", [4], [5, 6], custom_options=_opts()),
        Node("CUSTOM:SignalRfft", [5], [7], custom_options=_opts(T=7, fft_length=512)),
        # every bin: TFLM leaves bins outside [start, end) unwritten (its arena's leftovers,
        # which a comparison cannot match); the filter bank reads only bins 5..240 anyway
        Node("CUSTOM:SignalEnergy", [7], [8], custom_options=_opts(end_index=257, start_index=0)),
        Node(
            "CUSTOM:SignalFilterBank",
            [8, 9, 10, 11, 12, 13],
            [14],
            custom_options=_opts(num_channels=40),
        ),  # fmt: skip
        Node("CUSTOM:SignalFilterBankSquareRoot", [14, 6], [15], custom_options=_opts()),
        Node(
            "CUSTOM:SignalFilterBankSpectralSubtraction",
            [15],
            [16, 17],
            custom_options=_opts(
                alternate_one_minus_smoothing=(1 << bits) - s_alt,
                alternate_smoothing=s_alt,
                clamping=clamping,
                min_signal_remaining=819,
                num_channels=40,
                one_minus_smoothing=(1 << bits) - ss,
                smoothing=ss,
                smoothing_bits=10,
                spectral_subtraction_bits=bits,
            ),
        ),
        Node("CUSTOM:SignalPCAN", [16, 17, 18], [19], custom_options=_opts(snr_shift=snr_shift)),
        Node(
            "CUSTOM:SignalFilterBankLog",
            [19],
            [20],
            custom_options=_opts(input_correction_bits=log[0], output_scale=log[1]),
        ),
    ]
    return write(ts, nodes, [0], [20])


def window_rfft(
    frames: int, frame: int, fft_length: int, shift: int = 12, gain: float = 1.0
) -> bytes:
    """A batch of frames windowed (a raised-cosine window times ``gain``, ``shift`` bits: a gain
    above 1 saturates loud samples) then transformed by the int16 RFFT: the FFT's radix-4 and
    radix-2 stages, batching and zero padding."""
    k = np.arange(frame)
    w = (0.54 - 0.46 * np.cos(2 * np.pi * k / max(frame - 1, 1))) * gain * (1 << shift)
    w = np.clip(np.round(w), -32768, 32767)
    ts = [
        T("frames", (frames, frame), "int16"),
        T("window", (frame,), "int16", data=w.astype(np.int16)),
        T("windowed", (frames, frame), "int16"),
        T("spectrum", (frames, fft_length + 2), "int16"),
    ]
    nodes = [
        Node("CUSTOM:SignalWindow", [0, 1], [2], custom_options=_opts(shift=shift)),
        Node("CUSTOM:SignalRfft", [2], [3], custom_options=_opts(T=7, fft_length=fft_length)),
    ]
    return write(ts, nodes, [0], [3])


def build() -> dict[str, bytes]:
    return {
        # complex FFTs of 128 (4, 4, 4, 2), 8 (4, 2), 4 (4) and 2 (2); batches of frames (no
        # "16" in a name: tests/test_ops_int16.py takes those for 16x8 models)
        "signal_rfft256": window_rfft(2, 200, 256, shift=14),
        "signal_rfft_gain": window_rfft(3, 16, 16, gain=1.8),
        "signal_rfft8": window_rfft(1, 6, 8, shift=14),
        "signal_rfft4": window_rfft(2, 4, 4),
        "signal_frontend": frontend(),
        # clamped noise estimate, faster smoothing, other PCAN and log scalings
        "signal_frontend_clamp": frontend(
            clamping=True, smoothing=(2048, 4096), snr_shift=5, log=(2, 100)
        ),
    }


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, data in build().items():
        (OUT / f"{name}.tflite").write_bytes(data)
        print("wrote", OUT / f"{name}.tflite")


if __name__ == "__main__":
    main()
