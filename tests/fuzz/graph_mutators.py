"""Object-level mutators (``s_*``) of the graph: wiring (cycles, order, graph and op operands),
operator kinds and options, and whole-graph structure.

Each takes a ``ModelT`` (changed in place) and a ``random.Random``, and returns a description.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import numpy as np

from .edge_values import FLOAT_EDGES
from .tflite_objects import activations, operators, schema, subgraph


def s_cycle(m: Any, rng: random.Random) -> str:
    """An op reads its own output or a later op's output."""
    ops = operators(m)
    i = rng.randrange(len(ops))
    j = rng.randrange(i, len(ops))
    ins = [int(x) for x in ops[i].inputs]
    k = rng.randrange(len(ins)) if ins else 0
    src = int(ops[j].outputs[0])
    if ins:
        ins[k] = src
    else:
        ins = [src]
    ops[i].inputs = np.array(ins, np.int32)
    return f"cycle: op {i} input {k} <- op {j} output {src}"


def s_reorder(m: Any, rng: random.Random) -> str:
    ops = operators(m)
    if len(ops) < 2:
        return s_cycle(m, rng)
    i, j = sorted(rng.sample(range(len(ops)), 2))
    ops[i], ops[j] = ops[j], ops[i]
    return f"swap ops {i} and {j}"


def s_double_write(m: Any, rng: random.Random) -> str:
    ops = operators(m)
    i = rng.randrange(len(ops))
    choices = activations(m)
    t = rng.choice(choices)
    ops[i].outputs = np.array([t] + [int(x) for x in ops[i].outputs[1:]], np.int32)
    return f"op {i} writes tensor {t}"


def s_io(m: Any, rng: random.Random) -> str:
    """Graph inputs/outputs: none, constants, duplicates, an input that is also an output."""
    sg = subgraph(m)
    n = len(sg.tensors)
    what = rng.choice(["no_in", "no_out", "dup", "in_is_out", "const_in", "extra_out", "range"])
    ins = [int(x) for x in sg.inputs] if sg.inputs is not None else []
    outs = [int(x) for x in sg.outputs] if sg.outputs is not None else []
    if what == "no_in":
        ins = []
    elif what == "no_out":
        outs = []
    elif what == "dup":
        ins, outs = ins + ins[:1], outs + outs[:1]
    elif what == "in_is_out":
        outs = ins[:1] or outs
    elif what == "const_in":
        consts = [i for i, t in enumerate(sg.tensors) if t.buffer]
        ins = [rng.choice(consts)] if consts else ins
    elif what == "extra_out":
        outs = outs + [rng.randrange(n)]
    else:
        outs = [rng.choice([n, -1, 2**31 - 1])]
    sg.inputs = np.array(ins, np.int32)
    sg.outputs = np.array(outs, np.int32)
    return f"graph io {what}"


def s_op_io(m: Any, rng: random.Random) -> str:
    """Too few or too many operands, optional (-1) operands, no outputs."""
    ops = operators(m)
    i = rng.randrange(len(ops))
    op = ops[i]
    ins = [int(x) for x in op.inputs] if op.inputs is not None else []
    outs = [int(x) for x in op.outputs] if op.outputs is not None else []
    what = rng.choice(["drop_in", "add_in", "none_in", "no_out", "two_out", "in_eq_out"])
    if what == "drop_in" and ins:
        ins.pop(rng.randrange(len(ins)))
    elif what == "add_in":
        ins.append(rng.randrange(len(subgraph(m).tensors)))
    elif what == "none_in" and ins:
        ins[rng.randrange(len(ins))] = -1
    elif what == "no_out":
        outs = []
    elif what == "two_out":
        outs = outs + [rng.randrange(len(subgraph(m).tensors))]
    elif ins:
        outs = ins[:1]
    op.inputs = np.array(ins, np.int32)
    op.outputs = np.array(outs, np.int32)
    return f"op {i} operands {what}"


