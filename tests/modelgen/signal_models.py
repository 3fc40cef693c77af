"""Generate the signal library's test models (a micro_speech-style audio front end) into
tests/models/ops/.

Run from the repository root: ``python -m tests.modelgen.signal_models`` (no TensorFlow
needed). TFLM builds its front end (tensorflow/lite/micro/examples/micro_speech/
audio_preprocessor.py) from TensorFlow ops of tflite_micro's signal library, which the
tflite_micro wheel does not ship, so the graph is written directly (``tflite_writer``): the
same CUSTOM operators, flexbuffer options and tensor types, from 480 int16 samples (30 ms at
16 kHz) to 40 int16 log-mel features. The constants (Hann window, filter bank tables, PCAN gain
table) are computed here from the formulas of TFLM's Python ops (window_op.py,
filter_bank_ops.py, pcan_op.py with its C helpers FreqToMel and WideDynamicFuncLut, in float32
as they are) with micro_speech's FeatureParams: 16 kHz, 30 ms window, 12 window bits, 40
channels over 125-7500 Hz, 12 weight bits, alignment and block size 4, PCAN strength 0.95,
offset 80, 21 gain bits. (Checked once against TFLM's audio_preprocessor_int8.tflite: every
table equal; that file is not part of this repository.)
TFLM's model computes the energies of bins 5..240 only (then zeroes the others with CAST /
STRIDED_SLICE / CONCATENATION); this one computes all 257 (the filter bank reads only 5..240:
the features are the same) so that every value of every layer can be compared with TFLM's. It
ends at the int16 features: TFLM's int32 tail to int8 (CAST, DIV) is not compiled.
"""

from __future__ import annotations

import numpy as np
from flatbuffers import flexbuffers

from .common import MODELS_DIR
from .tflite_writer import Node, T, write

OUT = MODELS_DIR / "ops"
F = np.float32
RATE, WINDOW_MS, CHANNELS, LOW_HZ, HIGH_HZ = 16000, 30, 40, 125.0, 7500.0
WINDOW_BITS, FB_BITS, FB_ALIGNMENT, FB_BLOCK = 12, 12, 4, 4
FFT_LOG2, SS_BITS, SMOOTHING_BITS = 9, 14, 10
PCAN_STRENGTH, PCAN_OFFSET, PCAN_GAIN_BITS, PCAN_SNR_BITS = 0.95, 80.0, 21, 12


def freq_to_mel(freq: float) -> np.float32:
    """TFLM's FreqToMel, in float32 as its C helper: 1127 * log1p(f / 700)."""
    return F(1127.0) * np.log1p(F(freq) / F(700.0))


def hann(n: int, shift: int) -> np.ndarray:
    """window_op.hann_window_weights: 0.5 - 0.5 cos(2 pi (k + 0.5) / n), ``shift`` bits."""
    k = np.arange(n)
    w = 0.5 - 0.5 * np.cos(np.pi * 2 / n * (k + 0.5))
    return np.round(w * (1 << shift)).astype(np.int16)


