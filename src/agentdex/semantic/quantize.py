"""Run the model's weight matrices as int8 matrix products, and its GELU as one op.

The pinned MiniLM file stores each weight matrix as int8 with one float scale per
output column, and turns it back into floats inside the graph
(``MatMul(x, Mul(Cast(W_int8), scale))``): onnxruntime folds that into a float32
matrix at load, so every product ran in float32. :func:`dynamic_int8` rewrites
each such ``MatMul`` (and the bias ``Add`` after it) into onnxruntime's
``DynamicQuantizeMatMul``, which quantizes ``x`` to 8 bits per call and multiplies
by the stored int8 weights with their own scales (the weights are exactly the
file's; only the activations are rounded). The GELU the exporter spelt as
``x * 0.5 * (1 + erf(x / sqrt 2))`` becomes onnxruntime's ``Gelu`` (the same
formula in one kernel).

The vectors change slightly (cosine 0.992 on average to the float32 graph's, at
least 0.982, on 400 texts sampled from the 1 GB corpus; a bare "ok" 0.977;
docs/performance.md "Int8 products"), so a model run
this way has its own id (:data:`agentdex.semantic.model.MINILM_L6_DQ`): vectors
of the float32 graph are never mixed with these.

Like :mod:`agentdex.semantic.prune`, this reads and writes ONNX's protobuf wire
format directly (no ``onnx`` package), after the sha256 check, and leaves
anything not of exactly these shapes as it was.
"""

from __future__ import annotations

import math
import struct

from agentdex.semantic.prune import (
    _GRAPH_NODE,
    _GRAPH_VALUE_INFO,
    _LEN,
    _MODEL_GRAPH,
    _VALUE_NAME,
    _VARINT,
    _Field,
    _fields,
    _len_field,
    _Malformed,
    _Node,
    _node,
    _put_varint,
    _text,
    _varint,
)

_GRAPH_INITIALIZER = 5
_MODEL_OPSET = 8
_OPSET_DOMAIN, _OPSET_VERSION = 1, 2
_NODE_NAME, _NODE_DOMAIN = 3, 7
# TensorProto: dims, data_type, float_data, name, raw_data
_T_DIMS, _T_TYPE, _T_FLOATS, _T_NAME, _T_RAW = 1, 2, 4, 8, 9
_FLOAT, _INT8 = 1, 3
MS_DOMAIN = "com.microsoft"


class _Tensor:
    """An initializer's name, type, shape and (small tensors) float values."""

    def __init__(self, field: _Field) -> None:
        self.field = field
        self.parts = _fields(field.value)
        self.name = ""
        self.dtype = 0
        self.dims: list[int] = []
        for p in self.parts:
            if p.number == _T_NAME and p.wire == _LEN:
                self.name = _text(p.value)
            elif p.number == _T_TYPE and p.wire == _VARINT:
                self.dtype = _varint_value(p)
            elif p.number == _T_DIMS and p.wire == _VARINT:
                self.dims.append(_varint_value(p))
            elif p.number == _T_DIMS and p.wire == _LEN:  # packed
                self.dims.extend(_varints(p.value))

    def floats(self) -> list[float] | None:
        if self.dtype != _FLOAT:
            return None
        for p in self.parts:
            if p.number == _T_RAW and p.wire == _LEN and len(p.value) % 4 == 0:
                return list(struct.unpack(f"<{len(p.value) // 4}f", p.value))
            if p.number == _T_FLOATS and p.wire == _LEN and len(p.value) % 4 == 0:
                return list(struct.unpack(f"<{len(p.value) // 4}f", p.value))
        return None

    def reshaped(self, dims: list[int]) -> bytes:
        """This tensor with other dims (same values): its field, re-encoded."""
        packed = b"".join(_put_varint(d) for d in dims)
        payload = _len_field(_T_DIMS, packed) + b"".join(
            p.raw for p in self.parts if p.number != _T_DIMS
        )
        return _len_field(_GRAPH_INITIALIZER, payload)


def _varint_value(field: _Field) -> int:
    _, at = _varint(field.raw, 0)  # the key
    return _varint(field.raw, at)[0]


def _varints(view: memoryview) -> list[int]:
    out: list[int] = []
    value = shift = 0
    for byte in bytes(view):
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            out.append(value)
            value = shift = 0
    if shift:
        raise _Malformed("truncated varint")
    return out


