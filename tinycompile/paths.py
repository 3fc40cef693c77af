"""Where the repository's data folders are: the one place that knows the on-disk layout.

templates/ (Jinja templates), firmware/ (the C runtime copied into projects), boards/ (built-in
board files) and examples/ (the bundled model). They are read from the source checkout today;
switching to package data (importlib.resources) means changing only this file.
"""

from __future__ import annotations

from pathlib import Path

REPO: Path = Path(__file__).resolve().parent.parent
TEMPLATES_DIR: Path = REPO / "templates"
BOARD_TEMPLATES_DIR: Path = TEMPLATES_DIR / "board"
FIRMWARE_DIR: Path = REPO / "firmware"
BOARDS_DIR: Path = REPO / "boards"
EXAMPLES_DIR: Path = REPO / "examples"
EXAMPLE_MODEL: Path = EXAMPLES_DIR / "digits.tflite"
