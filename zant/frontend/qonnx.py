"""QONNX's `Quant`, `BipolarQuant` and `Trunc` (domain `qonnx.custom_op.general`, Brevitas'
`export_qonnx`) rewritten into ONNX's QuantizeLinear / Clip / DequantizeLinear before import.

Why on the protobuf, before the IR: ONNX has no schema for these ops, so shape inference leaves
their outputs untyped and the dialect has no op to hold them; once rewritten, the standard ops
are inferred, checked and folded (`fold-qdq`) like any QDQ model.

The ops, as QONNX defines them (its executor, `qonnx.custom_op.general`):

    Quant(x, s, z, b)      y = (R(clip(x / s + z, lo, hi)) - z) · s, [lo, hi] the b-bit range
                           (signed / narrow attributes), R its rounding_mode (default ROUND)
    BipolarQuant(x, s)     y = (x >= 0 ? 1 : -1) · s
    Trunc(x, s, z, bi, so, bo) (version 2)
                           q = round(x / s + z), t = 2^round(log2(so / s)),
                           y = (R(clip(q / t, lo, hi)) - z / t) · so (R default FLOOR)

Rewrites:

- any of them on a constant (a weight) is computed here, in float32 as QONNX computes it, into
  integer codes and a DequantizeLinear of them (any bit width up to 16 and any rounding mode);
- Quant on a run-time tensor with rounding ROUND (half to even): QuantizeLinear(x, s, z) into
  the smallest of int8/uint8/int16/uint16 that holds the b-bit range, an integer Clip when that
  range is narrower than the type, then DequantizeLinear. Bit for bit where z = 0 (Brevitas'
  symmetric quantizers): x / s is rounded once either way. With z ≠ 0 QONNX rounds the float32
  x / s + z, ONNX round(x / s) + z: they can differ by one step where x / s is within float32
  rounding of a half;
- Trunc on a run-time tensor with z = 0 and rounding ROUND: QuantizeLinear(x, s) into the input
  bit width's type, a requantize by 1/t (DequantizeLinear with scale 1/t, QuantizeLinear with
  scale 1, exact for a power of two t), the Clip, DequantizeLinear(so); with FLOOR/CEIL the same
  codes go through the float Floor/Ceil (exact on these small integers, but not integer code);
- BipolarQuant on a run-time tensor: Where(x >= 0, s, -s) (float).

Anything else (a bit width above 16 or not an integer, a scale that is not a positive constant,
a zero point that is not an integer constant, other rounding modes on a run-time tensor) is a
`ZantError` naming the node.
"""

from __future__ import annotations

import numpy as np
from onnx import ModelProto, NodeProto, TensorProto, helper, numpy_helper

from zant.errors import ZantError

QONNX_DOMAINS = ("qonnx.custom_op.general", "finn.custom_op.general")
QONNX_OPS = ("Quant", "BipolarQuant", "Trunc")

_ROUNDING = {
    "ROUND": np.round, "HALF_EVEN": np.round, "CEIL": np.ceil, "FLOOR": np.floor, "DOWN": np.fix,
    "UP": lambda v: np.sign(v) * np.ceil(np.abs(v)),
    "HALF_UP": lambda v: np.sign(v) * np.floor(np.abs(v) + 0.5),
    "HALF_DOWN": lambda v: np.sign(v) * np.ceil(np.abs(v) - 0.5),
}
_CONTAINERS = [  # (ONNX type, NumPy type), smallest first
    (TensorProto.INT8, np.int8), (TensorProto.UINT8, np.uint8), (TensorProto.INT16, np.int16), (TensorProto.UINT16, np.uint16),
]


def is_qonnx_node(node: NodeProto) -> bool:
    return node.domain in QONNX_DOMAINS and node.op_type in QONNX_OPS


def _label(node: NodeProto) -> str:
    return f"node '{node.name}' (QONNX {node.op_type})" if node.name else f"QONNX {node.op_type} node"