SUPPORTED_KINDS = [
    "CONV_2D",
    "DEPTHWISE_CONV_2D",
    "FULLY_CONNECTED",
    "AVERAGE_POOL_2D",
    "MAX_POOL_2D",
    "ADD",
    "MUL",
    "SUB",
    "SOFTMAX",
    "RESHAPE",
    "MEAN",
    "CONCATENATION",
    "LOGISTIC",
    "TANH",
    "RELU",
    "RELU6",
    "QUANTIZE",
    "DEQUANTIZE",
    "HARD_SWISH",
    "PAD",
    "SQUEEZE",
    "LEAKY_RELU",
    "EXP",
    "STRIDED_SLICE",
    "TRANSPOSE",
    "CUSTOM",
    "WHILE",
    "IF",
]


def s_opkind(m: Any, rng: random.Random) -> str:
    """An op becomes another kind (keeping its operands and, often, mismatched options)."""
    s = schema()
    codes = m.operatorCodes
    ops = operators(m)
    i = rng.randrange(len(ops))
    kind = rng.choice(SUPPORTED_KINDS)
    oc = s.OperatorCodeT()
    code = getattr(s.BuiltinOperator, kind, rng.randrange(300))
    oc.builtinCode = code
    oc.deprecatedBuiltinCode = min(code, 127)
    oc.version = rng.choice([1, 2, 100])
    if kind == "CUSTOM":
        oc.customCode = rng.choice([b"Foo", b"*/ x(); /*\n", b"\xff\xfe"])
    codes.append(oc)
    ops[i].opcodeIndex = len(codes) - 1
    if rng.random() < 0.3:
        ops[i].builtinOptions = None
        ops[i].builtinOptionsType = 0
    return f"op {i} becomes {kind}"


_OPTION_VALUES = [0, -1, 1, 2, 3, 5, 100, 2**31 - 1, -(2**31), 65536, 255, 127, -128]


def s_options(m: Any, rng: random.Random) -> str:
    """Option fields set to edges: zero/negative strides, dilations, filters, axes, activations."""
    ops = operators(m)
    with_opts = [i for i, op in enumerate(ops) if op.builtinOptions is not None]
    if not with_opts:
        return s_opkind(m, rng)
    i = rng.choice(with_opts)
    o = ops[i].builtinOptions
    names = [k for k, v in vars(o).items() if isinstance(v, (int, float, bool))]
    if not names:
        return s_opkind(m, rng)
    k = rng.choice(names)
    v: Any = rng.choice(_OPTION_VALUES)
    if isinstance(getattr(o, k), float):
        v = rng.choice(FLOAT_EDGES)
    elif isinstance(getattr(o, k), bool) or k in ("padding", "fusedActivationFunction"):
        v = rng.choice([0, 1, 2, 3, 4, 5, 6, 100, 127, -1])
    setattr(o, k, v)
    return f"op {i} option {k}={v}"


def s_wrong_options(m: Any, rng: random.Random) -> str:
    """An op gets the options table of another op kind."""
    s = schema()
    ops = operators(m)
    i = rng.randrange(len(ops))
    kind = rng.choice(
        [
            "Conv2DOptions",
            "Pool2DOptions",
            "AddOptions",
            "SoftmaxOptions",
            "ReshapeOptions",
            "ConcatenationOptions",
            "FullyConnectedOptions",
        ]
    )
    ops[i].builtinOptionsType = getattr(s.BuiltinOptions, kind)
    ops[i].builtinOptions = getattr(s, kind + "T")()
    return f"op {i} gets {kind}"


def s_structure(m: Any, rng: random.Random) -> str:
    """Whole-graph damage: no subgraphs, two subgraphs, no ops, no tensors, dropped entries."""
    what = rng.choice(
        [
            "no_sg",
            "two_sg",
            "no_ops",
            "drop_tensor",
            "drop_op",
            "drop_code",
            "no_buffers",
            "version",
        ]
    )
    sg = subgraph(m)
    if what == "no_sg":
        m.subgraphs = []
    elif what == "two_sg":
        m.subgraphs.append(copy.deepcopy(sg))
    elif what == "no_ops":
        sg.operators = []
    elif what == "drop_tensor":
        sg.tensors.pop(rng.randrange(len(sg.tensors)))
    elif what == "drop_op":
        sg.operators.pop(rng.randrange(len(sg.operators)))
    elif what == "drop_code" and m.operatorCodes:
        m.operatorCodes.pop(rng.randrange(len(m.operatorCodes)))
    elif what == "no_buffers":
        m.buffers = []
    else:
        m.version = rng.choice([0, 2, 4, 2**31 - 1])
    return f"structure {what}"
