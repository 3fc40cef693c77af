"""In-place convolutions (TinyEngine-style): output written over the dying input's arena bytes.

Every in-place candidate of a model (an op whose prepared data offers ``in_place_scratch``) is
forced to run in place (``Choice(in_place=True)``, no policy search); the planner must then give
output and input one buffer wherever the input dies at that op, and the generated C must stay
bit-exact with TFLM on every layer (host, and the ARMv6-M / DSP builds in QEMU). Models: the
whole test models, the conv op models with candidates, and the edge cases of
``python -m tests.modelgen.inplace`` (tests/models/inplace/).
"""

from __future__ import annotations

import copy
import tempfile
from pathlib import Path

import numpy as np
import pytest

from tinycompile import api
from tinycompile.errors import CompileError
from tinycompile.frontend import load_model
from tinycompile.ir import Graph, Op
from tinycompile.ops import Choice
from tinycompile.pipeline import Plan, prepare_graph
from tinycompile.pipeline import compile_graph as make_plan
from tinycompile.pipeline import lower_graph as lower
from tinycompile.run.reference import run_tflm

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "tests" / "models"
IP_DIR = MODELS / "inplace"
WHOLE = [MODELS / f"{m}.tflite" for m in ("kws_dscnn", "vww_mobilenet", "ic_resnet8")]
IP_MODELS = sorted(IP_DIR.glob("*.tflite"))
# op models of tests/models/ops with candidates (dwconv_nobias: TFLM crashes, see its own test)
OP_MODELS = [
    MODELS / "ops" / f"{m}.tflite"
    for m in (
        "conv_pointwise",
        "conv_5x5",
        "conv_wide_direct",
        "dwconv_same_relu6",
        "dwconv_pertensor",
        "dwconv_nobias_ref",
    )
]

# TFLM's own activation arena ("head" of benchmarks/tflm_arena.py) for the whole models, and
# the arena api.plan reaches with in-place convolutions (16000 and 49152 without)
TFLM_HEAD = {"kws_dscnn": 16000, "vww_mobilenet": 73728, "ic_resnet8": 49152}
INPLACE_ARENA = {"kws_dscnn": 8576, "ic_resnet8": 33312, "vww_mobilenet": 46136}


# ------------------------------------------------------------------------------- helpers


IN_PLACE = Choice(in_place=True)
IN_PLACE_ONLY = Choice(in_place=True, use_scratch=False)  # the temp, no column buffer


def inplace_scratch(op: Op, g: Graph) -> int:
    """The temporary the op's in-place variant needs."""
    (d,) = [p.data for p in prepare_graph(g) if p.op.index == op.index]
    assert d.in_place_scratch is not None
    return d.in_place_scratch


def _candidates(g: Graph) -> list[Op]:
    return [p.op for p in prepare_graph(g) if p.data.in_place_scratch is not None]


def _forced(path: Path, column: bool = True) -> tuple[Plan, list[Op]]:
    """Plan of ``path`` with every in-place candidate asked to run in place (no search), with
    its optional column buffer or (``column`` False) without."""
    g = load_model(path)
    cands = _candidates(g)
    c = IN_PLACE if column else IN_PLACE_ONLY
    return make_plan(g, choices={op.index: c for op in cands}, search=False), cands


def _input_dies(p: Plan, op: Op) -> bool:
    """Input 0 of ``op`` is read by no later step and is no graph output (computed here, not
    asked of the planner)."""
    g = p.graph
    steps = [p.lowering.ops[i].op for i in p.order]
    s = next(k for k, o in enumerate(steps) if o.index == op.index)
    src = op.inputs[0]
    return src not in g.outputs and all(src not in o.inputs for o in steps[s + 1 :])


