"""Buffer requests from a schedule: which tensors share a buffer, and when each buffer lives.

A buffer lives from the step writing it to the last step reading it (graph inputs from step 0,
graph outputs to the end); an op's inputs, outputs and scratch coexist at its step. Variable
tensors (state) get no buffer here: they live in the state region (``plan.state_region``). Tensors
share a buffer (cost nothing extra) when:

- the op is an alias (reshape): its output is its input's bytes;
- the op is elementwise (activations, ADD, MUL, ...) and its output is as large as input 0,
  which dies at this step;
- the planner chose the op's in-place variant (convolutions, see ``ops.Choice``) and input 0
  dies here: the shared buffer grows to the larger tensor from this step on, downwards (the
  tensors of a grown buffer end together: an expanding pointwise layer's output starts below
  its input, so the bytes below the input serve other buffers until then). Only ops whose
  kernels run with output and input ending together (``Prepared.in_place_shifts``) share a
  grown buffer with another size;
- the op writes a narrower output over the start of its dying input (``Prepared.
  in_place_shrinks``: a float input's QUANTIZE): the buffer shrinks to the output from the
  next step on, and takes no larger tensor afterwards;
- the op writes a wider output over its dying input from the same first byte (``Prepared.
  in_place_grows``: an output's DEQUANTIZE to float): the buffer grows upwards from this step
  (its tensors start together), where it had neither grown downwards nor shrunk.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import Graph, Op
from .allocator import Buffer, align


@dataclass(frozen=True)
class Step:
    """One scheduled op as the planner sees it."""

    op: Op
    scratch: int  # arena scratch at this step, under the op's choice
    alias: bool
    elementwise: bool
    in_place: bool  # the op's in-place variant was chosen
    macs: int
    shifts: bool = False  # its in-place variant also runs end-aligned (``Prepared``)
    shrinks: bool = False  # its narrower output may start on input 0 (``Prepared``)
    grows: bool = False  # its wider output may start on input 0 (``Prepared``)


@dataclass
class Lifetimes:
    buffers: list[Buffer]
    storage: dict[int, int]  # tensor id -> buffer id


def last_uses(g: Graph, steps: list[Step]) -> dict[int, int]:
    """Tensor id -> last step reading it (graph outputs: the last step)."""
    last: dict[int, int] = {}
    for s, st in enumerate(steps):
        for tid in st.op.inputs:
            if tid >= 0 and not g.t(tid).is_const and not g.t(tid).variable:
                last[tid] = s
    for tid in g.outputs:
        last[tid] = max(len(steps) - 1, 0)
    return last


def lifetimes(g: Graph, steps: list[Step]) -> Lifetimes:
    """Buffers (with sizes, first and last steps) for the activations and scratch of a
    schedule."""
    last_use = last_uses(g, steps)
    buffers: list[Buffer] = []
    storage: dict[int, int] = {}

    def new_buffer(tid: int, first: int) -> None:
        last = max(first, last_use.get(tid, first))
        buffers.append(Buffer(len(buffers), align(g.t(tid).nbytes), first, last, [tid]))
        storage[tid] = buffers[-1].id

    fixed: set[int] = set()  # buffers that shrank while growing upwards: they never grow down
    shrunk: set[int] = set()  # buffers that shrank with their tensor: they never grow again

    def join(tid: int, bid: int, step: int) -> None:
        b = buffers[bid]
        b.tensors.append(tid)
        b.last = max(b.last, last_use.get(tid, b.last))
        size = align(g.t(tid).nbytes)
        if size > b.nbytes:  # in place onto a smaller input: grow (downwards) from this step on
            if not b.grow:
                b.grow.append((b.first, b.nbytes))
            b.grow.append((step, size))
            b.nbytes = size
            b.down = True
        elif size < b.nbytes and not b.down:
            fixed.add(bid)  # its tensors start together: moving them to end together would
            # break the op that shrank here
        storage[tid] = bid

    def resize(tid: int, bid: int, at: int) -> None:
        """``tid`` joins buffer ``bid`` at its start, the buffer taking its size from step
        ``at`` on (a narrower output's QUANTIZE, a wider output's DEQUANTIZE)."""
        b = buffers[bid]
        size = align(g.t(tid).nbytes)
        if not b.grow:
            b.grow.append((b.first, b.nbytes))
        b.grow.append((at, size))
        b.nbytes = max(b.nbytes, size)
        b.tensors.append(tid)
        b.last = max(b.last, last_use.get(tid, b.last))
        storage[tid] = bid

    def can_join(tid: int, src: int, shifts: bool, step: int) -> bool:
        """Whether an in-place op's output may share its input's buffer. Tensors of a buffer
        grown downwards end together (8-byte aligned), of any other start together. An op whose
        kernel needs output and input to start together (the k x k ring) cannot shrink a
        tensor in a grown buffer; an expanding op cannot grow a buffer that shrank (its tensors
        would move); and a pointwise layer shares only where one of its kernels' walks is safe
        at the resulting offset (``pw_walk_ok``)."""
        b = buffers[storage[src]]
        size, in_size = align(g.t(tid).nbytes), align(g.t(src).nbytes)
        if b.id in shrunk and size > b.size_at(step):
            return False
        if size > b.nbytes and (not shifts or b.id in fixed):
            return False
        if size != in_size and not shifts and b.down:
            return False
        if not shifts or size == in_size:
            return True
        down = b.down or size > b.nbytes
        c, oc = g.t(src).shape[-1], g.t(tid).shape[-1]
        return pw_walk_ok(size - in_size if down else 0, g.t(src).size // max(c, 1), c, oc)

    def dies_here(b: Buffer, step: int) -> bool:
        return all(last_use.get(t, -1) <= step and t not in g.outputs for t in b.tensors)

    for tid in g.inputs:
        new_buffer(tid, 0)
    for s, st in enumerate(steps):
        op = st.op
        src = op.inputs[0] if op.inputs else -1
        src_live = src >= 0 and src in storage
        for k, tid in enumerate(op.outputs):
            same = src_live and g.t(src).nbytes == g.t(tid).nbytes
            if k == 0 and st.alias and same:
                join(tid, storage[src], s)
                continue
            shares = (st.elementwise and same) or (
                st.in_place and src_live and can_join(tid, src, st.shifts, s)
            )
            if k == 0 and shares and dies_here(buffers[storage[src]], s):
                join(tid, storage[src], s)
                continue
            b = buffers[storage[src]] if src_live else None
            if (
                k == 0
                and st.shrinks
                and b is not None
                and not b.down
                and len(b.tensors) == 1
                and g.t(tid).nbytes < g.t(src).nbytes
                and dies_here(b, s)
            ):
                resize(tid, b.id, s + 1)
                shrunk.add(b.id)
                continue
            if (
                k == 0
                and st.grows
                and b is not None
                and not b.down
                and b.id not in shrunk
                and align(g.t(tid).nbytes) > b.nbytes
                and dies_here(b, s)
            ):
                resize(tid, b.id, s)
                fixed.add(b.id)  # its tensors start together: it never grows downwards now
                continue
            new_buffer(tid, s)
        if st.scratch:
            buffers.append(Buffer(len(buffers), align(st.scratch), s, s, [], scratch_of=op.index))
    return Lifetimes(buffers, storage)


def pw_walk_ok(d: int, n: int, c: int, oc: int) -> bool:
    """The in-place pointwise kernels' contract (tc_pw_forward in tc_kernel_util.h, d the input's
    offset from the output in bytes, n pixels of c input and oc output channels): pixels run
    forwards when no output ever reaches input still unread, else backwards; one of the two
    must be safe. (Alignment can shift an expanding layer's input a few bytes off the exact
    n * (oc - c): then it may be neither.)"""
    if n <= 1:
        return True
    forward = d >= 0 and (oc <= c or d >= (n - 1) * (oc - c))
    backward = d <= min(oc - c, (n - 1) * (oc - c))
    return forward or backward


def input_dies(g: Graph, steps: list[Step], lt: Lifetimes, step: int) -> bool:
    """Whether input 0 of the op at ``step`` is read by no later step and is no graph output."""
    src = steps[step].op.inputs[0]
    if src not in lt.storage:
        return False
    b = lt.buffers[lt.storage[src]]
    return b.last == step and not set(g.outputs).intersection(b.tensors)
