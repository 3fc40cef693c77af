"""tc_in.bin and tc_out.bin, defined once: the files firmware/runtime/tc_runner.c reads and
writes (host and emulator builds), their layout as data, and the one packer and reader of both.

``tc_in.bin``: a uint32 sample count ``n``, then ``n`` samples, each every graph input's bytes
in the graph's input order (``in_layout``).

``tc_out.bin``: ``n`` samples, each these blocks in this order (``out_layout``):

1. debug builds (``TC_DEBUG_LAYERS``): every layer's output tensor, in execution order;
2. every graph output, in the graph's output order;
3. debug builds of a model with state (``TC_STATE_BYTES`` > 0): the state region after the
   sample, as raw bytes;
4. profile builds (``TC_PROFILE``): a uint32 tick count per layer, then the whole inference's.

All little-endian (tensors are written as they lie in memory on the host and on Cortex-M, the
tick counts byte by byte), no header, no padding. A run stopped by a refused input (exit
status 5) leaves the complete samples before it and then part of the refused one.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..errors import CompileError, RunError
from ..ir import Tensor

if TYPE_CHECKING:
    from ..pipeline import Plan

COUNT = struct.Struct("<I")  # tc_in.bin's header: the number of samples
# tc_runner.c's exit statuses besides 0; after EXIT_REFUSED the entry point prints the line
# "tc-refused: sample=S layer=L" (stderr on the host, semihosting's in the emulator)
EXIT_NO_FILE, EXIT_SHORT_INPUT, EXIT_REFUSED = 3, 4, 5
REFUSED_LINE = re.compile(r"tc-refused: sample=(\d+) layer=(\d+)")
TICK = "uint32"  # one profile tick count

LAYER, OUTPUT, STATE, TICKS, INPUT = "layer", "output", "state", "ticks", "input"


@dataclass(frozen=True)
class Block:
    """One value a sample holds: what it is, and its elements' type and shape."""

    kind: str  # LAYER, OUTPUT, STATE, TICKS or INPUT
    index: int  # the layer's number or the output's / input's position; 0 for STATE, TICKS
    dtype: str  # numpy's name of the element type, stored little-endian
    shape: tuple[int, ...]
    tensor: int | None = None  # the graph tensor it holds (LAYER, OUTPUT, INPUT)

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * np.dtype(self.dtype).itemsize

    @property
    def wire(self) -> np.dtype:
        """The element type as stored: little-endian."""
        return np.dtype(self.dtype).newbyteorder("<")

    def label(self) -> str:
        return self.kind if self.kind in (STATE, TICKS) else f"{self.kind} {self.index}"


