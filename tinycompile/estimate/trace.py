"""Executed instructions per layer, classed: one inference of the model's emulator build in
QEMU, every guest instruction logged (``-singlestep -d exec,nochain``, through a named pipe,
counted as it streams) and attributed to the layer running, then classed by the ELF's
disassembly (``cost.classify``).

Layers are told apart by the profile build's hook: ``tc_layer_hook`` runs after every layer, so
each entry into it closes a layer; its own instructions and the timer reads it makes are left
out, as is everything outside ``tc_invoke`` (start-up, semihosting I/O). A branch is taken when
the next executed address is not the one after it. Deterministic: QEMU executes the same
instructions every run. About a million instructions a second.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from ..boards import Board
from ..build import FirmwareBuild, build_firmware
from ..build.toolchain import find_toolchain
from ..errors import ToolchainError
from ..outdir import generate
from ..pipeline import Plan
from ..run.emulator import qemu_command
from ..run.inputs import make_inputs
from ..run.ioformat import pack_inputs
from .cost import classify

_LINE = re.compile(r"^\s*([0-9a-f]+):\t([a-z][\w.]*)\t?(.*)$")
_EXCLUDED = ("tc_layer_hook", "tc_timer_read", "tc_systick_read", "tc_dwt_read", "SysTick_Handler")
LOAD_STORE = ("load", "store", "load_n", "store_n")


def disassembly(elf: Path) -> dict[int, tuple[str, int, int]]:
    """Address -> (class, registers moved, size in bytes) of every instruction in the ELF."""
    tools = find_toolchain()
    r = subprocess.run(
        [tools["objdump"], "-d", "--no-show-raw-insn", str(elf)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if r.returncode != 0:
        raise ToolchainError(f"objdump {elf.name}: {r.stderr.strip()[:500]}")
    rows = []
    for ln in r.stdout.splitlines():
        m = _LINE.match(ln)
        if m and not m.group(2).startswith("."):
            rows.append((int(m.group(1), 16), m.group(2), m.group(3).split(";")[0]))
    out = {}
    for (addr, mn, ops), nxt in zip(rows, [*rows[1:], (rows[-1][0] + 2, "", "")], strict=True):
        cls, n = classify(mn, ops)
        size = (
            nxt[0] - addr
            if 0 < nxt[0] - addr <= 4
            else (4 if "." in mn and mn.endswith(".w") else 2)
        )
        out[addr] = (cls, n, size)
    return out


def symbols(elf: Path) -> dict[str, tuple[int, int]]:
    """Function name -> (address without the Thumb bit, size)."""
    tools = find_toolchain()
    r = subprocess.run([tools["nm"], "-S", str(elf)], capture_output=True, text=True, timeout=120)
    out = {}
    for ln in r.stdout.splitlines():
        parts = ln.split()
        if len(parts) == 4 and parts[2] in "tTwW":
            out[parts[3]] = (int(parts[0], 16) & ~1, int(parts[1], 16))
    return out


def _count(fifo: Path, elf: Path, layers: int, out: list[Counter[str]]) -> None:
    code = disassembly(elf)
    syms = symbols(elf)
    invoke = syms["tc_invoke"][0] if "tc_invoke" in syms else None
    hook = syms.get("tc_layer_hook", (None, 0))[0]
    skip = set()
    for name in _EXCLUDED:
        if name in syms:
            a, n = syms[name]
            skip.update(range(a, a + n, 2))
    for _ in range(layers):
        out.append(Counter())
    active, layer, prev, prev_cls = False, 0, None, ""
    with open(fifo, "rb") as f:
        for line in f:
            if not line.startswith(b"Trace"):
                continue
            i = line.find(b"/")
            pc = int(line[i + 1 : i + 9], 16)
            if pc == invoke:
                active, layer, prev, prev_cls = True, 0, None, ""
                continue
            if not active:
                continue
            if pc in skip:
                if pc == hook:
                    layer += 1
                    if layer >= layers:
                        active = False
                prev = None
                continue
            cls, n, size = code.get(pc, ("alu", 1, 2))
            c = out[layer]
            if prev is not None and prev[0] == "branch":
                c["branch_taken" if pc != prev[1] + prev[2] else "branch_not_taken"] += 1
            if cls == "load" and prev_cls in LOAD_STORE:
                c["load_pipelined"] += 1
            elif cls in ("load_n", "store_n", "ret"):
                c[cls] += 1
                c["regs"] += n
            elif cls != "branch":
                c[cls] += 1
            c["instructions"] += 1
            prev, prev_cls = (cls, pc, size), cls


def exec_trace(
    fw: FirmwareBuild, wd: Path, consume: Callable[[Path], None], timeout_s: float = 1800
) -> None:
    """Run emulator build ``fw`` in QEMU (cwd ``wd``, holding tc_in.bin) with every executed
    instruction logged (``-singlestep -d exec,nochain``) into a named pipe that ``consume``
    reads as it streams (nothing large is written). ToolchainError when QEMU is missing or
    fails; ``consume``'s own error is raised after QEMU ends (the pipe is drained meanwhile)."""
    fifo = wd / "exec.fifo"
    os.mkfifo(fifo)
    err: list[BaseException] = []

    def reader() -> None:
        try:
            consume(fifo)
        except BaseException as e:  # reported after QEMU ends
            err.append(e)
            with open(fifo, "rb") as f:  # keep draining so QEMU is not blocked
                for _ in f:
                    pass

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    cmd = [*qemu_command(fw), "-singlestep", "-d", "exec,nochain", "-D", str(fifo)]
    try:
        r = subprocess.run(cmd, cwd=wd, capture_output=True, timeout=timeout_s)
    except FileNotFoundError:
        raise ToolchainError("qemu-system-arm not found: apt-get install qemu-system-arm") from None
    t.join(timeout=120)
    if err:
        raise err[0]
    if r.returncode != 0:
        tail = r.stderr.decode(errors="replace").strip().splitlines()
        raise ToolchainError(f"QEMU exited {r.returncode}: {tail[-1] if tail else ''}")


def layer_classes(p: Plan, board: Board, seed: int = 0, timeout_s: float = 1800) -> list[dict]:
    """Per layer of ``p`` (in run order): instruction counts by class on ``board``'s core, from
    its emulator build."""
    layers: list[Counter[str]] = []
    with tempfile.TemporaryDirectory(prefix="tc_est_") as td:
        wd = Path(td)
        fw = build_firmware(generate(p, wd / "project"), board, variant="emulator", profile=True)
        (wd / "tc_in.bin").write_bytes(pack_inputs(p.graph, make_inputs(p.graph, 1, seed)))
        n_layers = len(p.order)
        exec_trace(fw, wd, lambda fifo: _count(fifo, fw.elf, n_layers, layers), timeout_s)
    return [dict(c) for c in layers]