def _encode_node(op: str, inputs: list[str], outputs: list[str], name: str) -> bytes:
    payload = b"".join(
        [
            *(_len_field(1, i.encode()) for i in inputs),
            *(_len_field(2, o.encode()) for o in outputs),
            _len_field(_NODE_NAME, name.encode()),
            _len_field(4, op.encode()),
            _len_field(_NODE_DOMAIN, MS_DOMAIN.encode()),
        ]
    )
    return _len_field(_GRAPH_NODE, payload)


def _near(value: float | None, want: float) -> bool:
    return value is not None and math.isclose(value, want, rel_tol=1e-6)


class _Rewrite:
    def __init__(self, graph: list[_Field]) -> None:
        self.graph = graph
        self.nodes = [_node(f) for f in graph if f.number == _GRAPH_NODE and f.wire == _LEN]
        self.inits = {
            t.name: t
            for t in (
                _Tensor(f) for f in graph if f.number == _GRAPH_INITIALIZER and f.wire == _LEN
            )
        }
        self.made_by = {out: n for n in self.nodes for out in n.outputs}
        self.users: dict[str, list[_Node]] = {}
        for n in self.nodes:
            for name in n.inputs:
                self.users.setdefault(name, []).append(n)
        self.graph_outputs = {
            _text(_fields(f.value)[0].value) for f in graph if f.number == 12 and f.wire == _LEN
        }
        self.replace: dict[int, bytes] = {}  #: id(node) -> the node(s) written in its place
        self.dropped: set[int] = set()  #: id(node) of nodes removed
        self.gone: set[str] = set()  #: value names no longer produced
        self.retyped: dict[str, bytes] = {}  #: initializer name -> its new field

    def only_user(self, name: str, op: str) -> _Node | None:
        users = self.users.get(name, [])
        if len(users) != 1 or users[0].op != op or name in self.graph_outputs:
            return None
        return users[0]

    def producer(self, name: str, op: str) -> _Node | None:
        node = self.made_by.get(name)
        return node if node is not None and node.op == op else None

    def scalar(self, name: str) -> float | None:
        tensor = self.inits.get(name)
        values = tensor.floats() if tensor is not None else None
        return values[0] if values is not None and len(values) == 1 else None

    def matmuls(self) -> int:
        done = 0
        for node in self.nodes:
            if node.op != "MatMul" or len(node.inputs) != 2 or len(node.outputs) != 1:
                continue
            x, w = node.inputs
            mul = self.producer(w, "Mul")
            if mul is None or len(mul.inputs) != 2 or self.only_user(w, "MatMul") is None:
                continue
            cast_out, scale_name = mul.inputs
            cast = self.producer(cast_out, "Cast")
            if cast is None or self.only_user(cast_out, "Mul") is None:
                continue
            weights = self.inits.get(cast.inputs[0]) if len(cast.inputs) == 1 else None
            scale = self.inits.get(scale_name)
            if weights is None or weights.dtype != _INT8 or len(weights.dims) != 2:
                continue
            columns = weights.dims[1]
            if (
                scale is None
                or scale.dtype != _FLOAT
                or scale.dims not in ([1, columns], [columns])
                or len(self.users.get(scale_name, [])) != 1
            ):
                continue
            out = node.outputs[0]
            inputs = [x, weights.name, scale_name]
            add = self.only_user(out, "Add")
            if add is not None and len(add.inputs) == 2:
                bias = add.inputs[1] if add.inputs[0] == out else add.inputs[0]
                tensor = self.inits.get(bias)
                if tensor is not None and tensor.dtype == _FLOAT and tensor.dims == [columns]:
                    inputs += ["", bias]  # no zero point: the weights are symmetric int8
                    self.dropped.add(id(add))
                    self.gone.add(out)
                    out = add.outputs[0]
            self.retyped[scale_name] = scale.reshaped([columns])
            self.replace[id(node)] = _encode_node(
                "DynamicQuantizeMatMul", inputs, [out], f"{_node_name(node)}/int8"
            )
            self.dropped.update((id(mul), id(cast)))
            self.gone.update((w, cast_out))
            done += 1
        return done

    def gelus(self) -> int:
        """``Mul(x, Mul(0.5, Add(Erf(Div(x, sqrt 2)), 1)))`` (either operand order)."""
        done = 0
        for div in self.nodes:
            if div.op != "Div" or len(div.inputs) != 2 or id(div) in self.dropped:
                continue
            x, root = div.inputs
            if not _near(self.scalar(root), math.sqrt(2.0)):
                continue
            erf = self.only_user(div.outputs[0], "Erf")
            add = erf and self.only_user(erf.outputs[0], "Add")
            half = add and self.only_user(add.outputs[0], "Mul")
            last = half and self.only_user(half.outputs[0], "Mul")
            if erf is None or not add or not half or not last:
                continue
            one = [i for i in add.inputs if i != erf.outputs[0]]
            point5 = [i for i in half.inputs if i != add.outputs[0]]
            other = [i for i in last.inputs if i != half.outputs[0]]
            if (
                len(one) != 1
                or not _near(self.scalar(one[0]), 1.0)
                or len(point5) != 1
                or not _near(self.scalar(point5[0]), 0.5)
                or other != [x]
            ):
                continue
            self.replace[id(div)] = _encode_node(
                "Gelu", [x], list(last.outputs), f"{_node_name(div)}/gelu"
            )
            self.dropped.update(id(n) for n in (erf, add, half, last))
            self.gone.update(n.outputs[0] for n in (div, erf, add, half))
            done += 1
        return done

    def write(self) -> list[bytes | memoryview]:
        by_field = {id(n.field): n for n in self.nodes}
        inits = {id(t.field): t for t in self.inits.values()}
        pieces: list[bytes | memoryview] = []
        for f in self.graph:
            node = by_field.get(id(f)) if f.number == _GRAPH_NODE else None
            if node is not None:
                if id(node) in self.replace:
                    pieces.append(self.replace[id(node)])
                elif id(node) not in self.dropped:
                    pieces.append(f.raw)
                continue
            tensor = inits.get(id(f)) if f.number == _GRAPH_INITIALIZER else None
            if tensor is not None and tensor.name in self.retyped:
                pieces.append(self.retyped[tensor.name])
                continue
            if f.number == _GRAPH_VALUE_INFO and f.wire == _LEN:
                names = [p.value for p in _fields(f.value) if p.number == _VALUE_NAME]
                if names and _text(names[0]) in self.gone:
                    continue
            pieces.append(f.raw)
        return pieces