@dataclass(frozen=True)
class Layout:
    """The blocks of one sample, in file order; a file repeats them once per sample."""

    blocks: tuple[Block, ...]
    header: bool = False  # tc_in.bin: the sample count comes first (``COUNT``)

    @property
    def sample_bytes(self) -> int:
        """Bytes per sample: what run progress is measured in."""
        return sum(b.nbytes for b in self.blocks)

    def offsets(self) -> list[int]:
        """Each block's offset within its sample."""
        out, at = [], 0
        for b in self.blocks:
            out.append(at)
            at += b.nbytes
        return out

    def position(self, sample: int, block: int) -> int:
        """Where block ``block`` of sample ``sample`` starts in the file."""
        head = COUNT.size if self.header else 0
        return head + sample * self.sample_bytes + self.offsets()[block]

    def size(self, n: int) -> int:
        """The file's size for ``n`` samples."""
        return (COUNT.size if self.header else 0) + n * self.sample_bytes

    def find(self, kind: str) -> list[int]:
        """Positions in ``blocks`` of the blocks of ``kind``."""
        return [i for i, b in enumerate(self.blocks) if b.kind == kind]

    def pack(self, values: Sequence[np.ndarray], n: int) -> bytes:
        """The file of ``n`` samples: ``values[k]`` holds block ``k`` of every sample, in order
        (shape ``(n, *shape)``, or an IR batch: any shape of that size), of its element type."""
        if len(values) != len(self.blocks):
            raise CompileError(f"{len(self.blocks)} blocks per sample, {len(values)} given")
        rows = []
        for b, v in zip(self.blocks, values, strict=True):
            v = np.asarray(v)
            if v.dtype != np.dtype(b.dtype) or v.size != n * int(np.prod(b.shape, dtype=np.int64)):
                raise CompileError(
                    f"{b.label()}: {n} samples of {b.dtype} {list(b.shape)} wanted,"
                    f" got {v.dtype} {list(v.shape)}"
                )
            rows.append(np.ascontiguousarray(v, dtype=b.wire).reshape(n, -1).view(np.uint8))
        body = np.concatenate(rows, axis=1) if rows else np.zeros((n, 0), np.uint8)
        return (COUNT.pack(n) if self.header else b"") + body.tobytes()

    def read(self, data: bytes, n: int | None = None, *, partial: bool = False) -> list[np.ndarray]:
        """Every block of ``n`` samples (tc_in.bin: its count when ``n`` is None), one array per
        block of shape ``(n, *shape)``. RunError when the size is not what ``n`` samples
        make; ``partial``: part of one more sample may follow (a refused run's)."""
        mv = memoryview(data)
        if self.header:
            if len(mv) < COUNT.size:
                raise RunError(f"{len(data)} bytes: too short for the sample count")
            (count,) = COUNT.unpack_from(mv)
            n = count if n is None else n
            mv = mv[COUNT.size :]
        if n is None:
            raise RunError("the number of samples is needed to read a file without a count")
        per = self.sample_bytes
        extra = len(mv) - n * per
        if extra < 0 or (extra and not (partial and extra < max(per, 1))):
            who = "tc_in.bin holds" if self.header else "firmware wrote"
            what = "of samples" if self.header else "of results"
            more = " and part of one more" if partial else ""
            raise RunError(
                f"{who} {len(mv)} bytes {what}, expected {n * per}"
                f" ({n} samples of {per} bytes{more})"
            )
        whole = np.frombuffer(mv[: n * per], np.uint8).reshape(n, per)
        out = []
        for b, at in zip(self.blocks, self.offsets(), strict=True):
            raw = np.ascontiguousarray(whole[:, at : at + b.nbytes]).reshape(-1)
            out.append(raw.view(b.wire).astype(b.dtype).reshape((n, *b.shape)))
        return out


def _block(kind: str, index: int, t: Tensor) -> Block:
    return Block(kind, index, t.dtype, tuple(int(d) for d in t.shape), t.id)


def in_layout(inputs: Sequence[Tensor]) -> Layout:
    """tc_in.bin for a graph with ``inputs`` (in order)."""
    return Layout(tuple(_block(INPUT, i, t) for i, t in enumerate(inputs)), header=True)


def out_layout(
    outputs: Sequence[Tensor],
    layers: Sequence[Tensor],
    state_bytes: int,
    *,
    debug_layers: bool,
    profile: bool,
) -> Layout:
    """tc_out.bin of a model with graph ``outputs`` and ``layers`` (each layer's output
    tensor, in execution order) and a state region of ``state_bytes``, for a build with
    ``debug_layers`` (TC_DEBUG_LAYERS) and ``profile`` (TC_PROFILE)."""
    blocks: list[Block] = []
    if debug_layers:
        blocks += [_block(LAYER, k, t) for k, t in enumerate(layers)]
    blocks += [_block(OUTPUT, j, t) for j, t in enumerate(outputs)]
    if debug_layers and state_bytes > 0:
        blocks.append(Block(STATE, 0, "uint8", (state_bytes,)))
    if profile:
        blocks.append(Block(TICKS, 0, TICK, (len(layers) + 1,)))
    return Layout(tuple(blocks))


def plan_layers(p: Plan) -> list[Tensor]:
    """A plan's layers' output tensors in execution order (what ``tc_layer_hook`` is given)."""
    return [p.graph.t(p.lowering.ops[i].op.outputs[0]) for i in p.order]


def plan_out_layout(p: Plan, *, debug_layers: bool, profile: bool) -> Layout:
    """tc_out.bin of plan ``p``'s generated project, built as asked."""
    g = p.graph
    outs = [g.t(t) for t in g.outputs]
    return out_layout(
        outs, plan_layers(p), p.state_bytes, debug_layers=debug_layers, profile=profile
    )


def sample_count(head: bytes) -> int:
    """The sample count a tc_in.bin starts with (0 when shorter than the count)."""
    return COUNT.unpack_from(head)[0] if len(head) >= COUNT.size else 0
