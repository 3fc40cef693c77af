"""C code generation: render templates/model/*.j2 from a Plan into a self-contained project.

Layout of the output folder:
  model/tc_model.h, model/tc_model.c, model/tc_weights.h, model/tc_weights.c   generated
  runtime/                                                   copy of the repo's firmware/ tree
Generated identifiers come only from op and tensor indices; model names and strings appear
only in comments, through ``c_comment`` which keeps a small safe character set.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import jinja2
import numpy as np

from ..errors import CompileError
from ..ir import DTYPE_CODES, Graph
from ..ops import ConstArray
from ..paths import FIRMWARE_DIR as FIRMWARE
from ..paths import TEMPLATES_DIR as TEMPLATES
from ..pipeline import Plan

_SAFE = re.compile(r"[^A-Za-z0-9_.:;,=+\- ()\[\]]")


def c_comment(text: str, limit: int = 60) -> str:
    """Text safe inside a /* */ C comment: no '*', '/', '\\', '?', control or non-ASCII."""
    return _SAFE.sub("_", text)[:limit]


def c_int(v: int) -> str:
    v = int(v)
    if v == -(2**31):
        return "(-2147483647 - 1)"
    return str(v)


def c_int64(v: int) -> str:
    v = int(v)
    if v == -(2**63):
        return "(-9223372036854775807LL - 1)"
    return f"{v}LL"


def c_float(v: float) -> str:
    f = float(np.float32(v))
    if not np.isfinite(f):
        raise ValueError(f"non-finite float constant {f}")
    return f"{f.hex()}f" if f != 0 else "0.0f"


def c_value(v: object) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, (int, np.integer)):
        return c_int(int(v))
    if isinstance(v, (float, np.floating)):
        return c_float(float(v))
    if isinstance(v, str):
        return v
    raise TypeError(f"cannot render {type(v).__name__} as C")


def render_values(a: ConstArray, per_line: int = 24) -> str:
    vals = a.values
    if a.ctype == "float":
        items = [c_float(x) for x in vals.tolist()]
    elif a.ctype == "int32_t":
        items = [c_int(x) for x in vals.tolist()]
    elif a.ctype == "int64_t":
        items = [c_int64(x) for x in vals.tolist()]
    else:
        items = [str(x) for x in vals.tolist()]
    lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
    return ",\n    ".join(lines)


def _env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.filters["c_comment"] = c_comment
    env.filters["c_value"] = c_value
    env.filters["c_float"] = c_float
    env.filters["values"] = render_values
    return env


def model_sha256_bytes(g: Graph) -> str:
    """The model file's SHA-256 as a C initializer list (zeros for a graph made in memory)."""
    digest = bytes.fromhex(g.sha256) if g.sha256 else bytes(32)
    if len(digest) != 32:
        raise CompileError(f"model fingerprint has {len(digest)} bytes, not 32")
    return ", ".join(f"0x{b:02x}" for b in digest)


def _tensor_info(g: Graph, tid: int) -> dict:
    t = g.t(tid)
    shape = list(t.shape)[:6] + [0] * (6 - min(len(t.shape), 6))
    return {
        "id": tid,
        "bytes": t.nbytes,
        "dtype": DTYPE_CODES[t.dtype],
        "rank": len(t.shape),
        "shape": shape,
        "scale": float(t.quant.scale[0]) if t.quant is not None else 0.0,
        "zero_point": int(t.quant.zero_point[0]) if t.quant is not None else 0,
        "name": c_comment(t.name),
        "ctype": t.ctype,
    }


def _state_info(g: Graph, tid: int, offset: int) -> dict:
    """A variable tensor in the state region and the byte it is reset to: TFLite's
    ResetVariableTensor fills int8 state with its zero point, every other type with 0."""
    t = g.t(tid)
    fill = t.quant.zp & 0xFF if t.dtype == "int8" and t.quant is not None else 0
    return {"id": tid, "offset": offset, "bytes": t.nbytes, "fill": fill, "name": c_comment(t.name)}


PREFIX = re.compile(r"[a-z][a-z0-9_]{0,30}")


_ARENA_REF = re.compile(r"\bTC_(?:T|SCRATCH)\d+\b")


