"""report.html and the memory timeline (tinycompile/timeline.py): written by every build, true to
the plan and the linked sizes, escaped, and rendered by a real browser.

The expected picture is computed here from the plan's buffers (which bytes each occupies at
each step, by the definitions of a buffer growing upwards or downwards), not asked of the
module under test; the page is parsed with the standard library's HTML parser and rendered by
headless Chromium (installed by `make test`), whose screenshot must show the timeline's colours.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from conftest import MODELS, ROOT
from PIL import Image
from test_hostile_names import hostile_model

from tinycompile import api
from tinycompile.cli import main

MODEL = ROOT / "examples" / "digits.tflite"
MOBILENET = ROOT / "tests" / "models" / "vww_mobilenet.tflite"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


class _Page(HTMLParser):
    """The elements the checks read: buffer rectangles, the two lines, table rows, scripts."""

    def __init__(self) -> None:
        super().__init__()
        self.rects: list[dict[str, str]] = []
        self.lines: dict[str, dict[str, str]] = {}
        self.svg: dict[str, str] = {}
        self.rows: dict[str, list[list[str]]] = {}
        self.tags: set[str] = set()
        self._table = ""
        self._row: list[str] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        self.tags.add(tag)
        cls = a.get("class", "").split()
        if tag == "svg":
            self.svg = a
        elif tag == "rect" and "buf" in cls:
            self.rects.append(a)
        elif tag == "line" and cls and cls[0] in ("arena", "bound"):
            self.lines[cls[0]] = a
        elif tag == "table":
            self._table = a.get("id", "")
            self.rows[self._table] = []
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._row is not None and self._cell is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.rows[self._table].append(self._row)
            self._row = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def _expected_rects(p) -> int:
    """Rectangles the timeline must draw: per buffer, the runs of steps over which the bytes it
    occupies stay the same (upwards: [offset, offset + size); downwards: the top size bytes)."""
    n = 0
    for b in p.buffers:
        prev = None
        for s in range(b.first, b.last + 1):
            size = b.size_at(s)
            span = (
                (b.offset + b.nbytes - size, b.offset + b.nbytes)
                if b.down
                else (b.offset, b.offset + size)
            )
            n += span != prev
            prev = span
    return n


@pytest.fixture(scope="module")
def board_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report") / "digits-stm32f746"
    assert main(["build", str(MODEL), "--board", "stm32f746", "-o", str(out)]) == 0
    return out


def test_build_writes_report_html(board_build: Path) -> None:
    """Beside report.json: the timeline (one rectangle per buffer run, the arena and bound lines
    at their byte heights), the per-layer table and the linked size report, all agreeing with
    report.json."""
    rep = json.loads((board_build / "report.json").read_text())
    page = _parse(board_build / "report.html")
    plan = rep["plan"]
    p = api.plan(MODEL)
    assert len(page.rects) == _expected_rects(p) > 0
    assert int(page.svg["data-arena"]) == plan["peak_arena_bytes"] == p.arena_bytes
    assert int(page.svg["data-bound"]) == plan["peak_live_bytes"]
    arena_y, bound_y = (float(page.lines[k]["y1"]) for k in ("arena", "bound"))
    assert arena_y <= bound_y  # the bound is never above the placed arena
    rows = page.rows["layers"][1:]
    assert [(int(r[0]), r[2]) for r in rows] == [(la["step"], la["op"]) for la in plan["layers"]]
    assert [int(r[4].replace(",", "")) for r in rows] == [la["macs"] for la in plan["layers"]]
    size = {r[0].strip(): r[1] for r in page.rows["size"][1:]}
    assert size["flash used"].split(" of ")[0].replace(",", "") == str(rep["size"]["flash_used"])
    assert size["arena"].replace(",", "") == str(rep["size"]["arena"])
    parts = rep["size"]["code_parts"]  # the code line's breakdown, each part its own row
    assert parts and sum(parts.values()) == rep["size"]["code"]
    assert {k: int(size[k].replace(",", "")) for k in parts} == parts
    # every rectangle lies inside the plot: offsets between 0 and the arena
    top = min(float(r["y"]) for r in page.rects)
    assert top >= arena_y - 0.01
    assert "script" not in page.tags


def test_timeline_shows_a_buffer_growing_downwards(tmp_path: Path) -> None:
    """MobileNetV1's expanding pointwise layer runs in place in a buffer growing downwards: its
    rectangles keep their top while they grow (plan --svg writes the standalone picture)."""
    svg = tmp_path / "mn.svg"
    assert main(["plan", str(MOBILENET), "--svg", str(svg)]) == 0
    page = _parse(svg)
    p = api.plan(MOBILENET)
    grown = [b for b in p.buffers if b.down]
    assert grown and len(page.rects) == _expected_rects(p)
    shared = [r for r in page.rects if "inplace" in r["class"].split()]
    tops = {float(r["y"]) for r in shared}
    heights = sorted(float(r["height"]) for r in shared)
    assert heights[0] < heights[-1] and len(tops) < len(shared)  # grown under a fixed top


def test_timeline_marks_the_row_windows_of_streamed_layers(tmp_path: Path) -> None:
    """ResNet-8 streamed (``--stream min``): one block of row windows at the streamed step,
    named by the ops it holds."""
    svg = tmp_path / "r8.svg"
    assert (
        main(["plan", str(MODELS / "ic_resnet8.tflite"), "--stream", "min", "--svg", str(svg)]) == 0
    )
    page = _parse(svg)
    windows = [r for r in page.rects if "rows" in r["class"].split()]
    assert len(windows) == 1, windows
    assert "<title>row windows of the streamed ops #0 #1 #2" in svg.read_text(encoding="utf-8")


def test_hostile_names_are_escaped(tmp_path: Path) -> None:
    """Tensor names with markup reach the page (tooltips) only as text."""
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(hostile_model(MODEL.read_bytes(), extra=[b"</title><script>x()</script>"]))
    out = tmp_path / "host"
    assert main(["build", str(bad), "--board", "host", "-o", str(out)]) == 0
    text = (out / "report.html").read_text(encoding="utf-8")
    assert "<script" not in text and "&lt;script&gt;" in text
    page = _parse(out / "report.html")
    assert "script" not in page.tags and page.rects


def test_report_renders_in_a_browser(board_build: Path, tmp_path: Path) -> None:
    """Headless Chromium renders report.html offline; the screenshot shows the tensors' and the
    in-place buffers' colours (the timeline was drawn, not just written)."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    assert chromium, "Chromium is needed (make test installs it: apt-get install chromium)"
    shot = tmp_path / "report.png"
    subprocess.run(
        [
            chromium,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={tmp_path / 'profile'}",
            f"--screenshot={shot}",
            "--window-size=1000,900",
            (board_build / "report.html").resolve().as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    colours = {c for _, c in Image.open(shot).convert("RGB").getcolors(1 << 20) or []}
    assert (0x7A, 0xA6, 0xD8) in colours  # tensor blocks
    assert (0xE3, 0xA8, 0x57) in colours  # shared (alias / in place) blocks


def test_timeline_draws_the_boards_sram_limit_and_op_names(tmp_path: Path) -> None:
    """Issue 23: the board's SRAM left for the arena (its SRAM less everything else the linked
    build holds: the size report's own figures) is drawn as a line when it is within 3x the
    arena (ResNet-8 on the 32 KB SAMD21), else named off the scale (digits on the 320 KB F746);
    every step's tick names its op."""
    import re

    for model, board, drawn in (
        (MODELS / "ic_resnet8.tflite", "samd21", True),
        (MODEL, "stm32f746", False),
    ):
        p = api.plan(model, board=board)
        res = api.build_board(p, board, tmp_path / board)
        size = json.loads((res.project / "report.json").read_text())["size"]
        limit = size["sram_total"] - (size["sram_used"] - size["arena"])
        html = (res.project / "report.html").read_text()
        assert f"SRAM limit {limit:,} B" in html
        assert ('class="limit"' in html) is drawn and ("off the scale" in html) is not drawn
        ticks = re.findall(r'rotate\(-60 [^)]*\)">(\d+) ([A-Z_0-9]+)</text>', html)
        kinds = {la.step: la.kind for la in p.layers}
        assert ticks and all(kinds[int(s)] == k for s, k in ticks)
