"""Hashes of everything the compiler writes, over the test models: the check that a refactoring
changed no output byte (issue 20). Run it on the commit before and after the change and compare:

    python tests/output_hashes.py -o before.json            # on the old checkout
    python tests/output_hashes.py -o after.json --against before.json

For every model under examples/ and tests/models/ (TFLite and ONNX; tests/models/bad/ too, whose
refusals must stay the same words), for each board in ``BOARDS`` and each streaming mode in
``STREAMS``: the generated C project (every file, by name and SHA-256) or the refusal's text,
and with ``--firmware`` the cross-compiled emulator image (.bin) of each board in
``FIRMWARE_BOARDS``. Prints the differences and exits 1 when there are any.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BOARDS = ("host", "stm32f746", "samd21", "qemu-m4")
STREAMS = ("auto", "min")
FIRMWARE_BOARDS = ("qemu-m7", "samd21")


def models() -> list[Path]:
    found = [*ROOT.glob("examples/*.tflite")]
    for ext in ("tflite", "onnx"):
        found += ROOT.glob(f"tests/models/**/*.{ext}")
    return sorted(found)


def _files(d: Path) -> dict[str, str]:
    return {
        str(f.relative_to(d)): hashlib.sha256(f.read_bytes()).hexdigest()
        for f in sorted(d.rglob("*"))
        if f.is_file()
    }


def one(model: Path, firmware: bool) -> dict[str, object]:
    """Every output of one model: {"<board>/<stream>": files or error, "fw/<board>": hash}."""
    from tinycompile import api
    from tinycompile.errors import CompileError

    out: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for board in BOARDS:
            for stream in STREAMS:
                key = f"{board}/{stream}"
                try:
                    p = api.plan(model, board=board, stream=stream)
                    d = api.generate(p, Path(tmp) / key.replace("/", "_"))
                    out[key] = _files(d)
                except CompileError as e:
                    out[key] = _error(e)
        if firmware:
            for board in FIRMWARE_BOARDS:
                try:
                    p = api.plan(model, board=board)
                    res = api.build_board(p, board, Path(tmp) / f"fw_{board}", emulator=True)
                    out[f"fw/{board}"] = hashlib.sha256(res.firmware.bin.read_bytes()).hexdigest()
                except CompileError as e:
                    out[f"fw/{board}"] = _error(e)
    return out


def _error(e: Exception) -> str:
    """A refusal's text, the checkout's own path left out (the checkouts compared differ)."""
    return "error: " + str(e).replace(str(ROOT) + "/", "")


def _one(args: tuple[str, bool]) -> tuple[str, dict[str, object]]:
    path, firmware = args
    return str(Path(path).relative_to(ROOT)), one(Path(path), firmware)


def compare(a: dict, b: dict) -> list[str]:
    diffs = []
    for model in sorted(set(a) | set(b)):
        if model not in a or model not in b:
            diffs.append(f"{model}: only in {'before' if model in a else 'after'}")
            continue
        for key in sorted(set(a[model]) | set(b[model])):
            x, y = _norm(a[model].get(key)), _norm(b[model].get(key))
            if x != y:
                diffs.append(f"{model} {key}: {_short(x)} -> {_short(y)}")
    return diffs


def _norm(v: object) -> object:
    """Refusals as their text after the model's path (hashes from older runs kept it)."""
    if isinstance(v, str) and v.startswith("error: "):
        return re.sub(r"^error: \S*?(?=(tests|examples)/)", "error: ", v)
    return v


def _short(v: object) -> str:
    if isinstance(v, dict):
        return f"{len(v)} files"
    return str(v)[:160]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", required=True, help="where to write the hashes (JSON)")
    ap.add_argument("--against", help="hashes of the old checkout to compare with")
    ap.add_argument("--firmware", action="store_true", help="also build emulator images")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--only", help="models whose path contains this")
    a = ap.parse_args()
    todo = [(str(m), a.firmware) for m in models() if not a.only or a.only in str(m)]
    with ProcessPoolExecutor(a.jobs) as ex:
        result = dict(ex.map(_one, todo, chunksize=4))
    Path(a.output).write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    n = sum(len(v) for v in result.values())
    print(f"{len(result)} models, {n} outputs hashed into {a.output}")
    if a.against:
        diffs = compare(json.loads(Path(a.against).read_text()), result)
        for d in diffs:
            print(d)
        print(f"{len(diffs)} differences")
        return 1 if diffs else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
