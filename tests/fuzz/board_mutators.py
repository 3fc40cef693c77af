"""Mutators of board TOML files: damaged tables and values, hostile text, text-level damage.

``mutate_toml`` takes a ``random.Random`` and returns the mutant plus a short description, so a
case is reproducible from its seed and readable in a failure report.
"""

from __future__ import annotations

import copy
import random
import tomllib
from typing import Any

from .edge_values import HOSTILE_TEXT


def toml_dumps(d: dict[str, Any]) -> str:
    """A small TOML writer (tables, arrays of tables, scalars, arrays) for the mutants."""
    lines: list[str] = []

    def key(k: str) -> str:
        return k if k and all(c.isalnum() or c in "-_" for c in k) else _tstr(k)

    def emit(prefix: str, table: dict[str, Any]) -> None:
        subs = []
        for k, v in table.items():
            if isinstance(v, dict):
                subs.append((k, v))
            elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
                subs.append((k, v))
            else:
                lines.append(f"{key(k)} = {_tval(v)}")
        for k, v in subs:
            name = f"{prefix}.{key(k)}" if prefix else key(k)
            if isinstance(v, dict):
                lines.append(f"\n[{name}]")
                emit(name, v)
            else:
                for item in v:
                    lines.append(f"\n[[{name}]]")
                    emit(name, item)

    emit("", d)
    return "\n".join(lines) + "\n"


def _tstr(s: str) -> str:
    out = s.replace("\\", "\\\\").replace('"', '\\"')
    out = "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in out)
    return f'"{out}"'


def _tval(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v != v:
            return "nan"
        if v in (float("inf"), -float("inf")):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return _tstr(v)
    if isinstance(v, list):
        return "[" + ", ".join(_tval(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_tstr(k)} = {_tval(x)}" for k, x in v.items()) + "}"
    return _tstr(str(v))


TOML_VALUES: list[Any] = [
    0,
    -1,
    1,
    -(2**63),
    2**63 - 1,
    10**30,
    4294967296,
    0x7FFFFFFF,
    1.5,
    float("nan"),
    float("inf"),
    -0.0,
    "",
    "x",
    "0x8000000",
    "-5",
    "cortex-m99",
    "../../../etc/passwd",
    "*/ evil(); /*",
    "a\nb",
    True,
    False,
    [],
    [1, 2],
    ["a"],
    {"k": 1},
    "\u202e",
]


def _paths(d: Any, prefix: tuple = ()) -> list[tuple]:
    out = []
    if isinstance(d, dict):
        for k, v in d.items():
            out.append(prefix + (k,))
            out.extend(_paths(v, prefix + (k,)))
    elif isinstance(d, list):
        for i, v in enumerate(d):
            out.append(prefix + (i,))
            out.extend(_paths(v, prefix + (i,)))
    return out


def _get(d: Any, path: tuple) -> Any:
    for k in path:
        d = d[k]
    return d


def mutate_toml(text: str, rng: random.Random) -> tuple[bytes, str]:
    """Mutate a board file: delete keys, change types, huge/negative numbers, unknown keys,
    plus text damage (truncation, flipped bytes, invalid UTF-8)."""
    r = rng.random()
    raw = text.encode()
    if r < 0.12:
        cut = rng.randrange(len(raw))
        return raw[:cut], f"truncate at {cut}"
    if r < 0.2:
        b = bytearray(raw)
        for _ in range(rng.choice([1, 2, 8])):
            b[rng.randrange(len(b))] = rng.randrange(256)
        return bytes(b), "random bytes"
    if r < 0.24:
        lines = text.splitlines()
        i = rng.randrange(len(lines))
        lines.insert(i, lines[rng.randrange(len(lines))])
        return "\n".join(lines).encode(), f"duplicate line at {i}"
    d = tomllib.loads(text)
    descs = []
    for _ in range(rng.choice([1, 1, 2, 3])):
        paths = _paths(d)
        if not paths:
            break
        path = rng.choice(paths)
        parent = _get(d, path[:-1])
        k = path[-1]
        op = rng.choice(
            ["delete", "type", "number", "number", "unknown", "negative", "empty", "text", "text"]
        )
        if op == "text":
            # hostile text into a string field: description, name, pins, machine...
            strs = [q for q in paths if isinstance(_get(d, q), str)]
            path = rng.choice(strs) if strs else path
            parent, k = _get(d, path[:-1]), path[-1]
        if op == "text":
            h = rng.choice(HOSTILE_TEXT).decode("utf-8", "replace")
            cur = parent[k] if isinstance(parent[k], str) else ""
            parent[k] = rng.choice([h, cur + h, h + cur, cur.replace("-", h)])
        elif op == "delete":
            del parent[k]
        elif op == "type":
            parent[k] = copy.deepcopy(rng.choice(TOML_VALUES))
        elif op in ("number", "negative"):
            cur = parent[k]
            if isinstance(cur, (int, float)) and not isinstance(cur, bool):
                parent[k] = (
                    -cur
                    if op == "negative"
                    else rng.choice([0, cur * 2**20, cur + 1, cur - 1, 2**64, -(2**63), 1])
                )
            else:
                parent[k] = rng.choice([0, -1, 2**63 - 1, -(2**31)])
        elif op == "unknown":
            target = parent if isinstance(parent, dict) else d
            key = rng.choice(["bogus", "Flash", "sram ", "x" * 300])
            target[key] = copy.deepcopy(rng.choice(TOML_VALUES))
        else:
            cur = parent[k]
            parent[k] = type(cur)() if isinstance(cur, (dict, list, str)) else 0
        descs.append(f"{op} {'.'.join(map(str, path))}")
    return toml_dumps(d).encode(), "; ".join(descs)