def _check_placement(p: Plan, cands: list[Op]) -> list[int]:
    """Candidates whose input dies share one buffer with their output, starting at one offset
    or (an expanding pointwise layer, whose buffer grows downwards) ending at one, any temp
    clear of it; the others have separate buffers. Returns the op indices run in place."""
    shared = []
    for op in cands:
        src, dst = op.inputs[0], op.outputs[0]
        if _input_dies(p, op):
            assert p.storage[src] == p.storage[dst], f"op {op.index}: not placed in place"
            b = p.buffers[p.storage[src]]
            ns, nd = _aligned(p.graph.t(src).nbytes), _aligned(p.graph.t(dst).nbytes)
            if b.down:
                assert p.offset(src) + ns == p.offset(dst) + nd == b.offset + b.nbytes
            else:
                assert p.offset(src) == p.offset(dst) == b.offset
            need = max(ns, nd)
            tmp = [x for x in p.buffers if x.scratch_of == op.index]
            want = inplace_scratch(op, p.graph)  # 0: tc_conv_pw_s8 runs without a temp
            assert len(tmp) == (want > 0) and all(x.nbytes >= want for x in tmp)
            for t in tmp:  # what the shared buffer occupies at this op's step
                size = b.size_at(t.first)
                assert size >= need, f"op {op.index}: shared buffer of {size} < {need}"
                lo = b.offset + b.nbytes - size if b.down else b.offset
                assert t.offset + t.nbytes <= lo or lo + size <= t.offset
            shared.append(op.index)
        else:
            assert p.storage[src] != p.storage[dst], f"op {op.index}: live input overwritten"
    return shared


def _layers_vs_tflm(path: Path, p: Plan, res: api.RunResult, xs: list[np.ndarray]) -> None:
    g = p.graph
    steps = [p.lowering.ops[i].op for i in p.order]
    ref = run_tflm(path, xs, tensor_ids=[op.outputs[0] for op in steps], n_outputs=len(g.outputs))
    for k, op in enumerate(steps):
        want = np.stack([s[op.outputs[0]].reshape(-1) for s in ref.tensors])
        got = res.layers[k].reshape(want.shape)
        bad = int(np.count_nonzero(got != want))
        assert bad == 0, f"layer {k} op {op.index} {op.kind}: {bad} bytes differ from TFLM"
    for a, b in zip(res.outputs, ref.outputs, strict=True):
        np.testing.assert_array_equal(a, b.reshape(a.shape))


def _aligned(n: int) -> int:
    return (n + 7) // 8 * 8


def _run_forced(
    path: Path, tmp_path: Path, board: str = "host", n: int = 10, column: bool = True
) -> list[int]:
    p, cands = _forced(path, column)
    shared = _check_placement(p, cands)
    xs = api.make_inputs(p.graph, n, seed=5)
    project = api.generate(p, tmp_path / "project")
    text = (project / "model" / "tc_model.c").read_text()
    for i in shared:  # the kernel sees both tensors where the plan put them (one buffer)
        op = next(o for o in p.graph.ops if o.index == i)
        for tid in (op.inputs[0], op.outputs[0]):
            assert f"#define TC_T{tid} (tc_arena + {p.offset(tid)})" in text
    if board == "host":
        res = api.run_host(p, project, xs, debug_layers=True)
    else:
        res = api.run_board(p, project, board, xs, debug_layers=True)
    _layers_vs_tflm(path, p, res, xs)
    return shared


# ------------------------------------------------------------------------- candidates


def test_models_present() -> None:
    names = {p.stem for p in IP_MODELS}
    want = {
        "pw_expand_odd", "pw_equal", "pw_shrink_odd", "conv_dil2_equal", "conv_asym_shrink",
        "conv_even4x4", "conv_even2x2", "conv_kernel_gt_image", "dw_dil_asym", "dw_1x5",
        "dw_5x1_relu6", "dw_even2x2", "dw_kernel_gt_image", "dw_1x1_valid", "chain_dscnn",
        "chain_residual",
    }  # fmt: skip
    missing = want - names
    assert not missing, f"run python -m tests.modelgen.inplace ({sorted(missing)} missing)"


