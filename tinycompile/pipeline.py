"""The compiler's one direction, in one function (``compile_graph``):

    graph (frontend) -> check (ir.problems, unsupported ops) -> passes (graph -> graph)
      -> prepare every op once -> plan (schedule, choices, offsets, streamed segment)
      -> prepare what the planner made (a STREAM op), once -> lower every op once -> Plan

The ``Plan`` it returns is what code generation (``codegen``), the fit verdict (``fit``), the
reports and the run harness read; it keeps the passes' graph and its prepared ops, so that
``fit.sram_advice`` can plan other ways without preparing anything again. Every problem of a
model is found in the same single pass over its ops (``problems``): the first is raised, saying
how many more there are.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .errors import CompileError
from .ir import Graph
from .ops import (
    DEFAULT_CHOICE,
    Choice,
    Lowering,
    PreparedOp,
    lower,
    prepare_ops,
    problems,
    unit_of,
)
from .passes import run_passes
from .planner import Placement
from .planner import plan as place
from .planner.allocator import Buffer, align


@dataclass
class LayerPlan:
    step: int
    op_index: int
    kind: str
    out_shape: tuple[int, ...]
    macs: int
    flash_bytes: int
    live_bytes: int
    scratch_bytes: int
    alias: bool


@dataclass
class Plan:
    """A compiled model: the planner's decisions and the lowering that follows them."""

    graph: Graph
    lowering: Lowering
    order: list[int]  # positions into lowering.ops (= prepared), in execution order
    buffers: list[Buffer]
    storage: dict[int, int]  # tensor id -> buffer id
    layers: list[LayerPlan]
    arena_bytes: int
    peak_bytes: int
    peak_step: int
    choices: dict[int, Choice]  # op index -> the planner's choice (absent: the default)
    state: dict[int, int] = field(default_factory=dict)  # variable tensor id -> state offset
    state_bytes: int = 0  # the state region: a static buffer of its own, never in the arena
    unstreamed_arena: int | None = None  # the arena without the streamed segment (if any)
    unstreamed: Graph | None = None  # the model's graph before streaming (if streamed)
    lean_arena: int | None = None  # the arena without the scratch bought for speed (if any)
    speed_ops: tuple[int, ...] = ()  # ops whose scratch was bought beyond the lean arena
    prepared: list[PreparedOp] = field(default_factory=list)  # ``graph``'s, as lowered
    model_prepared: list[PreparedOp] = field(default_factory=list)  # the passes' graph's

    @property
    def model_graph(self) -> Graph:
        """The graph after the passes, before any streaming rewrite."""
        return self.unstreamed or self.graph

    @property
    def flash_bytes(self) -> int:
        return self.lowering.flash_bytes

    @property
    def onnx_variant(self) -> bool:
        """Whether the kernels must carry the ONNX requantization variant: some layer (streamed
        ones included) is an ONNX one (firmware/include/tc_qmath.h TC_ONNX_VARIANT)."""
        kinds = {op.kind for op in self.model_graph.ops}
        return any(k.startswith("ONNX_") for k in kinds)

    @property
    def sram_bytes(self) -> int:
        """Arena plus state: the model's SRAM."""
        return self.arena_bytes + self.state_bytes

    def offset(self, tid: int) -> int:
        b = self.buffers[self.storage[tid]]
        return b.tensor_offset(b.offset, align(self.graph.t(tid).nbytes))

    def peak_layers(self) -> list[LayerPlan]:
        """The layers whose step reaches the peak of live bytes."""
        return [la for la in self.layers if la.live_bytes == self.peak_bytes]

    def in_place(self, op_index: int) -> bool:
        """Whether the planner runs op ``op_index``'s in-place variant."""
        return self.choices.get(op_index, DEFAULT_CHOICE).in_place


def all_problems(g: Graph) -> tuple[Graph, list[PreparedOp], list[CompileError]]:
    """Check ``g``, run the passes and prepare every op once: the passes' graph, its prepared
    ops and every problem found (graph-level ones before any op's and after, op problems in op
    order); with graph-level problems nothing is prepared (it would only add noise)."""
    found = problems(g)
    if found.graph_level:
        return g, [], found.head + sorted(found.by_op, key=_op_order) + found.tail
    passed = run_passes(g)
    prepared, by_op = prepare_ops(passed, found.bad)
    return passed, prepared, sorted(found.by_op + by_op, key=_op_order)