def _param_view(q: object, caller_arena: bool) -> dict:
    """A parameter struct for the template. With the caller's arena, fields that point into it
    are not constant expressions: they are left out of the initializer (the struct is then not
    const, in RAM) and set by ``<prefix>_init`` (``late``)."""
    late = {
        k: v
        for k, v in q.fields.items()
        if caller_arena and isinstance(v, str) and _ARENA_REF.search(v)
    }
    fields = {k: v for k, v in q.fields.items() if k not in late}
    return {"symbol": q.symbol, "ctype": q.ctype, "fields": fields, "late": late}


def render_model(p: Plan, prefix: str = "tc", *, caller_arena: bool = False) -> dict[str, str]:
    """Render the generated model sources; returns {relative path: text}.

    ``prefix`` names every external symbol (``<prefix>_invoke``, ``<prefix>_input``, the const
    arrays ``<prefix>_const_t10``, ...), the header's macros (upper case) and the files
    (``<prefix>_model.h``): several models link into one program under different prefixes.
    ``caller_arena``: no static arena; ``<prefix>_init(void *arena)`` takes the caller's."""
    if not PREFIX.fullmatch(prefix):
        raise CompileError(
            f"prefix {prefix!r}: lower-case letters, digits and _, 1-31, a letter first"
        )
    g, low = p.graph, p.lowering
    for tid in g.outputs:
        if tid not in p.storage:  # e.g. an output whose producers were all folded away
            raise CompileError(
                f"graph output tensor {tid} is a constant after folding: nothing to compute",
                source=g.source or None,
            )
    env = _env()
    steps = []
    for s, i in enumerate(p.order):
        lo = low.ops[i]
        out = lo.op.outputs[0]
        steps.append(
            {
                "layer": s,
                "index": lo.op.index,
                "kind": lo.op.kind,
                "stmt": lo.stmt,
                "check": lo.refusal is not None,
                "refusal": lo.refusal or "",
                "out": out,
                "out_bytes": g.t(out).nbytes,
            }
        )
    tensors = sorted(p.storage)
    scratch = [b for b in p.buffers if b.scratch_of is not None]
    arrays = sorted(low.arrays.values(), key=lambda a: a.symbol)
    kernel_headers = sorted(h.name for h in (FIRMWARE / "include").glob("tc_*.h"))
    ctx = {
        "model_name": c_comment(g.name),
        "source": c_comment(Path(g.source).name) if g.source else "",
        "sha256": model_sha256_bytes(g),
        "inputs": [_tensor_info(g, t) for t in g.inputs],
        "outputs": [_tensor_info(g, t) for t in g.outputs],
        "steps": steps,
        "arena_bytes": max(p.arena_bytes, 8),
        "peak_bytes": p.peak_bytes,
        "flash_bytes": p.flash_bytes,
        "tensors": [
            {"id": t, "offset": p.offset(t), "bytes": g.t(t).nbytes, "name": c_comment(g.t(t).name)}
            for t in tensors
        ],
        "scratch": [{"op": b.scratch_of, "offset": b.offset, "bytes": b.nbytes} for b in scratch],
        "state_bytes": p.state_bytes,
        "state": [_state_info(g, tid, off) for tid, off in sorted(p.state.items())],
        "params": [_param_view(q, caller_arena) for q in low.params],
        "arrays": arrays,
        "kernel_headers": kernel_headers,
        "ns": prefix,
        "NS": prefix.upper(),
        "caller_arena": caller_arena,
    }
    out = {
        f"model/{prefix}_{name[3:]}": env.get_template(f"model/{name}.j2").render(**ctx)
        for name in ("tc_model.h", "tc_model.c", "tc_weights.h", "tc_weights.c")
    }
    if prefix != "tc":  # the lowering's array symbols are tc_const_t<id>, tc_op<index>_<what>
        syms = re.compile(r"\b(?:" + "|".join(re.escape(a.symbol) for a in arrays) + r")\b")
        for rel, text in out.items():
            if arrays:
                out[rel] = syms.sub(lambda m: prefix + m.group(0)[2:], text)
    return out


def write_project(p: Plan, out_dir: Path) -> None:
    """Write generated sources and a copy of the runtime into ``out_dir`` (must not exist)."""
    files = render_model(p)
    for rel, text in files.items():
        path = out_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="ascii")
    shutil.copytree(FIRMWARE, out_dir / "runtime", ignore=shutil.ignore_patterns("*.o", "*~"))