def test_candidates_of_whole_models() -> None:
    """Pointwise and stride-1 depthwise layers of the DS-CNN and MobileNet; ResNet-8's 3x3
    stride-1 convolutions with as many output as input channels (not the first, 3 -> 16, nor
    the stride-2 ones)."""
    want = {
        "kws_dscnn": list(range(1, 9)),
        "vww_mobilenet": [1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22]
        + [24, 25, 26],
        "ic_resnet8": [1, 2, 5, 9],
    }
    for path in WHOLE:
        g = load_model(path)
        assert [op.index for op in _candidates(g)] == want[path.stem]


def test_non_candidates() -> None:
    """Stride 2, depth multiplier > 1, groups, k x k with more output than input channels,
    a smaller (VALID) output and FULLY_CONNECTED are refused."""
    for name in (
        "conv_1x1_s2",
        "conv_valid_s2",
        "conv_grouped",
        "conv_same_relu",  # 3 -> 8 channels, 3x3
        "conv_dil_asym_valid",
        "dwconv_valid_s2_dm2",
        "dwconv_dil2_dm3",
        "dwconv_5x5_s2_relu",
        "dwconv_asym",  # stride (1, 2)
        "fc_perchannel_relu",
        "add_same",
    ):
        g = load_model(MODELS / "ops" / f"{name}.tflite")
        assert not _candidates(g), name


def test_lowering_of_inplace_ops() -> None:
    """In place: params carry inplace = 1 and the temp at the start of the op's scratch; a
    column buffer, when the choice takes it, follows the temp (8-byte aligned)."""
    g = load_model(IP_DIR / "conv_dil2_equal.tflite")
    (op,) = g.ops
    # out of place the scratch is the column: 54-value windows over 6 channels, 14 groups of
    # four, 16 bytes each, plus a 56-byte int8 staging copy (6 channels: not a multiple of 4)
    col = 14 * 16 + 14 * 4
    assert lower(copy.deepcopy(g)).ops[0].scratch_bytes == col
    low = lower(copy.deepcopy(g), choices={op.index: IN_PLACE_ONLY})
    (ps,) = low.params
    assert ps.fields["inplace"] == 1 and ps.fields["col"] == "0"
    assert ps.fields["tmp"] == f"(int8_t *)TC_SCRATCH{op.index}"
    # 9x8 image, 3x3 dilation 2: pad 2 / 2, a ring of 2 * 8 + 2 + 1 pixels of 6 channels
    assert low.ops[0].scratch_bytes == inplace_scratch(op, g) == 19 * 6
    low = lower(g, choices={op.index: IN_PLACE})
    (ps,) = low.params
    assert ps.fields["col"] == f"((int8_t *)TC_SCRATCH{op.index} + 120)"  # 114 rounded to 8
    assert low.ops[0].scratch_bytes == 120 + col
    sizes = {
        "pw_expand_odd": 0,  # few input channels: tc_conv_pw_s8, no temp (ops/pwf.py)
        "dw_dil_asym": 4 * (2 * 9 + 3 + 1),  # a ring of 4-channel slots, pad (2, 3)
        "dw_even2x2": 4,  # padding only after: each input pixel's last reader is its own
        "dw_kernel_gt_image": 4 * 3 * 4,  # the whole plane (of a block of four channels)
        "conv_kernel_gt_image": 3 * 4 * 4,
    }
    for name, want in sizes.items():
        g = load_model(IP_DIR / f"{name}.tflite")
        assert lower(g, choices={0: IN_PLACE_ONLY}).ops[0].scratch_bytes == want, name


def test_inplace_ignores_no_scratch() -> None:
    """The in-place temp is needed: refusing the optional scratch (im2col) keeps it."""
    g = load_model(IP_DIR / "conv_asym_shrink.tflite")
    choice = Choice(in_place=True, use_scratch=False)
    assert lower(g, choices={0: choice}).ops[0].scratch_bytes == inplace_scratch(g.ops[0], g) > 0


