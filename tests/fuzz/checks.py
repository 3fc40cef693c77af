"""What counts as a failure: the checks on a case's outcome (docs/fuzzing.md, "A case fails").

Each returns what is wrong, or None: a CompileError's message as the CLI prints it, an arena
plan, the generated C sources, and the files rendered from a board file.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

MAX_MESSAGE = 2000
# Text that could end a C comment or string, splice lines, or expand in a Makefile.
DANGEROUS_TEXT = re.compile(r"\*/|/\*|\?\?|[\\\"$`\n\r\x00-\x1f\x7f-\U0010ffff]")


def check_message(e: Exception, path: str) -> str | None:
    """What is wrong with a CompileError as the CLI would print it, or None."""
    line = str(e)
    if not line.strip():
        return "empty error message"
    if "\n" in line or "\r" in line:
        return f"multi-line error message: {line[:300]!r}"
    if len(line) > MAX_MESSAGE:
        return f"error message of {len(line)} characters"
    if path not in line:
        return f"error message does not name the file: {line[:300]!r}"
    return None


def check_plan(p: Any) -> str | None:
    """Arena placement in bounds, and no two buffers live at once sharing bytes."""
    arena = p.arena_bytes
    for tid in [*p.graph.inputs, *p.graph.outputs]:
        if tid not in p.storage:
            return f"graph input/output tensor {tid} has no place in the arena"
    if arena >= 1 << 32:
        return f"arena of {arena} bytes does not fit a 32-bit address space"
    for b in p.buffers:
        if b.nbytes < 0 or b.offset < 0 or b.offset + b.nbytes > arena:
            return f"buffer {b.id} [{b.offset}, +{b.nbytes}) outside arena of {arena}"
    bs = sorted((b for b in p.buffers if b.nbytes > 0), key=lambda b: b.offset)
    for i, a in enumerate(bs):
        for b in bs[i + 1 :]:
            if b.offset >= a.offset + a.nbytes:
                break
            for step in range(max(a.first, b.first), min(a.last, b.last) + 1):
                # a buffer that grows (an expanding in-place op) is smaller before it grows
                a0, a1 = a.span_at(a.offset, step)
                b0, b1 = b.span_at(b.offset, step)
                if a0 < b1 and b0 < a1:
                    return f"buffers {a.id} and {b.id} overlap while both live (step {step})"
    return None


def check_sources(files: dict[str, str]) -> str | None:
    """Generated C: ASCII only, comments balanced, no trigraphs or line splices in text."""
    for rel, text in files.items():
        if not text.isascii():
            return f"{rel}: non-ASCII output"
        if "??" in text:
            return f"{rel}: '??' (trigraph) in output"
        if text.count("/*") != text.count("*/"):
            return f"{rel}: unbalanced comments"
        if re.search(r"\\[ \t]*\n", text):
            return f"{rel}: backslash at line end"
        if "\r" in text or "\x00" in text:
            return f"{rel}: control characters"
    return None


def check_board_output(proj: Path, board: Any, path: str) -> str | None:
    """Board files stay under board/, are ASCII with balanced comments, and carry no text from
    the board file that holds a dangerous character (quote, comment end, $, newline...)."""
    tainted = [
        v
        for v in (board.name, board.description, Path(path).name)
        if isinstance(v, str) and DANGEROUS_TEXT.search(v)
    ]
    for f in sorted(proj.rglob("*")):
        rel = f.relative_to(proj)
        if rel.parts[0] in ("runtime", "model") or f.is_dir():
            continue
        if rel.parts[0] != "board":
            return f"board file written outside board/: {rel}"
        text = f.read_bytes().decode("utf-8", "replace")
        if not text.isascii():
            return f"{rel}: non-ASCII output"
        if f.suffix in (".h", ".ld", ".c", ".S") and text.count("/*") != text.count("*/"):
            return f"{rel}: unbalanced comments"
        if re.search(r"\\[ \t]*\n", text) and f.name != "Makefile":
            return f"{rel}: backslash at line end"
        for v in tainted:
            if v in text:
                return f"{rel}: board text {v[:60]!r} copied verbatim"
    return None