def _attribute(node: NodeProto, name: str, default):
    found = next((a for a in node.attribute if a.name == name), None)
    value = default if found is None else helper.get_attribute_value(found)
    return value.decode() if isinstance(value, bytes) else value


def int_range(bits: int, signed: bool, narrow: bool) -> tuple[int, int]:
    """QONNX's min_int / max_int of a `bits`-bit integer."""
    if signed:
        return -(2 ** (bits - 1)) + int(narrow), 2 ** (bits - 1) - 1
    return 0, 2**bits - 1 - int(narrow)


def _container(lo: int, hi: int):
    """The smallest ONNX integer type holding [lo, hi], unsigned for a range without negatives
    (the type the next quantizer most likely has: no requantize between types): (TensorProto
    type, NumPy type) or None."""
    order = _CONTAINERS if lo < 0 else sorted(_CONTAINERS, key=lambda c: (np.iinfo(c[1]).bits, -int(np.iinfo(c[1]).min)))
    return next(((t, d) for t, d in order if np.iinfo(d).min <= lo and hi <= np.iinfo(d).max), None)


class _Rewriter:
    def __init__(self, model: ModelProto):
        self.model = model
        graph = model.graph
        runtime = {i.name for i in graph.input}
        self.constants = {t.name: numpy_helper.to_array(t) for t in graph.initializer if t.name not in runtime}
        for node in graph.node:
            if node.op_type == "Constant" and node.domain in ("", "ai.onnx") and len(node.attribute) == 1 \
                    and node.attribute[0].name == "value":
                self.constants[node.output[0]] = numpy_helper.to_array(node.attribute[0].t)
        self.initializers: list[TensorProto] = []
        self.nodes: list[NodeProto] = []
        self.count = 0
        self.wide = False  # a 16-bit QuantizeLinear / DequantizeLinear was written (opset 21)

    def fresh(self, node: NodeProto, what: str) -> str:
        self.count += 1
        return f"{node.output[0]}__qonnx_{what}{self.count}"

    def const(self, node: NodeProto, array: np.ndarray, what: str) -> str:
        name = self.fresh(node, what)
        self.initializers.append(numpy_helper.from_array(np.asarray(array), name))
        self.constants[name] = np.asarray(array)
        return name

    def emit(self, node: NodeProto, op_type: str, inputs: list[str], output: str | None = None, **attrs) -> str:
        output = output or self.fresh(node, op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [output], name=f"{node.name or node.output[0]}/{op_type}", **attrs))
        return output

    def constant(self, node: NodeProto, index: int, what: str) -> np.ndarray:
        name = node.input[index] if index < len(node.input) else ""
        if name not in self.constants:
            hint = " (a graph input: compile with --freeze to make it the constant it defaults to)" if name in {
                i.name for i in self.model.graph.input} else ""
            raise ZantError(f"{_label(node)}: its {what} '{name}' is not a constant{hint}")
        return self.constants[name]

    def scale(self, node: NodeProto, index: int, what: str = "scale") -> np.ndarray:
        scale = self.constant(node, index, what).astype(np.float32)
        if scale.size == 0 or not np.all(np.isfinite(scale) & (scale > 0)):
            raise ZantError(f"{_label(node)}: its {what} must be positive and finite, not {scale.ravel()[:4].tolist()}")
        return scale

    def bits(self, node: NodeProto, index: int, what: str = "bit width") -> int:
        value = self.constant(node, index, what)
        if value.size != 1 or not float(value.reshape(-1)[0]).is_integer():
            raise ZantError(f"{_label(node)}: its {what} must be one integer, not {value.ravel()[:4].tolist()}")
        bits = int(value.reshape(-1)[0])
        if not 1 <= bits <= 16:
            raise ZantError(f"{_label(node)}: {what} {bits}: integer kernels take 1 to 16 bits")
        return bits

    def zero_point(self, node: NodeProto, index: int) -> np.ndarray:
        zero_point = self.constant(node, index, "zero point").astype(np.float32)
        if not np.all(np.mod(zero_point, 1) == 0):
            raise ZantError(f"{_label(node)}: its zero point must be integers, not {zero_point.ravel()[:4].tolist()}")
        return zero_point

    def rounding(self, node: NodeProto, default: str):
        mode = str(_attribute(node, "rounding_mode", default)).upper()
        if mode not in _ROUNDING:
            raise ZantError(f"{_label(node)}: unknown rounding_mode '{mode}'")
        return mode


