"""Layer-shape sweep models: >= 100 single-layer int8 TFLite models and a few 16x8 ones.

One operator per model, in the shape classes real MCU models use: first convolutions on 1-3
channels (non-square filters), pointwise and k x k convolutions (channel counts not multiples of
4 or 8, odd sizes), depthwise 1x1-7x7 at strides 1 and 2, depth multipliers (the speech model's
49x40x1, 10x8, stride 2, dm 8), FULLY_CONNECTED, pooling, ADD and MUL (with broadcast), and 16x8
variants. Per-channel int8 weights, biases at the product scale and activation scales estimated
from the float statistics of the random inputs (so requantization shifts are the usual ones; the
``shift22`` models have one channel whose shift is -22). Written without TensorFlow
(tests/modelgen/tflite_writer.py), each model seeded by its own name: the same bytes every run.

Run from the repository root: ``python benchmarks/sweep_models.py OUT_DIR``; writes
``<name>.tflite`` and ``manifest.json`` (name, class, op, dtype, shapes, attributes, MACs; pooling,
ADD and MUL count one MAC per window element or output element).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import tflite

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.modelgen.tflite_writer import Node, T, write  # noqa: E402

ACT = {"none": 0, "relu": 1, "relu6": 3}
PAD = {"same": 0, "valid": 1}
CODES = {"int8": (-128, 127), "int16": (-32768, 32767)}
MAX_MACS = 5_000_000
Shape = tuple[int, ...]


@dataclass
class Model:
    """One sweep model: its name (class and shape), manifest fields and flatbuffer."""

    name: str
    cls: str
    op: str
    dtype: str
    inputs: list[Shape]
    output: Shape
    macs: int
    attrs: dict = field(default_factory=dict)
    data: bytes = b""

    def manifest(self) -> dict:
        d = asdict(self)
        del d["data"]
        d["class"] = d.pop("cls")
        d["file"] = f"{self.name}.tflite"
        return d


def _opts(kind: str, **fields: int) -> Callable:
    """A builtin-options writer: ``kind`` 'Conv2DOptions', fields in CamelCase."""

    def w(b) -> int:
        getattr(tflite, f"{kind}Start")(b)
        for k, v in fields.items():
            getattr(tflite, f"{kind}Add{k}")(b, v)
        return getattr(tflite, f"{kind}End")(b)

    return w


def _f32(x: float) -> float:
    return float(np.float32(x))


def _rng(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


def _out(n: int, k: int, s: int, pad: str) -> int:
    return -(-n // s) if pad == "same" else (n - k) // s + 1


def _stats(q: tuple[float, int], dtype: str) -> tuple[float, float]:
    """Mean and standard deviation of the real values of uniform random codes (the inputs
    tinycompile's compare feeds)."""
    lo, hi = CODES[dtype]
    return q[0] * ((lo + hi) / 2 - q[1]), q[0] * np.sqrt(((hi - lo + 1) ** 2 - 1) / 12)


def _in_quant(rng: np.random.Generator, dtype: str, kind: str) -> tuple[float, int]:
    """An input's (scale, zero point): image (0..1), audio features (DS-CNN-like), the output of
    a RELU, or a free-ranging activation; 16x8: symmetric int16."""
    if dtype == "int16":
        return _f32(rng.uniform(3, 10) / 32767), 0
    if kind == "image":
        return _f32(1 / 255), -128
    if kind == "audio":
        return _f32(rng.uniform(0.3, 0.7)), int(rng.integers(60, 100))
    if kind == "relu":
        return _f32(rng.uniform(0.01, 0.1)), -128
    return _f32(rng.uniform(0.01, 0.1)), int(rng.integers(-30, 30))


def _out_quant(lo: float, hi: float, act: str, dtype: str) -> tuple[float, int]:
    """Output (scale, zero point) covering [lo, hi] after the fused activation."""
    if act != "none":
        lo, hi = 0.0, max(hi, 1e-3)
        hi = min(hi, 6.0) if act == "relu6" else hi
    lo, hi = min(lo, 0.0), max(hi, 1e-3)
    if dtype == "int16":
        return _f32(max(-lo, hi) / 32767), 0
    s = _f32((hi - lo) / 255)
    return s, int(np.clip(round(-128 - lo / s), -128, 127))


def _weighted(
    m: Model, op_opts: tuple[str, Callable], x_shape: Shape, w_shape: Shape, axis: int,
    in_kind: str, act: str, per_channel: bool = True, tiny: bool = False,
) -> Model:  # fmt: skip
    """Fill ``m.data``: input, per-channel int8 weights (output channels along ``axis``), bias,
    output; the output scale from the float output's mean +- 3 standard deviations."""
    rng = _rng(m.name)
    xq = _in_quant(rng, m.dtype, in_kind)
    mean, std = _stats(xq, m.dtype)
    n = w_shape[axis]
    w = np.moveaxis(rng.normal(0, 1, w_shape), axis, 0).reshape(n, -1)
    w *= rng.uniform(0.3, 1.5, (n, 1)) / np.sqrt(w.shape[1])
    amax = np.abs(w).max(axis=1) if per_channel else np.full(n, np.abs(w).max())
    ws = (amax / 127).astype(np.float32)
    wq = np.clip(np.round(w / ws[:, None]), -127, 127)
    wf = wq * ws[:, None]
    mu, sd = mean * wf.sum(axis=1), std * np.sqrt((wf**2).sum(axis=1))
    bias = rng.normal(0, 0.5, n) * sd
    lo, hi = float((mu + bias - 3 * sd).min()), float((mu + bias + 3 * sd).max())
    yq = _out_quant(lo, hi, act, m.dtype)
    if tiny:  # one channel's effective scale 0.75 * 2^-22: TFLM's requantization shift -22
        c = n // 2
        ws[c] = np.float32(0.75 * 2.0**-22 * yq[0] / xq[0])
        bias[c] = 0.0
    bs = (np.float32(xq[0]) * ws).astype(np.float32)
    bq = np.round(bias / bs).astype(np.int64)
    wdata = np.moveaxis(wq.reshape((n, *np.delete(w_shape, axis))), 0, axis)
    wquant = (list(ws), [0] * n) if per_channel else (float(ws[0]), 0)
    b_dt = "int64" if m.dtype == "int16" else "int32"
    bquant = (list(bs), [0] * n) if per_channel else (float(bs[0]), 0)
    tensors = [
        T("x", x_shape, m.dtype, quant=xq),
        T("w", w_shape, "int8", quant=wquant, data=wdata, quant_axis=axis),
        T("b", (n,), b_dt, quant=bquant, data=bq),
        T("y", m.output, m.dtype, quant=yq),
    ]
    m.attrs.update(act=act, in_quant=list(xq), out_quant=list(yq))
    m.data = write(tensors, [Node(m.op, [0, 1, 2], [3], op_opts[0], op_opts[1])], [0], [3])
    return m


def _suffix(pad: str = "same", act: str = "relu", default_act: str = "relu") -> str:
    return ("_valid" if pad == "valid" else "") + (f"_{act}" if act != default_act else "")


def conv(
    cls: str, hwc: Shape, k: Shape, o: int, s: int = 1, pad: str = "same", act: str = "relu",
    kind: str = "relu", dtype: str = "int8", tiny: bool = False,
) -> Model:  # fmt: skip
    """CONV_2D on 1 x H x W x C (filter ``k`` = (kh, kw), stride ``s``, ``o`` channels)."""
    (h, w, c), (kh, kw) = hwc, k
    oh, ow = _out(h, kh, s, pad), _out(w, kw, s, pad)
    name = f"{cls}_c{c}_{h}x{w}_k{kh}x{kw}_s{s}_o{o}" + _suffix(pad, act)
    name += "_shift22" if tiny else ""
    m = Model(name, cls, "CONV_2D", dtype, [(1, *hwc)], (1, oh, ow, o), oh * ow * o * kh * kw * c)
    m.attrs.update(kernel=[kh, kw], stride=s, padding=pad)
    opts = _opts(
        "Conv2DOptions", Padding=PAD[pad], StrideW=s, StrideH=s,
        FusedActivationFunction=ACT[act], DilationWFactor=1, DilationHFactor=1,
    )  # fmt: skip
    wsh = (o, kh, kw, c)
    return _weighted(m, ("Conv2DOptions", opts), (1, *hwc), wsh, 0, kind, act, tiny=tiny)


def dw(
    cls: str, hwc: Shape, k: Shape, s: int = 1, dm: int = 1, pad: str = "same",
    act: str = "relu", kind: str = "relu", dtype: str = "int8", tiny: bool = False,
) -> Model:  # fmt: skip
    """DEPTHWISE_CONV_2D (depth multiplier ``dm``)."""
    (h, w, c), (kh, kw) = hwc, k
    oh, ow = _out(h, kh, s, pad), _out(w, kw, s, pad)
    if dm > 1:
        name = f"{cls.removesuffix('_dm')}_dm{dm}_c{c}_{h}x{w}_k{kh}x{kw}_s{s}"
    else:
        name = f"{cls}_k{kh}x{kw}_s{s}_{h}x{w}x{c}"
    name += _suffix(pad, act) + ("_shift22" if tiny else "")
    m = Model(name, cls, "DEPTHWISE_CONV_2D", dtype, [(1, *hwc)], (1, oh, ow, c * dm), 0)
    m.macs = oh * ow * c * dm * kh * kw
    m.attrs.update(kernel=[kh, kw], stride=s, padding=pad, depth_multiplier=dm)
    opts = _opts(
        "DepthwiseConv2DOptions", Padding=PAD[pad], StrideW=s, StrideH=s, DepthMultiplier=dm,
        FusedActivationFunction=ACT[act], DilationWFactor=1, DilationHFactor=1,
    )  # fmt: skip
    wsh = (1, kh, kw, c * dm)
    dopts = ("DepthwiseConv2DOptions", opts)
    return _weighted(m, dopts, (1, *hwc), wsh, 3, kind, act, tiny=tiny)


def fc(
    cls: str, din: int, o: int, act: str = "relu", rows: int = 1, kind: str = "relu",
    dtype: str = "int8", per_channel: bool = True,
) -> Model:  # fmt: skip
    """FULLY_CONNECTED on ``rows`` x ``din``."""
    dout = o
    name = f"{cls}_i{din}_o{dout}" + (f"_r{rows}" if rows > 1 else "") + _suffix(act=act)
    name += "" if per_channel else "_pertensor"
    m = Model(name, cls, "FULLY_CONNECTED", dtype, [(rows, din)], (rows, dout), rows * din * dout)
    opts = _opts("FullyConnectedOptions", FusedActivationFunction=ACT[act], KeepNumDims=False)
    fopts = ("FullyConnectedOptions", opts)
    return _weighted(m, fopts, (rows, din), (dout, din), 0, kind, act, per_channel)


def pool(cls: str, hwc: Shape, k: Shape, s: int, pad: str = "valid", dtype: str = "int8") -> Model:
    """AVERAGE_POOL_2D (cls 'avgpool') or MAX_POOL_2D; input and output share quantization."""
    (h, w, c), (kh, kw) = hwc, k
    oh, ow = _out(h, kh, s, pad), _out(w, kw, s, pad)
    op = "MAX_POOL_2D" if "max" in cls else "AVERAGE_POOL_2D"
    name = f"{cls}_{h}x{w}x{c}_k{kh}x{kw}_s{s}" + ("_same" if pad == "same" else "")
    m = Model(name, cls, op, dtype, [(1, *hwc)], (1, oh, ow, c), oh * ow * c * kh * kw)
    m.attrs.update(kernel=[kh, kw], stride=s, padding=pad, act="none")
    q = _in_quant(_rng(name), dtype, "free")
    opts = _opts(
        "Pool2DOptions", Padding=PAD[pad], StrideW=s, StrideH=s, FilterWidth=kw,
        FilterHeight=kh, FusedActivationFunction=0,
    )  # fmt: skip
    tensors = [T("x", (1, *hwc), dtype, quant=q), T("y", m.output, dtype, quant=q)]
    m.data = write(tensors, [Node(op, [0], [1], "Pool2DOptions", opts)], [0], [1])
    return m


def binary(
    cls: str, hwc: Shape, b: Shape | None = None, act: str = "none", dtype: str = "int8"
) -> Model:
    """ADD (residual: two activations) or MUL (gating: an activation times a sigmoid's output);
    ``b`` may broadcast against ``a``."""
    op = "MUL" if cls.startswith("mul") else "ADD"
    a, b = hwc, b or hwc
    name = f"{cls}_{'x'.join(map(str, a))}"
    name += (f"_b{'x'.join(map(str, b))}" if b != a else "") + _suffix(act=act, default_act="none")
    out = (1, *np.broadcast_shapes(a, b))
    m = Model(name, cls, op, dtype, [(1, *a), (1, *b)], out, int(np.prod(out)))
    rng = _rng(name)
    qa = _in_quant(rng, dtype, "free" if op == "ADD" else "relu")
    if op == "ADD":
        qb = _in_quant(rng, dtype, "free")
    else:
        qb = (_f32(1 / 32768), 0) if dtype == "int16" else (_f32(1 / 256), -128)
    (ma, sa), (mb, sb) = _stats(qa, dtype), _stats(qb, dtype)
    if op == "ADD":
        lo, hi = ma + mb - 2.5 * (sa + sb), ma + mb + 2.5 * (sa + sb)
    else:
        ends = [x * y for x in (ma - 2 * sa, ma + 2 * sa) for y in (mb - 2 * sb, mb + 2 * sb)]
        lo, hi = min(ends), max(ends)
    qo = _out_quant(lo, hi, act, dtype)
    m.attrs.update(act=act, in_quant=[list(qa), list(qb)], out_quant=list(qo))
    kind = "MulOptions" if op == "MUL" else "AddOptions"
    extra = {"PotScaleInt16": False} if op == "ADD" else {}
    opts = _opts(kind, FusedActivationFunction=ACT[act], **extra)
    tensors = [
        T("a", (1, *a), dtype, quant=qa),
        T("b", (1, *b), dtype, quant=qb),
        T("y", out, dtype, quant=qo),
    ]
    m.data = write(tensors, [Node(op, [0, 1], [2], kind, opts)], [0, 1], [2])
    return m


# one line of specs per class, ';' between models: HxWxC input, kKH[xKW] filter, sN stride,
# oN output channels (FC: iN inputs), dmN depth multiplier, rN rows, bHxWxC broadcast operand,
# then words: same / valid, relu / relu6 / none, the input's kind (audio, image, free), shift22
SPECS = {
    "conv_first": """49x10x1 k10x4 s2 o64 audio; 49x10x1 k10x4 s1 o32 audio;
        49x40x1 k10x8 s2 o8 audio; 49x10x1 k10x8 s2 o48 relu6 audio;
        98x40x1 k10x8 s2 o16 valid audio; 96x96x1 k3 s2 o8 relu6 image;
        96x96x3 k3 s2 o8 relu6 image; 32x32x3 k3 o16 image; 64x64x3 k5 s2 o16 image;
        28x28x1 k5 o8 image; 64x64x3 k7 s2 o8 image; 80x80x3 k7 s2 o12 valid none image;
        32x32x1 k3 o16 none image; 32x32x2 k3 o8 free; 40x40x2 k5 s2 o12 relu6 free;
        48x48x3 k3 s2 o16 valid image""",
    "conv_pw": """25x5x64 o64; 48x48x8 o16 relu6; 24x24x16 o32 relu6; 12x12x32 o64 relu6;
        6x6x64 o128 relu6; 3x3x128 o256 relu6; 20x20x16 o96 relu6; 20x20x96 o16 none;
        10x10x144 o24 none; 10x10x24 o144 relu6; 16x16x16 o32 s2 none; 13x13x24 o40;
        7x7x36 o20 none; 15x11x10 o6; 9x9x3 o17; 17x17x12 o12 relu6; 5x5x100 o60;
        11x11x6 o10 none; 31x31x5 o7; 1x1x256 o64; 15x15x19 o33; 8x8x7 o13 relu6;
        12x12x32 o24 shift22""",
    "conv": """32x32x16 k3 o16; 32x32x16 k3 s2 o32; 16x16x32 k3 o32 none; 16x16x32 k3 s2 o64;
        8x8x64 k3 o64; 12x12x6 k3 o10; 9x9x20 k3 o12 relu6; 14x14x5 k3 o7 none;
        11x13x12 k3 s2 o24; 7x7x48 k3 o48; 16x16x8 k5 o16; 10x10x24 k5 o24 relu6;
        20x20x8 k3 o8 valid; 12x12x12 k7 s2 o16; 25x5x32 k3x1 o32; 25x5x32 k1x3 o32 none""",
    "dw": """16x16x32 k1; 9x9x20 k1 relu6; 16x16x32 k1 s2; 11x11x12 k1 s2 relu6;
        25x5x64 k3; 48x48x8 k3 relu6; 24x24x32 k3 none; 12x12x64 k3; 6x6x128 k3 relu6;
        3x3x256 k3 none; 13x13x20 k3; 10x10x6 k3 relu6; 7x7x100 k3 none; 40x40x16 k3;
        96x96x8 k3 s2; 48x48x16 k3 s2 relu6; 24x24x64 k3 s2 none; 12x12x128 k3 s2;
        15x15x12 k3 s2 relu6; 11x11x5 k3 s2 none; 20x20x24 k5; 14x14x40 k5 relu6;
        9x9x7 k5 none; 28x28x16 k5 s2; 14x14x30 k5 s2 relu6; 14x14x32 k7; 10x10x20 k7 relu6;
        28x28x16 k7 s2; 22x22x24 k7 s2 relu6; 24x24x16 k3 relu6 shift22; 25x5x64 k3 valid""",
    "dw_dm": """49x40x1 k10x8 s2 dm8 audio; 49x10x1 k10x4 s2 dm16 audio; 32x32x1 k3 dm8 image;
        24x24x3 k3 dm2 image; 16x16x8 k3 s2 dm2; 10x10x4 k5 dm4; 12x12x2 k3 s2 dm6 free""",
    "fc": """i64 o12 none; i128 o10 none; i640 o128; i128 o128; i128 o640 none; i256 o256 relu6;
        i1024 o16; i2048 o10 none; i4000 o4 none; i10 o32; i20 o7; i33 o11 none; i1600 o200;
        i300 o300; i256 o64 pertensor; i64 o32 r10""",
    "avgpool": """3x3x256 k3 s1; 25x5x64 k25x5 s1; 8x8x64 k8 s1; 32x32x16 k2 s2;
        12x12x24 k3 s1 same; 15x15x7 k3 s2 same""",
    "maxpool": """32x32x16 k2 s2; 24x24x32 k3 s2 same; 15x15x7 k2 s2; 10x10x20 k3 s1 same;
        48x48x8 k2 s2""",
    "add": """32x32x16 relu; 16x16x32 relu; 8x8x64; 12x12x20 relu6; 25x5x64; 16x16x32 b1x1x32;
        10x10x8 b10x10x1 relu; 7x9x5 b1x9x5""",
    "mul": "16x16x16; 8x8x32 b1x1x32; 10x10x24 b1x1x24; 12x12x8 b1x1x1",
    # 16x8: int16 activations, int8 weights, int64 biases
    "conv16": "32x32x1 k3 o8; 49x10x1 k10x4 s2 o32; 12x12x16 k1 o32 relu6; 12x12x16 k3 o16",
    "dw16": "24x24x16 k3; 16x16x32 k3 s2 relu6; 12x12x4 k3 dm2",
    "fc16": "i256 o64; i64 o10 none",
    "add16": "16x16x16; 8x8x32 b1x1x32 relu",
    "avgpool16": "8x8x32 k8 s1",
    "maxpool16": "16x16x16 k2 s2",
}
WORDS = {w: "pad" for w in PAD} | {w: "act" for w in ACT} | {"audio": "kind", "image": "kind"}
WORDS |= {"free": "kind", "shift22": "tiny", "pertensor": "per_channel"}
KEYS = {"": "hwc", "b": "b", "k": "k", "s": "s", "o": "o", "dm": "dm", "i": "din", "r": "rows"}
BUILD = {"conv": conv, "dw": dw, "fc": fc, "pool": pool, "add": binary, "mul": binary}


def parse(spec: str) -> dict:
    """One spec's keyword arguments ('49x10x1 k10x4 s2 o64 audio')."""
    kw: dict = {}
    for tok in spec.split():
        if tok in WORDS:
            kw[WORDS[tok]] = {"shift22": True, "pertensor": False}.get(tok, tok)
            continue
        m = re.fullmatch(r"([a-z]*)(\d+(?:x\d+)*)", tok)
        if m is None or m[1] not in KEYS:
            raise ValueError(f"bad token {tok!r} in sweep spec {spec!r}")
        nums = tuple(int(x) for x in m[2].split("x"))
        key = KEYS[m[1]]
        kw[key] = (nums * 2 if len(nums) == 1 else nums) if key == "k" else nums
        if key not in ("hwc", "b", "k"):
            kw[key] = nums[0]
    return kw


def models() -> list[Model]:
    """Every sweep model, in a fixed order."""
    out: list[Model] = []
    for cls, specs in SPECS.items():
        fam = re.sub(r"(_.*|16)$", "", cls)
        build = BUILD["pool" if fam.endswith("pool") else fam]
        dtype = "int16" if cls.endswith("16") else "int8"
        for spec in specs.split(";"):
            kw = parse(spec)
            if fam == "conv" and "k" not in kw:
                kw["k"] = (1, 1)
            out.append(build(cls, dtype=dtype, **kw))
    names = Counter(m.name for m in out)
    dup = [n for n, c in names.items() if c > 1]
    assert not dup, f"duplicate sweep model names: {dup}"
    return out


def generate(out_dir: Path) -> list[Model]:
    """Write every model and manifest.json into ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    ms = models()
    for m in ms:
        (out_dir / f"{m.name}.tflite").write_bytes(m.data)
    manifest = [m.manifest() for m in ms]
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return ms


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir", type=Path, help="folder for the .tflite files and manifest.json")
    a = ap.parse_args(argv)
    ms = generate(a.out_dir)
    per = Counter(m.cls for m in ms)
    print(f"{len(ms)} models in {a.out_dir}: " + ", ".join(f"{c} {n}" for c, n in per.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
