"""Graph-level ONNX mutators (``o_*``, see onnx_mutators.py): hostile names, attribute types
and values, opset imports, node inputs and outputs (dangling, cycles, duplicates), node order
and kinds, graph inputs and outputs, and odd extras (sparse initializers, subgraphs)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .onnx_mutators import DIM_EDGES, INT_EDGES, Mut, tensors

HANDLED = ["QuantizeLinear", "DequantizeLinear", "QLinearConv", "QGemm", "QLinearMatMul",
           "QLinearAdd", "QLinearMul", "QLinearGlobalAveragePool", "QLinearAveragePool",
           "QLinearSigmoid", "QLinearSoftmax", "QLinearConcat", "Conv", "Gemm", "MatMul", "Add",
           "Mul", "GlobalAveragePool", "AveragePool", "Concat", "Sigmoid", "Softmax", "Relu",
           "Clip", "MaxPool", "Flatten", "Reshape", "Transpose", "Pad", "Resize",
           "Constant", "Gather", "GlobalMaxPool", "HardSigmoid", "HardSwish", "LeakyRelu",
           "QLinearLeakyRelu", "Slice", "Split", "Squeeze", "Unsqueeze"]  # fmt: skip
ATTRS: dict[str, list[Any]] = {
    "strides": [[0, 0], [-1, 1], [1], [1, 1, 1], [2**31, 1], [65537, 1], []],
    "dilations": [[0, 1], [2**40, 1], [3, 3], [1]],
    "pads": [[-1, 0, 0, 0], [0, 0, 0], [2**31, 0, 0, 0], [100, 100, 100, 100], [1, 1]],
    "kernel_shape": [[0, 0], [1 << 20, 1], [3], [-3, 3], [1, 1]],
    "group": [0, -1, 2**31, 3, 1000], "axis": [-100, 100, 2**40, -(2**63), 3],
    "perm": [[0, 0, 1, 2], [3, 2, 1], [0, 1, 2, 9], [], [-1, 0, 1, 2]],
    "transA": [1], "transB": [2, -1], "alpha": [float("nan"), float("inf"), 0.0, -1.0, 1e38],
    "beta": [0.0, float("nan")], "auto_pad": [b"SAME_UPPER", b"VALID", b"\xff\xfe", b""],
    "mode": [b"linear", b"reflect", b"\xff", b"nearest"], "ceil_mode": [1],
    "coordinate_transformation_mode": [b"\xc0\x80", b"tf_crop_and_resize", b"asymmetric"],
    "nearest_mode": [b"x", b"floor"], "count_include_pad": [1, 2**40], "channels_last": [1],
    "min": [float("nan"), 1e38], "max": [float("-inf"), -1.0], "axes": [[0], [2**40]],
    "block_size": [4], "output_dtype": [99, 3], "opset": [-1, 2**40],
}  # fmt: skip


def _node(mu: Mut) -> Any:
    return mu.rng.choice(list(mu.m.graph.node))


def o_names(mu: Mut) -> str:
    """A hostile name (invalid UTF-8 or odd text) in one place, or consistently everywhere a
    value name is used."""
    g, rng = mu.m.graph, mu.rng
    text = mu.text()
    what = rng.choice(["node", "op_type", "domain", "value", "value_all", "init", "graph",
                       "graph_io", "attr", "opset", "attr_s"])  # fmt: skip
    if what in ("value", "value_all", "init"):
        if what == "init" and len(g.initializer):
            old = rng.choice(list(g.initializer)).name
        else:
            old = rng.choice([x for n in g.node for x in [*n.input, *n.output] if x])
        for n in g.node:
            for seq in (n.input, n.output):
                for k, x in enumerate(seq):
                    if x == old and (what != "value" or rng.random() < 0.5):
                        seq[k] = text
        if what != "value":
            for t in [*g.initializer, *g.input, *g.output]:
                if t.name == old:
                    t.name = text
        return f"{what} name '{old[:16]}' -> hostile"
    n = _node(mu)
    if what == "node":
        n.name = text
    elif what == "op_type":
        n.op_type = text
    elif what == "domain":
        n.domain = text
    elif what == "graph":
        g.name = text
    elif what == "graph_io":
        rng.choice([*g.input, *g.output]).name = text
    elif what == "attr" and len(n.attribute):
        rng.choice(list(n.attribute)).name = text
    elif what == "opset":
        rng.choice(list(mu.m.opset_import)).domain = text
    elif what == "attr_s" and len(n.attribute):
        a = rng.choice(list(n.attribute))
        a.s = rng.choice([b"\xff\xfe", b"a\nb", b"*/", b""])
    return f"{what} -> hostile"


def o_attr(mu: Mut) -> str:
    """Attributes: another type (with or without its payload), edge values, added (from what
    the reader reads), removed, duplicated."""
    from onnx import helper

    n, rng = _node(mu), mu.rng
    what = rng.choice(["type", "retype", "value", "add", "remove", "dup"])
    attrs = list(n.attribute)
    if what in ("type", "retype", "remove", "dup") and attrs:
        a = rng.choice(attrs)
        if what == "type":  # the declared type changes, the payload stays
            a.type = rng.choice([0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 13, 99])
        elif what == "retype":  # a well-formed attribute of another type, same name
            value = rng.choice([3, 2.5, b"x", [1, 2], [b"a"], [0.5], helper.make_tensor(
                "t", 1, [1], [1.0])])  # fmt: skip
            a.CopyFrom(helper.make_attribute(a.name, value))
        elif what == "remove":
            n.attribute.remove(a)
        else:
            n.attribute.append(a)
        return f"attribute '{a.name}' of {n.op_type} {what}"
    name = rng.choice(list(ATTRS))
    value = rng.choice(ATTRS[name])
    for a in attrs:
        if a.name == name:
            n.attribute.remove(a)
    n.attribute.append(helper.make_attribute(name, value))
    return f"attribute {name}={str(value)[:20]} on {n.op_type}"


def o_opset(mu: Mut) -> str:
    m, rng = mu.m, mu.rng
    what = rng.choice(["version", "version", "ms", "drop", "dup", "ir"])
    ops = list(m.opset_import)
    if what == "version" and ops:
        o = next((o for o in ops if o.domain in ("", "ai.onnx")), ops[0])
        o.version = rng.choice([0, 1, 9, 10, 11, 13, 19, 21, 22, 23, 24, 99, 2**31, -1])
        return f"opset version -> {o.version}"
    if what == "ms":
        o = m.opset_import.add()
        o.domain, o.version = "com.microsoft", rng.choice([0, 1, 2, -1])
    elif what == "drop" and ops:
        m.opset_import.remove(rng.choice(ops))
    elif what == "dup" and ops:
        o = m.opset_import.add()
        o.CopyFrom(rng.choice(ops))
        o.version = rng.choice([o.version, 13, 21])
    else:
        m.ir_version = rng.choice([0, 1, 3, 4, 10, 99, -1])
    return f"opset {what}"


def o_inputs(mu: Mut) -> str:
    """A node input: a name nobody produces, a later node's output (a cycle), its own output,
    absent, dropped, one more, swapped."""
    g, rng = mu.m.graph, mu.rng
    nodes = list(g.node)
    i = rng.randrange(len(nodes))
    n = nodes[i]
    what = rng.choice(["dangling", "later", "self", "empty", "drop", "extra", "swap"])
    later = [x for m in nodes[i:] for x in m.output if x]
    if what == "dangling" and len(n.input):
        n.input[rng.randrange(len(n.input))] = rng.choice(["nowhere", "x" * 200])
    elif what in ("later", "self") and len(n.input) and later:
        n.input[rng.randrange(len(n.input))] = rng.choice(later if what == "later" else n.output)
    elif what == "empty" and len(n.input):
        n.input[rng.randrange(len(n.input))] = ""
    elif what == "drop" and len(n.input):
        del n.input[rng.randrange(len(n.input))]
    elif what == "extra":
        names = [x for m in nodes[:i] for x in m.output] + [t.name for t in g.initializer]
        n.input.append(rng.choice(names or ["z"]))
    elif what == "swap" and len(n.input) > 1:
        a, b = rng.sample(range(len(n.input)), 2)
        n.input[a], n.input[b] = n.input[b], n.input[a]
    return f"node #{i} {n.op_type} input {what}"


def o_outputs(mu: Mut) -> str:
    """A node output: another node's name (two producers), an initializer's or graph input's
    name, removed, an extra one."""
    g, rng = mu.m.graph, mu.rng
    n = _node(mu)
    what = rng.choice(["dup", "init", "input", "remove", "extra", "empty"])
    others = [x for m in g.node if m is not n for x in m.output if x]
    if what == "dup" and others:
        n.output[0] = rng.choice(others)
    elif what == "init" and len(g.initializer):
        n.output[0] = rng.choice(list(g.initializer)).name
    elif what == "input" and len(g.input):
        n.output[0] = rng.choice(list(g.input)).name
    elif what == "remove":
        del n.output[:]
    elif what == "extra":
        n.output.append(rng.choice(["extra", n.output[0] if len(n.output) else "e"]))
    elif what == "empty" and len(n.output):
        n.output[0] = ""
    return f"{n.op_type} output {what}"


def o_nodes(mu: Mut) -> str:
    """Node order and number: removed, swapped, reversed, duplicated, rotated, many copies."""
    g, rng = mu.m.graph, mu.rng
    nodes = [type(n)() for n in g.node]
    for a, b in zip(nodes, g.node, strict=True):
        a.CopyFrom(b)
    what = rng.choice(["remove", "swap", "reverse", "dup", "rotate", "many"])
    if what == "remove":
        del nodes[rng.randrange(len(nodes))]
    elif what == "swap" and len(nodes) > 1:
        a, b = rng.sample(range(len(nodes)), 2)
        nodes[a], nodes[b] = nodes[b], nodes[a]
    elif what == "reverse":
        nodes.reverse()
    elif what == "dup":
        k = rng.randrange(len(nodes))
        nodes.insert(k + 1, nodes[k])
    elif what == "rotate":
        nodes = nodes[-1:] + nodes[:-1]
    else:  # a chain of many copies of a one-input node (renamed in sequence)
        k = rng.randrange(len(nodes))
        base = nodes[k]
        chain = []
        prev = base.output[0] if len(base.output) else ""
        for j in range(rng.choice([50, 500])):
            c = type(base)()
            c.CopyFrom(base)
            if len(c.input):
                c.input[0] = prev
            if len(c.output):
                c.output[0] = prev = f"chain{j}"
            chain.append(c)
        nodes[k + 1 : k + 1] = chain
    del g.node[:]
    g.node.extend(nodes)
    return f"nodes {what}"


def o_optype(mu: Mut) -> str:
    n, rng = _node(mu), mu.rng
    old = n.op_type
    if rng.random() < 0.8:
        n.op_type = rng.choice(HANDLED + ["QLinearLeakyRelu", "If", "Loop", "Foo", "Identity"])
    else:
        n.domain = rng.choice(["", "com.microsoft", "ai.onnx", "ai.onnx.ml", "x"])
    return f"{old} -> {n.op_type} ({n.domain or 'default'})"


def o_graph_io(mu: Mut) -> str:
    """Graph inputs and outputs: dims, element types, removed, duplicated, made up."""
    g, rng = mu.m.graph, mu.rng
    what = rng.choice(["dim", "dim", "elem", "remove", "dup", "ghost", "init"])
    vi = rng.choice([*g.input, *g.output])
    if what == "dim":
        dims = vi.type.tensor_type.shape.dim
        if len(dims):
            d = dims[rng.randrange(len(dims))]
            if rng.random() < 0.2:
                d.dim_param = "N"
            else:
                d.dim_value = rng.choice([-1, *DIM_EDGES])
        else:
            vi.type.tensor_type.shape.dim.add().dim_value = rng.choice(DIM_EDGES)
    elif what == "elem":
        vi.type.tensor_type.elem_type = rng.choice([0, 1, 2, 3, 5, 6, 8, 10, 99])
    elif what == "remove":
        (g.input if vi in g.input else g.output).remove(vi)
    elif what == "dup":
        (g.input if vi in g.input else g.output).add().CopyFrom(vi)
    elif what == "ghost":
        g.output.add().name = "ghost"
    elif len(g.initializer):
        g.output.add().name = rng.choice(list(g.initializer)).name
    return f"graph io {what}"


def o_extras(mu: Mut) -> str:
    """Odd extras: a sparse initializer, a node with a subgraph, a Constant of another form,
    an initializer with many dims, a tensor in segments."""
    from onnx import helper

    g, rng = mu.m.graph, mu.rng
    what = rng.choice(["sparse", "subgraph", "const", "rank", "segment"])
    if what == "sparse":
        s = g.sparse_initializer.add()
        s.values.CopyFrom(helper.make_tensor("sp", 1, [1], [1.0]))
        s.indices.CopyFrom(helper.make_tensor("spi", 7, [1], [0]))
        s.dims.extend([4])
    elif what == "subgraph":
        n = _node(mu)
        n.attribute.append(helper.make_attribute("then_branch", helper.make_graph([], "s", [], [])))
    elif what == "const":
        k = rng.randrange(len(g.node) + 1)
        out = rng.choice([x for n in g.node for x in n.input if x] or ["c"])
        c = helper.make_node("Constant", [], [out], value_ints=[1, 2])
        g.node.insert(k, c)
    elif what == "rank":
        t = rng.choice(tensors(mu.m))
        t.dims.extend([1] * rng.choice([8, 40, 100]))
    else:
        t = rng.choice(tensors(mu.m))
        t.segment.begin, t.segment.end = 0, rng.choice(INT_EDGES[:6])
    return f"extra {what}"


GRAPH_MUTATORS: list[tuple[Callable[[Mut], str], float]] = [
    (o_names, 1.5),
    (o_attr, 2.5),
    (o_opset, 0.7),
    (o_inputs, 1.5),
    (o_outputs, 1.0),
    (o_nodes, 1.2),
    (o_optype, 1.0),
    (o_graph_io, 1.0),
    (o_extras, 0.5),
]