def _axis(node: NodeProto, *arrays: np.ndarray) -> int | None:
    """The one axis (negative, counted from the last) along which the parameter arrays vary, None
    for scalars; a ZantError for anything else."""
    axes = set()
    for array in arrays:
        if array.size == 1:
            continue
        varying = [i - array.ndim for i, d in enumerate(array.shape) if d != 1]
        if len(varying) != 1:
            raise ZantError(f"{_label(node)}: parameters of shape {list(array.shape)}: only per tensor or along one axis")
        axes.add(varying[0])
    if len(axes) > 1:
        raise ZantError(f"{_label(node)}: scale and zero point vary along different axes")
    return axes.pop() if axes else None


def _flat(array: np.ndarray, axis: int | None, dtype) -> np.ndarray:
    """A parameter as QuantizeLinear takes it: a scalar, or a 1-D array along `axis`."""
    return np.asarray(array.reshape(-1)[0] if axis is None else array.reshape(-1), dtype)


def _per_axis_parameters(r: _Rewriter, node: NodeProto, scale: np.ndarray, zero_point: np.ndarray, dtype):
    axis = _axis(node, scale, zero_point)
    if axis is not None:
        size = max(scale.size, zero_point.size)
        scale, zero_point = (np.broadcast_to(a.reshape(-1), (size,)) if a.size == 1 else a for a in (scale, zero_point))
    attrs = {} if axis is None else {"axis": axis}
    return _flat(scale, axis, np.float32), _flat(zero_point, axis, dtype), attrs


def _dequantized_constant(r: _Rewriter, node: NodeProto, codes: np.ndarray, scale: np.ndarray, zero_point: np.ndarray, lo: int, hi: int) -> None:
    """The node's output as DequantizeLinear(codes, scale, zero_point) of a constant."""
    found = _container(min(lo, int(zero_point.min())), max(hi, int(zero_point.max())))
    if found is None:
        raise ZantError(f"{_label(node)}: codes [{lo}, {hi}] and zero point do not fit a 16-bit integer")
    onnx_type, dtype = found
    r.wide |= onnx_type in (TensorProto.INT16, TensorProto.UINT16)
    s, z, attrs = _per_axis_parameters(r, node, scale, zero_point, dtype)
    if "axis" in attrs:
        attrs["axis"] = attrs["axis"] % codes.ndim
    q = r.const(node, codes.astype(dtype), "codes")
    r.emit(node, "DequantizeLinear", [q, r.const(node, s, "scale"), r.const(node, z, "zero_point")], node.output[0], **attrs)


def _quant(r: _Rewriter, node: NodeProto) -> None:
    scale, zero_point = r.scale(node, 1), r.zero_point(node, 2)
    bits = r.bits(node, 3)
    signed, narrow = bool(_attribute(node, "signed", 1)), bool(_attribute(node, "narrow", 0))
    mode = r.rounding(node, "ROUND")
    if bits == 1 and signed:  # QONNX computes a signed 1-bit Quant as a bipolar one
        _bipolar(r, node, scale)
        return
    lo, hi = int_range(bits, signed, narrow)
    x = node.input[0]
    if x in r.constants:
        y = r.constants[x].astype(np.float32) / scale + zero_point
        codes = _ROUNDING[mode](np.clip(y, lo, hi))
        _dequantized_constant(r, node, codes, scale, zero_point, lo, hi)
        return
    if mode not in ("ROUND", "HALF_EVEN"):
        raise ZantError(f"{_label(node)}: rounding_mode {mode} on a run-time tensor: only ROUND (half to even, "
                        "QuantizeLinear's) has an integer form")
    found = _container(lo, hi)
    if found is None or not (lo <= zero_point.min() and zero_point.max() <= hi):
        raise ZantError(f"{_label(node)}: its zero point lies outside the {bits}-bit range [{lo}, {hi}]")
    onnx_type, dtype = found
    r.wide |= onnx_type in (TensorProto.INT16, TensorProto.UINT16)
    s, z, attrs = _per_axis_parameters(r, node, scale, zero_point, dtype)
    s_name, z_name = r.const(node, s, "scale"), r.const(node, z, "zero_point")
    q = r.emit(node, "QuantizeLinear", [x, s_name, z_name], **attrs)
    info = np.iinfo(dtype)
    if (lo, hi) != (info.min, info.max):
        q = r.emit(node, "Clip", [q, r.const(node, np.array(lo, dtype), "lo"), r.const(node, np.array(hi, dtype), "hi")])
    r.emit(node, "DequantizeLinear", [q, s_name, z_name], node.output[0], **attrs)


