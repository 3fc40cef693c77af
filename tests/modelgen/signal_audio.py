"""Spoken test words for the audio pipeline, made here with the espeak-ng speech synthesizer.

Run from the repository root: ``python -m tests.modelgen.signal_audio`` (needs the
``espeak-ng`` program and scipy; CI needs neither: the wavs are committed). Each clip is
``espeak-ng -v en-us -s 150 -p 50 --stdout WORD`` (22050 Hz) resampled to 16 kHz (polyphase,
scipy.signal.resample_poly 320/441), scaled to a peak of 0.7 of full scale and centred in
one second of int16 mono audio: tests/models/signal/espeak_yes.wav and espeak_no.wav.
:func:`speak` also makes the speech classifier's training clips (signal_speech.py).
"""

from __future__ import annotations

import io
import subprocess
import wave

import numpy as np

from .common import MODELS_DIR

RATE = 16000
OUT = MODELS_DIR / "signal"
TEST_WORDS = ("yes", "no")


def speak(word: str, voice: str = "en-us", speed: int = 150, pitch: int = 50) -> np.ndarray:
    """``word`` spoken by espeak-ng at 16 kHz, float in [-1, 1], silence trimmed."""
    from scipy.signal import resample_poly

    cmd = ["espeak-ng", "-v", voice, "-s", str(speed), "-p", str(pitch), "--stdout", word]
    data = subprocess.run(cmd, check=True, capture_output=True).stdout
    with wave.open(io.BytesIO(data)) as w:
        assert w.getframerate() == 22050 and w.getsampwidth() == 2
        x = np.frombuffer(w.readframes(w.getnframes()), "<i2").astype(np.float64) / 32768
    x = resample_poly(x, 320, 441)
    loud = np.nonzero(np.abs(x) > 0.02)[0]
    return x[loud[0] : loud[-1] + 1] if loud.size else x


def place(x: np.ndarray, offset: int | None = None, peak: float = 0.7) -> np.ndarray:
    """``x`` scaled to ``peak`` in one second of int16 audio, from ``offset`` (centred if None)."""
    x = x[:RATE] * (peak / max(np.abs(x).max(), 1e-9))
    start = (RATE - x.size) // 2 if offset is None else min(offset, RATE - x.size)
    y = np.zeros(RATE)
    y[start : start + x.size] = x
    return np.clip(np.round(y * 32767), -32768, 32767).astype(np.int16)


def write_wav(path, audio: np.ndarray) -> None:
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(audio.astype("<i2").tobytes())


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for word in TEST_WORDS:
        write_wav(OUT / f"espeak_{word}.wav", place(speak(word)))
        print("wrote", OUT / f"espeak_{word}.wav")


if __name__ == "__main__":
    main()