def _op_order(e: CompileError) -> int:
    return e.op_index or 0


def check_graph(g: Graph) -> list[CompileError]:
    """Every problem of a graph at once (empty when it can be planned); ``g`` is not changed."""
    return all_problems(g)[2]


def front(g: Graph) -> tuple[Graph, list[PreparedOp]]:
    """The passes' graph and its prepared ops, or the first problem raised (saying how many
    more there are: `tinycompile check` lists them all)."""
    passed, prepared, found = all_problems(g)
    if found:
        first = found[0]
        more = len(found) - 1
        reason = first.reason
        if more:
            s = "s" if more > 1 else ""
            reason += f" (and {more} more problem{s}: `tinycompile check` lists them all)"
        raise type(first)(
            reason, source=g.source or None, op_index=first.op_index, op_kind=first.op_kind
        )
    return passed, prepared


def compile_graph(
    g: Graph,
    *,
    reorder: bool = True,
    choices: dict[int, Choice] | None = None,
    search: bool = True,
    stream: str | int = "off",
    budget: int | None = None,
    speed: int | None = 0,
) -> Plan:
    """The whole way from a graph to its plan and lowering (see the module docstring; the
    planner's options: ``planner.plan``). ``g`` is not changed."""
    passed, prepared = front(g)
    try:
        pl = place(
            passed,
            prepared,
            reorder=reorder,
            choices=choices,
            search=search,
            stream=stream,
            budget=budget,
            speed=speed,
        )
        return finish(pl, prepared)
    except CompileError as e:
        raise e.at(source=g.source or None) from None


def finish(pl: Placement, model_prepared: list[PreparedOp]) -> Plan:
    """Prepare the ops the planner made (once), lower every op (once) under the planner's
    choices, and describe the placed layout per layer."""
    prepared = list(pl.prepared)
    for i in pl.to_prepare:
        stand_in = prepared[i]
        d = stand_in.unit.prepare(stand_in.op, pl.graph)
        if (d.workspace, d.scratch, d.in_place_scratch) != (
            stand_in.data.workspace,
            stand_in.data.scratch,
            stand_in.data.in_place_scratch,
        ):
            raise RuntimeError(f"op {stand_in.op.index} asks for other memory than was planned")
        prepared[i] = PreparedOp(stand_in.op, stand_in.unit, d)
    g, lay = pl.graph, pl.layout
    low = lower(g, prepared, pl.choices)
    layers = []
    for s, (i, st) in enumerate(zip(lay.order, lay.steps, strict=True)):
        lo = low.ops[i]
        layers.append(
            LayerPlan(
                s,
                st.op.index,
                st.op.kind,
                g.t(st.op.outputs[0]).shape,
                st.macs,
                lo.flash_bytes,
                lay.live[s],
                lo.scratch_bytes,
                st.alias,
            )
        )
    peak = lay.peak_bytes
    return Plan(
        g,
        low,
        lay.order,
        lay.buffers,
        lay.storage,
        layers,
        lay.arena_bytes,
        peak,
        lay.live.index(peak) if lay.live else 0,
        pl.choices,
        pl.state,
        pl.state_bytes,
        pl.unstreamed_arena,
        pl.unstreamed,
        pl.lean_arena,
        pl.speed_ops,
        prepared,
        model_prepared,
    )


def _units_only(g: Graph) -> tuple[Graph, list[PreparedOp]]:
    """The passes and each op's preparation, without the graph-level checks: what one unit
    says of an op, even in a made-up graph that ``problems`` would refuse first (the first of
    the units' problems raised)."""
    for op in g.ops:
        unit_of(op)  # an unsupported kind is refused by name
    passed = run_passes(g)
    prepared, found = prepare_ops(passed)
    if found:
        raise min(found, key=_op_order)
    return passed, prepared


def prepare_graph(g: Graph) -> list[PreparedOp]:
    """The prepared ops of ``g`` after the passes (tests of units and tools)."""
    return _units_only(g)[1]


def lower_graph(g: Graph, choices: dict[int, Choice] | None = None) -> Lowering:
    """``g`` lowered op by op in model order under ``choices``, without planning (tests of one
    operator's preparation and lowering)."""
    passed, prepared = _units_only(g)
    return lower(passed, prepared, choices)