def filter_bank(
    spectrum_size: int,
    rate: int,
    num_channels: int,
    lo: float,
    hi: float,
    alignment: int = FB_ALIGNMENT,
    block: int = FB_BLOCK,
    bits: int = FB_BITS,
) -> tuple[int, int, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """filter_bank_ops._init_filter_bank_weights: (start bin, end bin, weights, unweights,
    channel frequency starts, weight starts, widths) of ``num_channels`` + 1 mel bands (HTK
    style: DC excluded), bands padded to ``block`` weights from an ``alignment``-byte start."""
    index_alignment = 1 if alignment < 2 else alignment // 2
    n = num_channels + 1
    freq_starts = np.zeros(n, np.int16)
    weight_starts = np.zeros(n, np.int16)
    widths = np.zeros(n, np.int16)
    act_starts = np.zeros(n, np.int64)
    act_widths = np.zeros(n, np.int64)
    mel_lo, mel_hi = freq_to_mel(lo), freq_to_mel(hi)
    spacing = (mel_hi - mel_lo) / F(n)
    centers = mel_lo + spacing * np.arange(1, n + 1, dtype=F)
    hz_per_bin = (rate / 2) / (spectrum_size - 1)
    start = round(1 + lo / hz_per_bin)
    f0, w0, zeros = start, 0, False
    for ch in range(n):
        f = f0
        while freq_to_mel(f * hz_per_bin) <= centers[ch]:
            f += 1
        width = f - f0
        act_starts[ch], act_widths[ch] = f0, width
        if width == 0:
            freq_starts[ch], weight_starts[ch], widths[ch] = 0, 0, block
            if not zeros:
                zeros = True
                weight_starts[:ch] += block
                w0 += block
        else:
            aligned = f0 // index_alignment * index_alignment
            padded = ((f0 - aligned + width - 1) // block + 1) * block
            freq_starts[ch], weight_starts[ch], widths[ch] = aligned, w0, padded
            w0 += padded
        f0 = f
    weights = np.zeros(w0, np.int16)
    unweights = np.zeros(w0, np.int16)
    end = 0
    for ch in range(n):
        f = int(act_starts[ch])
        lo_mel = mel_lo if ch == 0 else centers[ch - 1]
        for j in range(int(act_widths[ch])):
            num = F(centers[ch] - freq_to_mel(f * hz_per_bin))
            den = F(centers[ch] - lo_mel)
            w = F(num / den)
            i = weight_starts[ch] + (act_starts[ch] - freq_starts[ch]) + j
            weights[i] = int(w * F(1 << bits))
            unweights[i] = int((F(1) - w) * F(1 << bits))
            f += 1
        end = max(end, f)
    return start, end, weights, unweights, freq_starts, weight_starts, widths


def _gain(strength: float, offset: float, gain_bits: int, input_bits: int, x: int) -> int:
    """PcanGainLookupFunction: 2**gain_bits * (x / 2**input_bits + offset) ** -strength."""
    xf = F(x) / F(1 << input_bits)
    g = F(1 << gain_bits) * np.power(xf + F(offset), F(-strength))
    if g > 32767:
        return 32767
    return int(np.int16(F(g + F(0.5))))


def pcan_lut(strength: float, offset: float, input_bits: int, gain_bits: int) -> np.ndarray:
    """WideDynamicFuncLut: the gain at 0 and 1, then per octave [2**(i-1), 2**i) the gain at its
    start and a quadratic's two coefficients through its middle and end (125 int16)."""
    lut = [
        _gain(strength, offset, gain_bits, input_bits, 0),
        _gain(strength, offset, gain_bits, input_bits, 1),
    ]
    for interval in range(2, 33):
        x0 = 1 << (interval - 1)
        x1 = x0 + (x0 >> 1)
        x2 = x0 + (x0 - 1) if interval == 32 else 2 * x0
        y0, y1, y2 = (_gain(strength, offset, gain_bits, input_bits, x) for x in (x0, x1, x2))
        a1 = 4 * (y1 - y0) - (y2 - y0)
        a2 = (y2 - y0) - a1
        lut += [y0, a1, a2, 0]
    return np.array(lut[:125], np.int16)


def _opts(**kw: object) -> bytes:
    return bytes(flexbuffers.Dumps(kw))


def frontend(
    *,
    clamping: bool = False,
    smoothing: tuple[int, int] = (int(0.025 * (1 << SS_BITS)), int(0.06 * (1 << SS_BITS))),
    snr_shift: int = 6,
    log: tuple[int, int] = (3, 64),
) -> bytes:
    """TFLM's micro_speech front end (FeatureParams defaults) up to the int16 log features;
    the keywords vary the spectral subtraction, PCAN and log options."""
    _, _, w, u, f_starts, w_starts, widths = filter_bank(257, RATE, CHANNELS, LOW_HZ, HIGH_HZ)
    correction = FFT_LOG2 - FB_BITS // 2
    lut = pcan_lut(PCAN_STRENGTH, PCAN_OFFSET, SMOOTHING_BITS - correction, PCAN_GAIN_BITS)
    ss, s_alt = smoothing
    ts = [
        T("audio", (1, 480), "int16"),  # 0
        T("hann_window", (480,), "int16", data=hann(RATE * WINDOW_MS // 1000, WINDOW_BITS)),  # 1
        T("windowed", (1, 480), "int16"),  # 2
        T("flat_shape", (1,), "int32", data=np.array([480], np.int32)),  # 3
        T("windowed_flat", (480,), "int16"),  # 4
        T("scaled", (480,), "int16"),  # 5
        T("scale_shift", (), "int32"),  # 6
        T("spectrum", (514,), "int16"),  # 7
        T("energy", (257,), "uint32"),  # 8
        T("fb_weights", (316,), "int16", data=w),  # 9
        T("fb_unweights", (316,), "int16", data=u),  # 10
        T("fb_freq_starts", (41,), "int16", data=f_starts),  # 11
        T("fb_weight_starts", (41,), "int16", data=w_starts),  # 12
        T("fb_widths", (41,), "int16", data=widths),  # 13
        T("filterbank", (40,), "uint64"),  # 14
        T("fb_sqrt", (40,), "uint32"),  # 15
        T("denoised", (40,), "uint32"),  # 16
        T("noise_estimate", (40,), "uint32"),  # 17
        T("pcan_gain_lut", (125,), "int16", data=lut),  # 18
        T("agc", (40,), "uint32"),  # 19
        T("features", (40,), "int16"),  # 20
    ]
    bits = SS_BITS
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
                min_signal_remaining=int(0.05 * (1 << bits)),
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