def _bipolar(r: _Rewriter, node: NodeProto, scale: np.ndarray | None = None) -> None:
    scale = r.scale(node, 1) if scale is None else scale
    x = node.input[0]
    if x in r.constants:
        codes = np.where(r.constants[x].astype(np.float32) >= 0, 1, -1)
        _dequantized_constant(r, node, codes, scale, np.zeros_like(scale), -1, 1)
        return
    zero = r.const(node, np.array(0, np.float32), "zero")
    positive = r.const(node, scale, "scale")
    negative = r.const(node, -scale, "negative_scale")
    r.emit(node, "Where", [r.emit(node, "GreaterOrEqual", [x, zero]), positive, negative], node.output[0])


def _trunc(r: _Rewriter, node: NodeProto) -> None:
    version2 = len(node.input) >= 6
    scale, zero_point = r.scale(node, 1), r.zero_point(node, 2)
    in_bits = r.bits(node, 3, "input bit width")
    out_scale = r.scale(node, 4, "output scale") if version2 else scale
    out_bits = r.bits(node, 5 if version2 else 4, "output bit width")
    mode = r.rounding(node, "FLOOR")
    if scale.size != 1 or out_scale.size != 1 or zero_point.size != 1:
        raise ZantError(f"{_label(node)}: only per-tensor scales and zero points")
    if version2:
        shift = float(np.round(np.log2(out_scale.reshape(-1)[0] / scale.reshape(-1)[0])))
        signed, narrow = bool(_attribute(node, "signed", 1)), bool(_attribute(node, "narrow", 0))
        lo, hi = int_range(out_bits, signed, narrow)
    else:
        shift = float(in_bits - out_bits)
        lo, hi = None, None  # version 1 does not clamp
    trunc_scale = np.float32(2.0**shift)
    x = node.input[0]
    if x in r.constants:
        q = np.round(r.constants[x].astype(np.float32) / scale + zero_point) / trunc_scale
        q = _ROUNDING[mode](q if lo is None else np.clip(q, lo, hi))
        offset = zero_point / trunc_scale if version2 else zero_point
        if not np.all(np.mod(offset, 1) == 0):
            raise ZantError(f"{_label(node)}: zero point {zero_point.ravel()[0]} is not an integer after the truncation")
        span = (int(q.min()), int(q.max())) if q.size else (0, 0)
        _dequantized_constant(r, node, q, out_scale, offset.astype(np.float32), *span)
        return
    if float(zero_point.reshape(-1)[0]) != 0:
        raise ZantError(f"{_label(node)}: a non-zero zero point on a run-time tensor is not supported")
    if mode not in ("ROUND", "HALF_EVEN", "FLOOR", "CEIL"):
        raise ZantError(f"{_label(node)}: rounding_mode {mode} on a run-time tensor is not supported (ROUND, FLOOR, CEIL)")
    # q = round(x / s), the input's codes, in a type holding [lo · t, hi · t]: the codes whose
    # q / t the clamp keeps (saturating the others changes nothing after the clamp); version 1
    # (no clamp): in_bits bits of either sign.
    if lo is None:
        span = (-(2**in_bits), 2**in_bits - 1)
        lo, hi = int(np.floor(span[0] / trunc_scale)), int(np.ceil(span[1] / trunc_scale))
    else:
        span = (int(np.floor(lo * trunc_scale)), int(np.ceil(hi * trunc_scale)))
    found = _container(*span)
    if found is None:
        raise ZantError(f"{_label(node)}: input codes {list(span)} do not fit a 16-bit integer")
    in_type, in_dtype = found
    found = _container(lo, hi)
    if found is None:
        raise ZantError(f"{_label(node)}: output codes [{lo}, {hi}] do not fit a 16-bit integer")
    out_type, out_dtype = found
    r.wide |= TensorProto.INT16 in (in_type, out_type) or TensorProto.UINT16 in (in_type, out_type)
    q = r.emit(node, "QuantizeLinear", [x, r.const(node, scale.reshape(()), "scale"), r.const(node, np.array(0, in_dtype), "zero_point")])
    step = r.const(node, np.array(1.0 / trunc_scale, np.float32), "step")  # 2^-shift: exact
    q_over_t = r.emit(node, "DequantizeLinear", [q, step, r.const(node, np.array(0, in_dtype), "zero_point")])
    one, out_zero = r.const(node, np.array(1.0, np.float32), "one"), r.const(node, np.array(0, out_dtype), "zero_point")
    if mode in ("ROUND", "HALF_EVEN"):
        y = r.emit(node, "QuantizeLinear", [q_over_t, one, out_zero])
        info = np.iinfo(out_dtype)
        if (lo, hi) != (info.min, info.max):
            y = r.emit(node, "Clip", [y, r.const(node, np.array(lo, out_dtype), "lo"), r.const(node, np.array(hi, out_dtype), "hi")])
        r.emit(node, "DequantizeLinear", [y, r.const(node, out_scale.reshape(()), "output_scale"), out_zero], node.output[0])
        return
    rounded = r.emit(node, "Floor" if mode == "FLOOR" else "Ceil", [q_over_t])
    bounds = [r.const(node, np.array(v, np.float32), name) for v, name in ((lo, "lo"), (hi, "hi"))]
    clipped = r.emit(node, "Clip", [rounded, *bounds])
    r.emit(node, "Mul", [clipped, r.const(node, out_scale.reshape(()), "output_scale")], node.output[0])


