"""Drop the no-op NaN guards from the model's attention before onnxruntime loads it.

The pinned MiniLM file was exported by PyTorch's dynamo exporter, whose
scaled-dot-product attention writes ``Where(IsNaN(p), 0, p)`` after every
softmax ``p`` (a row whose keys are all masked is NaN; it becomes zeros).
Every chunk agentdex embeds has its ``[CLS]`` and ``[SEP]`` unmasked, so no
softmax row is ever NaN and each guard returns ``p`` unchanged, at ~19% of the
model's CPU time (two passes over a [batch, 12, tokens, tokens] tensor per layer;
onnxruntime's profile, docs/performance.md "Embedding throughput").

:func:`drop_nan_guards` rewrites the serialized graph (ONNX's protobuf wire
format, read field by field: no ``onnx`` package needed) so that what read the
guard's output reads the softmax output itself. The bytes checked against the
pinned sha256 are the file's; this runs on them after the check. Anything not of
that exact shape is left as it was.
"""

from __future__ import annotations

from dataclasses import dataclass

# field numbers (onnx.proto): ModelProto.graph, GraphProto.node / value_info,
# NodeProto.input / output / op_type, ValueInfoProto.name
_MODEL_GRAPH = 7
_GRAPH_NODE = 1
_GRAPH_VALUE_INFO = 13
_NODE_INPUT, _NODE_OUTPUT, _NODE_OP = 1, 2, 4
_VALUE_NAME = 1

_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5


class _Malformed(ValueError):
    pass


def _varint(data: memoryview, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data) or shift > 63:
            raise _Malformed("truncated varint")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, at


def _put_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


@dataclass(slots=True)
class _Field:
    number: int
    wire: int
    raw: memoryview  #: the whole field as encoded (key and value), not copied
    value: memoryview  #: a length-delimited field's payload (else empty)


def _text(view: memoryview) -> str:
    return bytes(view).decode("utf-8", "replace")


def _fields(data: memoryview) -> list[_Field]:
    out: list[_Field] = []
    at = 0
    while at < len(data):
        start = at
        key, at = _varint(data, at)
        number, wire = key >> 3, key & 7
        value = data[0:0]
        if wire == _VARINT:
            _, at = _varint(data, at)
        elif wire == _I64:
            at += 8
        elif wire == _I32:
            at += 4
        elif wire == _LEN:
            size, at = _varint(data, at)
            value = data[at : at + size]
            at += size
        else:
            raise _Malformed(f"wire type {wire}")
        if at > len(data):
            raise _Malformed("truncated field")
        out.append(_Field(number, wire, data[start:at], value))
    return out


def _len_field(number: int, payload: bytes) -> bytes:
    return _put_varint(number << 3 | _LEN) + _put_varint(len(payload)) + payload


@dataclass(slots=True)
class _Node:
    field: _Field
    parts: list[_Field]
    op: str
    inputs: list[str]
    outputs: list[str]


def _node(field: _Field) -> _Node:
    parts = _fields(field.value)
    text = {
        n: [_text(p.value) for p in parts if p.number == n and p.wire == _LEN]
        for n in (_NODE_INPUT, _NODE_OUTPUT, _NODE_OP)
    }
    op = text[_NODE_OP][0] if text[_NODE_OP] else ""
    return _Node(field, parts, op, text[_NODE_INPUT], text[_NODE_OUTPUT])


def drop_nan_guards(model: bytes) -> tuple[bytes, int]:
    """``model`` with every ``Where(IsNaN(p), c, p)`` after a ``Softmax`` removed, and
    how many were; ``(model, 0)`` when there are none or the bytes do not parse."""
    try:
        return _drop(model)
    except (_Malformed, UnicodeError, IndexError):
        return model, 0


def _drop(model: bytes) -> tuple[bytes, int]:
    top = _fields(memoryview(model))  # views into the model: its 23 MB are not copied
    graphs = [f for f in top if f.number == _MODEL_GRAPH and f.wire == _LEN]
    if len(graphs) != 1:
        return model, 0
    graph = _fields(graphs[0].value)
    nodes = [_node(f) for f in graph if f.number == _GRAPH_NODE and f.wire == _LEN]
    made_by = {out: n for n in nodes for out in n.outputs}
    rename: dict[str, str] = {}
    dropped: set[int] = set()
    for node in nodes:
        if node.op != "Where" or len(node.inputs) != 3 or len(node.outputs) != 1:
            continue
        flag, _, kept = node.inputs
        isnan = made_by.get(flag)
        softmax = made_by.get(kept)
        if (
            isnan is None
            or isnan.op != "IsNaN"
            or isnan.inputs != [kept]
            or softmax is None
            or softmax.op != "Softmax"
        ):
            continue
        rename[node.outputs[0]] = kept
        dropped.update((id(node), id(isnan)))
    if not rename:
        return model, 0
    removed = {out for n in nodes if id(n) in dropped for out in n.outputs}
    users = [n for n in nodes if id(n) not in dropped]
    if any(name in removed for n in users for name in n.inputs if name not in rename):
        return model, 0  # an IsNaN output read elsewhere: leave the graph alone
    graph_outputs = {  # a guard whose output is the graph's own is left in place
        _text(_fields(f.value)[0].value) for f in graph if f.number == 12 and f.wire == _LEN
    }
    if graph_outputs & set(rename):
        return model, 0
    by_field = {id(n.field): n for n in nodes}
    pieces: list[bytes | memoryview] = []
    for f in graph:
        if f.number == _GRAPH_NODE and id(f) in by_field:
            node = by_field[id(f)]
            if id(node) in dropped:
                continue
            if any(name in rename for name in node.inputs):
                payload = b"".join(
                    _len_field(_NODE_INPUT, rename[_text(p.value)].encode())
                    if p.number == _NODE_INPUT and p.wire == _LEN and _text(p.value) in rename
                    else p.raw
                    for p in node.parts
                )
                pieces.append(_len_field(_GRAPH_NODE, payload))
                continue
        elif f.number == _GRAPH_VALUE_INFO and f.wire == _LEN:
            names = [p.value for p in _fields(f.value) if p.number == _VALUE_NAME]
            if names and _text(names[0]) in removed:
                continue
        pieces.append(f.raw)
    # one copy of the model at the end (views until then): its peak is two models
    head = _put_varint(_MODEL_GRAPH << 3 | _LEN) + _put_varint(sum(len(b) for b in pieces))
    out: list[bytes | memoryview] = []
    for f in top:
        out.extend((head, *pieces) if f is graphs[0] else (f.raw,))
    return b"".join(out), len(rename)