def test_inplace_on_non_candidate_is_refused() -> None:
    """The planner overlaps input and output of an ``inplace`` op: an op whose kernel cannot
    run so must fail to lower rather than compute garbage."""
    g = load_model(MODELS / "ops" / "dwconv_valid_s2_dm2.tflite")
    with pytest.raises(CompileError, match="in place"):
        lower(g, choices={0: IN_PLACE})


# ------------------------------------------------------------------- bit-exact, host


@pytest.mark.parametrize("path", WHOLE, ids=lambda p: p.stem)
def test_whole_model_forced_inplace(path: Path, tmp_path: Path) -> None:
    shared = _run_forced(path, tmp_path)
    g = load_model(path)
    want = [op.index for op in _candidates(g)]
    if path.stem == "ic_resnet8":
        want.remove(1)  # its input is the block's skip connection, read again by the ADD
    assert shared == want


@pytest.mark.parametrize("path", OP_MODELS + IP_MODELS, ids=lambda p: p.stem)
def test_op_model_forced_inplace(path: Path, tmp_path: Path) -> None:
    shared = _run_forced(path, tmp_path)
    if path.stem == "chain_residual":
        # the depthwise and the second pointwise read tensors an ADD reads later: not shared
        assert shared == [0, 2]
    else:
        assert shared, "no op ran in place"


def test_dwconv_without_bias_inplace(tmp_path: Path) -> None:
    """Border pixels of a bias-less depthwise in place use a zero bias (TFLM crashes on the
    model itself: compared with its zero-bias twin)."""
    p, cands = _forced(MODELS / "ops" / "dwconv_nobias.tflite")
    assert _check_placement(p, cands) == [0]
    xs = api.make_inputs(p.graph, 10, seed=6)
    res = api.run_host(p, api.generate(p, tmp_path / "project"), xs)
    ref = run_tflm(MODELS / "ops" / "dwconv_nobias_ref.tflite", xs, n_outputs=1)
    np.testing.assert_array_equal(res.outputs[0], ref.outputs[0].reshape(res.outputs[0].shape))


# -------------------------------------------------------------------- the SRAM it saves


def test_plan_goes_below_tflm() -> None:
    """api.plan keeps in place where it shrinks the arena: the DS-CNN and ResNet-8 then need
    about a third less activation SRAM than TFLM's arena head, and MobileNet's peak, the
    expanding 48x48x8 -> 48x48x16 pointwise layer, runs in place in a buffer growing downwards
    (the live-bytes bound of that plan, 46,136 B, is the ceiling; it was 55,296 B out of
    place)."""
    for path in WHOLE:
        p = api.plan(path)
        assert p.arena_bytes < TFLM_HEAD[path.stem], (path.stem, p.arena_bytes)
        if path.stem not in INPLACE_ARENA:
            continue
        ops = [op for op in p.graph.ops if p.in_place(op.index)]
        assert ops, f"{path.stem}: api.plan ran nothing in place"
        assert p.arena_bytes <= INPLACE_ARENA[path.stem], (path.stem, p.arena_bytes)
        _check_placement(p, ops)


def test_compare_after_plan() -> None:
    """api.compare goes through api.plan, so through the in-place plan it keeps."""
    r = api.compare(MODELS / "kws_dscnn.tflite", n=6)
    assert r.layers and r.ok, str(r)


# ------------------------------------------------------------ Cortex-M builds under QEMU