_REWRITES = {"Quant": _quant, "BipolarQuant": _bipolar, "Trunc": _trunc}


def lower_qonnx(model: ModelProto) -> ModelProto:
    """`model` with every QONNX node rewritten (see the module docstring); the same object when it
    has none."""
    if not any(is_qonnx_node(n) for n in model.graph.node):
        return model
    rewritten = ModelProto()
    rewritten.CopyFrom(model)
    r = _Rewriter(rewritten)
    for node in rewritten.graph.node:
        if is_qonnx_node(node):
            _REWRITES[node.op_type](r, node)
        else:
            r.nodes.append(node)
    graph = rewritten.graph
    del graph.node[:]
    graph.node.extend(r.nodes)
    graph.initializer.extend(r.initializers)
    used = {name for n in graph.node for name in n.input} | {o.name for o in graph.output}
    kept = [t for t in graph.initializer if t.name in used or t.name in {i.name for i in graph.input}]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    opsets = [o for o in rewritten.opset_import if o.domain not in QONNX_DOMAINS]
    del rewritten.opset_import[:]
    rewritten.opset_import.extend(opsets)
    default = next((o for o in rewritten.opset_import if o.domain in ("", "ai.onnx")), None)
    needed = 21 if r.wide else 13  # 16-bit QuantizeLinear from opset 21; per-axis from 13
    if default is None:
        rewritten.opset_import.append(helper.make_opsetid("", needed))
    elif default.version < needed:
        default.version = needed
    return rewritten


__all__ = ["QONNX_DOMAINS", "int_range", "is_qonnx_node", "lower_qonnx"]
