"""Board builds and runs: a plan checked against the board, generated and cross-compiled
(build_board), or built for the board's emulator and run in QEMU (run_board)."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..build import FirmwareBuild, build_firmware
from ..errors import DoesNotFit
from ..fit import check_fit, peak_description, raise_if_too_big
from ..outdir import staged
from ..pipeline import Plan
from ..report import build_report, write_json
from ..timeline import report_html
from . import samples
from .emulator import run_emulator
from .inputs import make_inputs
from .ioformat import (
    EXIT_REFUSED,
    RunResult,
    pack_inputs,
    sample_bytes,
    unpack_outputs,
    unpack_refused,
)


@dataclass
class BoardBuild:
    """A firmware build for a board, with its size report."""

    firmware: FirmwareBuild
    project: Path

    def text(self) -> str:
        """The files built (relative to the current folder where possible) and the size report."""
        fw = self.firmware
        files = ", ".join(
            str(f.relative_to(self.project)) for f in (fw.elf, fw.bin, fw.hex) if f is not None
        )
        where = self.project
        if where.is_relative_to(Path.cwd()):
            where = where.relative_to(Path.cwd())
        return f"{where}: {files}\n{fw.size}"

    def as_dict(self) -> dict:
        """JSON-ready: the project, file paths and size report."""
        fw = self.firmware
        return {
            "project": str(self.project),
            "elf": str(fw.elf),
            "bin": str(fw.bin),
            "hex": str(fw.hex),
            "size": fw.size.as_dict(),
        }


def self_test_vector(p: Plan) -> list[np.ndarray]:
    """A start-up test vector for ``build_board``: the first generated input sample."""
    g = p.graph
    xs = make_inputs(g, 1, 0)
    return [samples.sample(g.t(t), x, 0) for t, x in zip(g.inputs, xs, strict=True)]


def build_board(
    p: Plan,
    board: str,
    out_dir: str | Path,
    *,
    emulator: bool = False,
    debug_layers: bool = False,
    profile: bool = True,
    test_inputs: list[np.ndarray] | None = None,
) -> BoardBuild:
    """Generate the project and cross-compile it for ``board`` (or its emulator variant) in a
    temporary folder, moved into place once complete; the linked size decides whether it fits.
    Writes report.json and report.html (tinycompile/timeline.py) beside the firmware.

    ``test_inputs`` (board variant): one sample's input tensors built into the image for its
    start-up inference (``self_test_vector`` makes one); without, the image carries no test vector
    (release images: the validation protocol feeds inputs) and starts up on zero inputs."""
    # Refuse before compiling only when the plan alone certainly exceeds the board.
    verdict = check_fit(p, board)
    raise_if_too_big(verdict, source=p.graph.source or None)
    variant = "emulator" if emulator else "board"
    with staged(p, out_dir) as stage:
        try:
            fw = build_firmware(
                stage.path,
                board,
                variant=variant,
                debug_layers=debug_layers,
                profile=profile,
                test_inputs=None if emulator else test_inputs,
                onnx_variant=p.onnx_variant,
            )
        except DoesNotFit as e:
            raise _with_peak(e, p) from None
        report = build_report(p, verdict.board.name, variant, fw.size.as_dict(), verdict.as_dict())
        write_json(stage.path / "report.json", report)
        html = report_html(p, verdict.board.name, fw.size.as_dict())
        (stage.path / "report.html").write_text(html, encoding="utf-8")
    return BoardBuild(fw.moved(stage.out), stage.out)


def _with_peak(e: DoesNotFit, p: Plan) -> DoesNotFit:
    """The linker's verdict, naming the layers that set the SRAM peak."""
    err = DoesNotFit(
        f"{e.reason}; peak SRAM set by {peak_description(p)}", source=p.graph.source or None
    )
    err.report = getattr(e, "report", None)  # type: ignore[attr-defined]
    return err


def run_board(
    p: Plan,
    project: Path,
    board: str,
    inputs: list[np.ndarray],
    *,
    debug_layers: bool = False,
    timeout_s: float = 600.0,
    portable: bool = False,
) -> RunResult:
    """Build the emulator variant for ``board`` and run it in QEMU (with per-layer ticks);
    ``portable``: kernels on their portable C paths only (the benchmark's baseline)."""
    raise_if_too_big(check_fit(p, board), source=p.graph.source or None)
    try:
        fw = build_firmware(
            project,
            board,
            variant="emulator",
            debug_layers=debug_layers,
            profile=True,
            portable=portable,
            onnx_variant=p.onnx_variant,
        )
    except DoesNotFit as e:
        raise _with_peak(e, p) from None
    per = sample_bytes(p, debug_layers=debug_layers, profile=True)  # for the progress line
    with tempfile.TemporaryDirectory(prefix="tc_emu_") as wd:
        Path(wd, "tc_in.bin").write_bytes(pack_inputs(p.graph, inputs))
        er = run_emulator(fw, wd, timeout_s=timeout_s, sample_bytes=per)
    if er.returncode == EXIT_REFUSED:
        res = unpack_refused(p, er.output, er.stderr, debug_layers=debug_layers, profile=True)
    else:
        n = samples.count(p.graph.t(p.graph.inputs[0]), inputs[0])
        res = unpack_outputs(p, er.output, n, debug_layers=debug_layers, profile=True)
    res.emulator = er
    res.firmware = fw
    return res