QEMU_CASES = [
    ("samd21", "kws_dscnn"),
    ("samd21", "inplace/pw_expand_odd"),
    ("samd21", "inplace/pw_shrink_odd"),
    ("samd21", "inplace/chain_residual"),
    ("samd21", "inplace/conv_asym_shrink"),
    ("samd21", "inplace/dw_dil_asym"),
    ("qemu-m4", "kws_dscnn"),
    ("qemu-m4", "ic_resnet8"),
    ("qemu-m4", "inplace/pw_expand_odd"),
    ("qemu-m4", "inplace/pw_shrink_odd"),
    ("qemu-m4", "inplace/chain_dscnn"),
    ("qemu-m4", "inplace/conv_dil2_equal"),
    ("qemu-m4", "inplace/dw_kernel_gt_image"),
    ("qemu-m7", "vww_mobilenet"),
    ("qemu-m4", "inplace/chain_dscnn", "no column"),
    ("qemu-m7", "inplace/pw_expand_odd", "no column"),
]


@pytest.mark.qemu
@pytest.mark.parametrize("case", QEMU_CASES, ids=lambda c: "-".join(c))
def test_forced_inplace_on_cortex_m(case: tuple[str, ...], tmp_path: Path) -> None:
    """ARMv6-M (one pixel per pass) and DSP builds (with a column buffer: pixel pairs copied to
    it, then written straight into place; without: through the temp or the ring) of the
    in-place kernels, every layer against TFLM. chain_dscnn expands (its buffer grows
    downwards: forwards) then shrinks in that buffer (backwards)."""
    board, name, *rest = case
    path = MODELS / f"{name}.tflite"
    assert _run_forced(path, tmp_path, board=board, n=3, column=not rest)


def _walk_safe(d: int, n: int, c: int, oc: int) -> bool:
    """Simulated byte by byte: does a forward or a backward walk of an in-place pointwise layer
    (input d bytes after the output; pixel i read, then its outputs written, a pixel whose
    outputs overlap its own input going through the temp) never write over unread input?"""

    def safe(order: list[int]) -> bool:
        unread = set(range(n))
        for i in order:
            unread.discard(i)
            lo, hi = i * oc, (i + 1) * oc
            if any(lo < d + (j + 1) * c and d + j * c < hi for j in unread):
                return False
        return True

    return safe(list(range(n))) or safe(list(range(n - 1, -1, -1)))


def test_shared_pointwise_layers_have_a_safe_walk() -> None:
    """Every pointwise layer the planner runs in place, in the whole models and in chains whose
    tensor sizes are not multiples of the 8-byte alignment (a buffer grown downwards ends its
    tensors together at aligned offsets, which can leave an expanding layer's input a few bytes
    short of where the forward walk needs it: found by a random differential run, 3x10x2 ->
    6 -> 8 channels), has a walk that never overwrites unread input, simulated here."""
    from test_kernels_fast_conv import _Net

    chains = [
        _Net((1, 3, 10, 2), 2032).conv(6, 1, 1, "VALID").conv(8, 1),
        _Net((1, 5, 7, 3), 7).conv(5, 1).conv(9, 1).conv(4, 1).conv(11, 1),
        _Net((1, 2, 3, 1), 8).conv(7, 1).conv(2, 1).conv(9, 1),
    ]
    models = list(WHOLE)
    with tempfile.TemporaryDirectory() as td:
        for k, net in enumerate(chains):
            models.append(net.save(Path(td) / f"chain{k}.tflite"))
        checked = 0
        for path in models:
            for forced in (False, True):
                if forced:
                    p, _ = _forced(path)
                else:
                    p = api.plan(path)
                g = p.graph
                for op in g.ops:
                    src, dst = op.inputs[0], op.outputs[0]
                    if op.kind != "CONV_2D" or g.t(op.inputs[1]).shape[1:3] != (1, 1):
                        continue
                    if src not in p.storage or p.storage[src] != p.storage.get(dst):
                        continue
                    c, oc = g.t(src).shape[-1], g.t(dst).shape[-1]
                    d = p.offset(src) - p.offset(dst)
                    assert _walk_safe(d, g.t(src).size // c, c, oc), (path.name, op.index, d)
                    checked += 1
    assert checked >= 10
