"""Data-movement ops PyTorch graphs add and the quantizer leaves in QDQ form (or as int8 ops in
QOperator form): Split, Slice, Gather with constant indices, Squeeze / Unsqueeze, GlobalMaxPool.
Bytes move; a QDQ group whose QuantizeLinear has other parameters than its input is followed by
a requantization table (``Core.requant_after``), as onnxruntime computes it (in float, through
DQ -> op -> Q)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .onnx_core import NCHW_TO_NHWC, Core, attr_of
from .onnx_shapes import reshaped


def ir_axis(axis: int, rank: int) -> int:
    """An ONNX axis of a rank-``rank`` tensor as the IR's (4-D tensors are held NHWC)."""
    return NCHW_TO_NHWC.index(axis) if rank == 4 else axis


class Slices(Core):
    """Split, Slice, Gather, Squeeze, Unsqueeze, GlobalMaxPool node handlers."""

    def _axis(self, n: Any, rank: int, default: int = 0) -> int:
        axis = int(attr_of(n, "axis", default))
        if not -rank <= axis < rank:
            raise self.fail(f"axis {axis} is out of range for rank {rank}")
        return axis % rank

    def _ints(self, name: str, what: str) -> list[int]:
        return [int(v) for v in np.asarray(self.init(name, what)).reshape(-1)]

    def _int32(self, out: str, tag: str, values: list[int]) -> int:
        return self.tensor(f"{out}/{tag}", (len(values),), "int32",
                           data=np.array(values, np.int32))  # fmt: skip

    def _outs(self, n: Any) -> tuple[str, list[str]]:
        """Input and output names of a multi-output move (each QDQ output its own Q)."""
        src = n.input[0]
        if src in self.acts:
            return src, list(n.output)
        x = self._qdq_in(src)
        outs = []
        for k in range(len(n.output)):
            out, s, z, _ = self._qdq_out(_OneOutput(n, k))
            outs.append(self.requant_after(x, out, s, z))
        return x, outs

    def _Split(self, n: Any) -> None:
        x, outs = self._outs(n)
        a = self.acts[x]
        rank = len(a.onnx_shape)
        axis = self._axis(n, rank)
        dim = a.onnx_shape[axis]
        if len(n.input) > 1 and n.input[1]:
            sizes = self._ints(n.input[1], "split")
        elif attr_of(n, "split", None) is not None:
            sizes = [int(v) for v in attr_of(n, "split", [])]
        else:
            k = len(outs)
            sizes = [-(-dim // k)] * (k - 1)  # ceil, the last one takes the rest (opset 18)
            sizes.append(dim - sum(sizes))
        if len(sizes) != len(outs) or min(sizes) <= 0 or sum(sizes) != dim:
            raise self.fail(f"split sizes {sizes[:8]} do not cut an axis of {dim} in {len(outs)}")
        q = self.tensors[a.tid].quant
        tids = []
        for out, size in zip(outs, sizes, strict=True):
            shape = list(a.onnx_shape)
            shape[axis] = size
            tids.append(self.new_act(out, tuple(shape), q.scale, q.zero_point))
        sz = self._int32(outs[0], "sizes", sizes)
        ax = self._int32(outs[0], "axis", [ir_axis(axis, rank)])
        self.op("SPLIT_V", [a.tid, sz, ax], tids)

    def _Slice(self, n: Any) -> None:
        x, out = self._move_io(n)
        a = self.acts[x]
        shape = a.onnx_shape
        rank = len(shape)
        if len(n.input) < 3:  # opset < 10: attributes
            starts, ends = list(attr_of(n, "starts", [])), list(attr_of(n, "ends", []))
            axes = list(attr_of(n, "axes", range(len(starts))))
            steps = [1] * len(starts)
        else:
            starts, ends = self._ints(n.input[1], "starts"), self._ints(n.input[2], "ends")
            axes = self._ints(n.input[3], "axes") if len(n.input) > 3 and n.input[3] else None
            axes = axes if axes is not None else list(range(len(starts)))
            has_steps = len(n.input) > 4 and n.input[4]
            steps = self._ints(n.input[4], "steps") if has_steps else [1] * len(starts)
        if not len(starts) == len(ends) == len(axes) == len(steps):
            raise self.fail("starts, ends, axes and steps differ in length")
        ranges = [range(d) for d in shape]
        for s, e, ax, st in zip(starts, ends, axes, steps, strict=True):
            if not -rank <= ax < rank or st == 0:
                raise self.fail(f"axis {ax} / step {st} do not fit a rank-{rank} input")
            ranges[ax % rank] = range(*slice(s, e, st).indices(shape[ax % rank]))
        if any(len(r) == 0 for r in ranges):
            raise self.fail("the slice is empty")
        q = self.tensors[a.tid].quant
        o = self.new_act(out, tuple(len(r) for r in ranges), q.scale, q.zero_point)
        order = NCHW_TO_NHWC if rank == 4 else tuple(range(rank))
        ir = [ranges[d] for d in order]
        end_mask = sum(1 << d for d, r in enumerate(ir) if r.step < 0 and r.stop < 0)
        begin = self._int32(out, "begin", [r.start for r in ir])
        end = self._int32(out, "end", [r.stop for r in ir])
        step = self._int32(out, "strides", [r.step for r in ir])
        self.op("STRIDED_SLICE", [a.tid, begin, end, step], [o], begin_mask=0,
                end_mask=end_mask, ellipsis_mask=0, new_axis_mask=0, offset=0,
                shrink=0)  # fmt: skip

    def _Gather(self, n: Any) -> None:
        x, out = self._move_io(n)
        a = self.acts[x]
        rank = len(a.onnx_shape)
        axis = self._axis(n, rank)
        raw = np.asarray(self.init(n.input[1], "indices"))
        idx = raw.astype(np.int64) % a.onnx_shape[axis] if raw.size else raw.astype(np.int64)
        if raw.size and (raw.min() < -a.onnx_shape[axis] or raw.max() >= a.onnx_shape[axis]):
            raise self.fail(f"an index is outside the axis of {a.onnx_shape[axis]}")
        shape = (*a.onnx_shape[:axis], *idx.shape, *a.onnx_shape[axis + 1 :])
        if (rank == 4) != (len(shape) == 4):
            raise self.fail("a Gather that changes the rank to or from 4 is not supported")
        q = self.tensors[a.tid].quant
        o = self.new_act(out, shape, q.scale, q.zero_point)
        it = self.tensor(out + "/indices", idx.shape, "int32", data=idx.astype(np.int32))
        self.op("GATHER", [a.tid, it], [o], axis=ir_axis(axis, rank), batch_dims=0)

    def _Squeeze(self, n: Any) -> None:
        """Squeeze / Unsqueeze of a quantized tensor: a RESHAPE (bytes stay where they are)."""
        x, out = self._move_io(n)
        try:
            new = reshaped(n, self.acts[x].onnx_shape, self.init)
        except ValueError as e:
            raise self.fail(str(e)) from None
        self._reshape(x, out, new)

    _Unsqueeze = _Squeeze

    def _GlobalMaxPool(self, n: Any) -> None:
        x, out = self._move_io(n)
        a = self.acts[x]
        if len(a.onnx_shape) != 4:
            raise self.fail("only 2-D pooling (rank-4 tensors) is supported")
        nb, c, h, w = a.onnx_shape
        q = self.tensors[a.tid].quant
        o = self.new_act(out, (nb, c, 1, 1), q.scale, q.zero_point)
        self.op("MAX_POOL_2D", [a.tid], [o], padding="VALID", stride=(1, 1), filter=(h, w),
                activation="NONE")  # fmt: skip


class _OneOutput:
    """Node ``n`` seen as if output ``k`` were its only one (``Core._qdq_out`` reads
    ``output[0]``)."""

    def __init__(self, n: Any, k: int) -> None:
        self.output = [n.output[k]]
        self.op_type, self.name = n.op_type, n.name
