"""Data-movement ops of the ONNX reader: int8 MaxPool, Flatten, Reshape, Transpose, Pad and
nearest Resize, in QOperator form (int8 in and out) or as DQ -> op -> Q with equal parameters
(which onnxruntime runs on int8). Nothing is requantized."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .onnx_core import NCHW_TO_NHWC, Core, as_text, attr_of
from .onnx_model import plain


class Moves(Core):
    """The data-movement node handlers."""

    def _move_io(self, n: Any) -> tuple[str, str]:
        """Input and output names of an int8 data-movement node (QOperator: int8 in and out;
        QDQ: DQ -> op -> Q with the same parameters, which onnxruntime runs on int8). A QDQ
        group whose Q has other parameters than its DQ is the move, then Q(DQ(x)) with the new
        parameters (``requant_after``: onnxruntime runs it in float, and every move here
        commutes with that monotone map)."""
        src = n.input[0]
        if src in self.acts:
            return src, n.output[0]
        x = self._qdq_in(src)
        out, s, z, _ = self._qdq_out(n)
        return x, self.requant_after(x, out, s, z)

    def _MaxPool(self, n: Any) -> None:
        x, out = self._move_io(n)
        a = self.acts[x]
        if len(a.onnx_shape) != 4:
            raise self.fail("only 2-D pooling (rank-4 tensors) is supported")
        if len(n.output) > 1 or attr_of(n, "ceil_mode", 0) or attr_of(n, "storage_order", 0):
            raise self.fail("MaxPool with indices, ceil_mode or storage_order is not supported")
        if any(d != 1 for d in attr_of(n, "dilations", [1, 1])):
            raise self.fail("dilated MaxPool is not supported")
        if attr_of(n, "auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
            raise self.fail("auto_pad is not supported (explicit pads only)")
        kh, kw = attr_of(n, "kernel_shape", None) or [0, 0]
        sh, sw = attr_of(n, "strides", [1, 1])
        pads = list(attr_of(n, "pads", [0, 0, 0, 0]))
        nb, c, h, w = a.onnx_shape
        oh = (h + pads[0] + pads[2] - kh) // sh + 1
        ow = (w + pads[1] + pads[3] - kw) // sw + 1
        padding = _tflite_padding(h, w, kh, kw, sh, sw, pads, oh, ow)
        if padding is None:
            raise self.fail(f"MaxPool pads {pads} are neither VALID nor SAME-like")
        q = self.tensors[a.tid].quant
        o = self.new_act(out, (nb, c, oh, ow), q.scale, q.zero_point)
        self.op("MAX_POOL_2D", [a.tid], [o], padding=padding, stride=(sh, sw), filter=(kh, kw),
                activation="NONE")  # fmt: skip

    def _Flatten(self, n: Any) -> None:
        x, out = self._move_io(n)
        shape = self.acts[x].onnx_shape
        axis = attr_of(n, "axis", 1) % max(len(shape), 1)
        rows = int(np.prod(shape[:axis], dtype=np.int64))
        self._reshape(x, out, (rows, int(np.prod(shape, dtype=np.int64)) // rows))

    def _Reshape(self, n: Any) -> None:
        x, out = self._move_io(n)
        shape = self.acts[x].onnx_shape
        want = [int(v) for v in self.init(n.input[1], "shape").reshape(-1)]
        if want.count(-1) > 1 or any(v < -1 or (v == 0 and i >= len(shape))
                                     for i, v in enumerate(want)):  # fmt: skip
            raise self.fail(f"shape {want[:8]} is not a valid Reshape target")
        want = [shape[i] if v == 0 else v for i, v in enumerate(want)]
        if -1 in want:
            known = math.prod(v for v in want if v != -1)
            if not 0 < known <= math.prod(shape):
                raise self.fail(f"cannot reshape {list(shape)} into {want[:8]}")
            want[want.index(-1)] = math.prod(shape) // known
        self._reshape(x, out, tuple(want))

    def _reshape(self, x: str, out: str, new: tuple[int, ...]) -> None:
        a = self.acts[x]
        q = self.tensors[a.tid].quant
        src = a.tid
        if len(a.onnx_shape) == 4 and a.onnx_shape[2] * a.onnx_shape[3] != 1:
            # NHWC bytes in NCHW order first, then the reshape
            nchw = self.tensor(out + "/nchw", a.onnx_shape, "int8", q)
            perm = self.tensor(out + "/perm", (4,), "int32", data=np.array([0, 3, 1, 2], np.int32))
            self.op("TRANSPOSE", [src, perm], [nchw])
            src = nchw
        if len(new) == 4 and new[2] * new[3] != 1:
            raise self.fail("a reshape into a 4-D tensor with spatial dimensions is not supported")
        if int(np.prod(new, dtype=np.int64)) != self.tensors[src].size:
            raise self.fail(f"cannot reshape {list(a.onnx_shape)} into {list(new)}")
        o = self.new_act(out, new, q.scale, q.zero_point)
        shape = self.tensor(out + "/shape", (len(new),), "int32",
                            data=np.array(self.tensors[o].shape, np.int32))  # fmt: skip
        self.op("RESHAPE", [src, shape], [o])

    def _Transpose(self, n: Any) -> None:
        x, out = self._move_io(n)
        a = self.acts[x]
        rank = len(a.onnx_shape)
        perm = [int(p) for p in attr_of(n, "perm", list(range(rank))[::-1])]
        q = self.tensors[a.tid].quant
        o = self.new_act(out, tuple(a.onnx_shape[p] for p in perm), q.scale, q.zero_point)
        if rank == 4:  # both sides NHWC in the IR: compose with the layout changes
            perm = [NCHW_TO_NHWC.index(perm[NCHW_TO_NHWC[i]]) for i in range(4)]
        pt = self.tensor(out + "/perm", (rank,), "int32", data=np.array(perm, np.int32))
        self.op("TRANSPOSE", [a.tid, pt], [o])

    def _Resize(self, n: Any) -> None:
        """Nearest-mode Resize of height and width (int8 in onnxruntime: bytes move)."""
        x, out = self._move_io(n)
        a = self.acts[x]
        mode = as_text(attr_of(n, "mode", "nearest"))
        if mode != "nearest":
            raise self.fail(f"Resize mode {plain(mode)} is not supported (nearest only)")
        ins = list(n.input) + [""] * (4 - len(n.input))
        # the op's unit names them when it refuses them: printable text only
        ctm = plain(as_text(attr_of(n, "coordinate_transformation_mode", "half_pixel")))
        near = plain(as_text(attr_of(n, "nearest_mode", "round_prefer_floor")))
        if next(o.version for o in self.model.opset_import if o.domain in ("", "ai.onnx")) < 11:
            # Resize-10: (X, scales), asymmetric coordinates and its own rounding
            ctm, near, ins = "asymmetric", "simple", [ins[0], "", ins[1], ""]
        if attr_of(n, "antialias", 0) or attr_of(n, "axes", None) is not None:
            raise self.fail("Resize with antialias or axes is not supported")
        if as_text(attr_of(n, "keep_aspect_ratio_policy", "stretch")) != "stretch":
            raise self.fail("keep_aspect_ratio_policy is not supported")
        if len(a.onnx_shape) != 4:
            raise self.fail("only 4-D (NCHW) Resize is supported")
        if ins[3]:
            sizes = [int(v) for v in self.init(ins[3], "sizes").reshape(-1)]
            if len(sizes) != 4:
                raise self.fail("sizes must have 4 values")
            scales = [
                float(np.float32(o) / np.float32(i))
                for o, i in zip(sizes, a.onnx_shape, strict=True)
            ]
        elif ins[2]:
            scales = [float(v) for v in self.init(ins[2], "scales").reshape(-1)]
            if len(scales) != 4 or not all(math.isfinite(v) and v > 0 for v in scales):
                raise self.fail("scales must be 4 positive finite values")
            sizes = [
                int(np.floor(d * np.float32(s))) for d, s in zip(a.onnx_shape, scales, strict=True)
            ]
        else:
            raise self.fail("Resize needs constant scales or sizes")
        if sizes[:2] != list(a.onnx_shape[:2]):
            raise self.fail("only height and width may be resized")
        q = self.tensors[a.tid].quant
        o = self.new_act(out, tuple(sizes), q.scale, q.zero_point)
        self.op("ONNX_RESIZE_NEAREST", [a.tid], [o], coordinate_mode=ctm, nearest_mode=near,
                scales=(scales[2], scales[3]))  # fmt: skip

    def _Pad(self, n: Any) -> None:
        """Constant-mode Pad whose value is the zero point (the quantizer's form): PAD."""
        qdq = n.input[0] not in self.acts
        x, out = self._move_io(n)
        a = self.acts[x]
        q = self.tensors[a.tid].quant
        mode = attr_of(n, "mode", b"constant")
        if mode not in (b"constant", "constant"):
            raise self.fail(f"Pad mode {plain(str(mode))} is not supported (constant only)")
        if len(n.input) > 3 and n.input[3]:
            raise self.fail("Pad with axes is not supported")
        if len(n.input) > 2 and n.input[2]:
            v = self.init(n.input[2], "constant value").reshape(-1)[0]
            if (
                qdq
                and float(v) != 0.0
                or not qdq
                and int(v) - (128 if v.dtype == np.uint8 else 0) != q.zp
            ):
                raise self.fail("Pad value other than zero (the zero point) is not supported")
        pads = [int(p) for p in self.init(n.input[1], "pads").reshape(-1)]
        rank = len(a.onnx_shape)
        if len(pads) != 2 * rank or min(pads) < 0:
            raise self.fail(f"pads {pads} do not fit a rank-{rank} input")
        pairs = [(pads[d], pads[d + rank]) for d in range(rank)]
        shape = tuple(a.onnx_shape[d] + b + e for d, (b, e) in enumerate(pairs))
        if rank == 4:
            pairs = [pairs[d] for d in NCHW_TO_NHWC]
        o = self.new_act(out, shape, q.scale, q.zero_point)
        pt = self.tensor(out + "/pads", (rank, 2), "int32", data=np.array(pairs, np.int32))
        self.op("PAD", [a.tid, pt], [o])


def _tflite_padding(h: int, w: int, kh: int, kw: int, sh: int, sw: int, pads: list[int],
                    oh: int, ow: int) -> str | None:  # fmt: skip
    """The TFLite padding that computes the same windows as ONNX's explicit pads (pooling
    skips padded taps in both), or None."""
    if not any(pads):
        return "VALID"
    same = []
    for size, k, s, o in ((h, kh, sh, oh), (w, kw, sw, ow)):
        if o != (size + s - 1) // s:
            return None
        total = max((o - 1) * s + k - size, 0)
        same += [total // 2, total - total // 2]
    if [pads[0], pads[2], pads[1], pads[3]] == same:
        return "SAME"
    return None
