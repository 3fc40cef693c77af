"""The Jinja environment over templates/board/ and writing rendered files only when they
change (so a rebuild leaves unchanged files, and their times, alone)."""

from __future__ import annotations

from pathlib import Path

import jinja2

from ..paths import BOARD_TEMPLATES_DIR


def template_env(folder: Path = BOARD_TEMPLATES_DIR) -> jinja2.Environment:
    """Jinja over templates/board/ (or another folder of templates/): strict about undefined
    names, block whitespace trimmed, no escaping (the outputs are C, make, linker scripts)."""
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(folder)),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def write_if_changed(path: Path, text: str) -> None:
    """Write `text` to `path` (creating folders) unless it already holds exactly that."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