def _node_name(node: _Node) -> str:
    names = [_text(p.value) for p in node.parts if p.number == _NODE_NAME and p.wire == _LEN]
    return names[0] if names else (node.outputs[0] if node.outputs else "node")


def dynamic_int8(model: bytes) -> tuple[bytes, int, int]:
    """``model`` with its int8-weight products run as int8 and its GELUs fused; the
    bytes, how many products and how many GELUs were rewritten (``(model, 0, 0)``
    when nothing matched or the bytes do not parse)."""
    try:
        return _rewrite(model)
    except (_Malformed, UnicodeError, IndexError, struct.error):
        return model, 0, 0


def _rewrite(model: bytes) -> tuple[bytes, int, int]:
    top = _fields(memoryview(model))
    graphs = [f for f in top if f.number == _MODEL_GRAPH and f.wire == _LEN]
    if len(graphs) != 1:
        return model, 0, 0
    rewrite = _Rewrite(_fields(graphs[0].value))
    products = rewrite.matmuls()
    gelus = rewrite.gelus()
    if not products and not gelus:
        return model, 0, 0
    pieces = rewrite.write()
    head = _put_varint(_MODEL_GRAPH << 3 | _LEN) + _put_varint(sum(len(b) for b in pieces))
    has_domain = any(
        f.number == _MODEL_OPSET
        and f.wire == _LEN
        and any(p.number == _OPSET_DOMAIN and _text(p.value) == MS_DOMAIN for p in _fields(f.value))
        for f in top
    )
    out: list[bytes | memoryview] = []
    for f in top:
        out.extend((head, *pieces) if f is graphs[0] else (f.raw,))
    if not has_domain:
        opset = (
            _len_field(_OPSET_DOMAIN, MS_DOMAIN.encode())
            + _put_varint(_OPSET_VERSION << 3 | _VARINT)
            + _put_varint(1)
        )
        out.append(_len_field(_MODEL_OPSET, opset))
    return b"".join(out), products, gelus
