"""Shared test fixtures: model paths."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "tests" / "models"
WHOLE = ["kws_dscnn", "vww_mobilenet", "ic_resnet8", "ad_autoencoder"]


def whole_models() -> list[Path]:
    return [MODELS / f"{m}.tflite" for m in WHOLE] + [ROOT / "examples" / "digits.tflite"]


def op_models() -> list[Path]:
    return sorted((MODELS / "ops").glob("*.tflite"))


@pytest.fixture
def example_model() -> Path:
    return ROOT / "examples" / "digits.tflite"
