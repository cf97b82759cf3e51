"""`signed-activations`: uint8 tensors whose every reader and writer allows it become int8 codes
shifted by -128, zero points with them.

onnxruntime's `quantize_static` with `QuantType.QUInt8` activations (its QOperator default)
writes uint8 activations with a zero point per tensor (0 after a ReLU, often 128 or near it).
The integer kernels of the DSP cores read int8 (`SXTB16`/`SMLAD` on packed signed bytes, the
pointwise column tiles, the paired depthwise taps, the window form), so such a model took their
generic loops: kws_qop_uint8 8.35 M cycles on the L4R5 against 5.08 M for its QDQ int8 twin.

A uint8 code q of zero point z and the int8 code q - 128 of zero point z - 128 stand for the
same real value s · (q - z), and every op of `SHIFTS` computes the same thing on either:

* the integer kernels read only differences to a zero point (QLinearConv, QLinearMatMul,
  QLinearAdd …) and add the output's zero point before saturating to the type's range, which
  moves with it; QuantizeLinear and DequantizeLinear are the same boundary;
* `LookupTable` indexes its table by the code's position in its type (X for uint8, X + 128 for
  int8): the same entry; a shifted table gives shifted results;
* the ops that move, select or compare codes (Reshape, Concat, MaxPool, Max, Clip, Pad,
  Where …) commute with a shift of all their codes, bounds and fill values included.

So the pass splits the uint8 values into classes that must keep one type: the values an op's
schema gives one type variable (QLinearConv's x and x_zero_point, Clip's input and bounds,
Concat's inputs and result), joined over the graph. A class becomes int8 when every op
touching it is an `onnx.Constant` (its values shifted, a new constant) or in `SHIFTS`, no
default zero point is implied by an absent optional input (`SHIFTS`' indices), and it holds no
graph input or output (their element type is the caller's). Scales, int32 biases and int8
weights are untouched; uint8 weights with their zero point become int8 too (a weight zero point
of 128 becomes 0, which the fast forms require).

Not shifted (their class keeps uint8): a Resize marked `zant.requantize` (its zero points are an
attribute), uint16 (the same shift by 32768 would apply), anything that reads codes as numbers
(Cast, Relu, Add on codes …). The result is bit for bit the same: only the graph's own inputs
and outputs are observable, and their types do not change.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerType, ModuleOp, Signedness, TensorType
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from zant.dialects.onnx import REQUANTIZE, ConstantOp, OnnxOp, inputs, outputs
from zant.ir.resources import constant_array, make_constant_attr

UINT8 = IntegerType(8, Signedness.UNSIGNED)
INT8 = IntegerType(8)
SHIFT = 128

SHIFTS: dict[str, tuple[int, ...]] = {
    # Quantization boundaries and integer kernels: they read x - x_zero_point and write
    # result + y_zero_point, saturated to the type's range.
    "QuantizeLinear": (2,), "DequantizeLinear": (2,),
    "QLinearConv": (), "QLinearMatMul": (), "ConvInteger": (2, 3), "MatMulInteger": (2, 3),
    "QLinearAdd": (), "QLinearMul": (), "QLinearAveragePool": (), "QLinearSoftmax": (),
    "QLinearLeakyRelu": (),
    # X by its position in its type; Table and Y one class.
    "LookupTable": (),
    # Codes moved, selected or compared (bounds, fill values and pads' lowest value shift too).
    "Reshape": (), "Flatten": (), "Squeeze": (), "Unsqueeze": (), "Transpose": (), "Identity": (),
    "Slice": (), "Gather": (), "Split": (), "Concat": (), "Expand": (), "Tile": (),
    "DepthToSpace": (), "SpaceToDepth": (), "Resize": (), "Where": (),
    "MaxPool": (), "GlobalMaxPool": (), "ReduceMax": (), "ReduceMin": (), "ArgMax": (), "ArgMin": (),
    "Max": (), "Min": (), "Clip": (), "Pad": (2,),
    "Shape": (), "Size": (),
}
"""The ops that compute the same on codes shifted by -128 with their zero points (module
docstring), by ONNX op type, each with the optional inputs whose absence means a uint8 zero
(a zero point of 0, Pad's fill of 0): absent, the class keeps uint8."""


def _shifts(op: Operation) -> bool:
    """Whether `op` is in `SHIFTS` (an ONNX-domain or com.microsoft / ai.zant op of that type)
    and carries no zero point of its own as an attribute."""
    return isinstance(op, OnnxOp) and type(op).ONNX_SCHEMA.op_type in SHIFTS and REQUANTIZE not in op.attributes


def _is_uint8(value: SSAValue | None) -> bool:
    return value is not None and isinstance(value.type, TensorType) and value.type.get_element_type() == UINT8


def _formal_types(op: OnnxOp) -> tuple[list[tuple[SSAValue | None, str]], list[tuple[SSAValue | None, str]]]:
    """Each ONNX input and output of `op` with its formal's type string (the schema's type
    variable, or a literal type); a variadic formal (always the last) covers the rest."""
    schema = op.spec().schema

    def pair(values, formals):
        return [(v, formals[min(i, len(formals) - 1)].type_str) for i, v in enumerate(values)]

    return pair(inputs(op), schema.inputs), pair(outputs(op), schema.outputs)


class _Classes:
    """Union-find over uint8 values, a class blocked once any member is."""

    def __init__(self) -> None:
        self.parent: dict[SSAValue, SSAValue] = {}
        self.blocked: set[SSAValue] = set()

    def find(self, v: SSAValue) -> SSAValue:
        self.parent.setdefault(v, v)
        while self.parent[v] is not v:
            self.parent[v] = self.parent[self.parent[v]]
            v = self.parent[v]
        return v

    def union(self, a: SSAValue, b: SSAValue) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra is not rb:
            self.parent[ra] = rb
            if ra in self.blocked:
                self.blocked.add(rb)

    def block(self, v: SSAValue) -> None:
        self.blocked.add(self.find(v))

    def free(self) -> list[SSAValue]:
        return [v for v in self.parent if self.find(v) not in self.blocked]


def shiftable_values(module: ModuleOp) -> list[SSAValue]:
    """The uint8 values of `module` that can become int8 codes shifted by -128 (module
    docstring), in program order."""
    classes = _Classes()
    for op in module.walk():
        for block in (b for region in op.regions for b in region.blocks):
            for arg in block.args:
                if _is_uint8(arg):
                    classes.block(arg)  # a graph input, or a subgraph's argument
        touched = [v for v in (*op.operands, *op.results) if _is_uint8(v)]
        if not touched:
            continue
        if isinstance(op, ConstantOp) and "value" in op.properties:
            classes.find(op.results[0])
            continue
        if not _shifts(op):
            for v in touched:
                classes.block(v)
            continue
        ins, outs = _formal_types(op)
        by_variable: dict[str, list[SSAValue]] = {}
        for value, type_str in (*ins, *outs):
            if _is_uint8(value):
                if type_str.startswith("tensor("):
                    classes.block(value)  # uint8 by definition
                by_variable.setdefault(type_str, []).append(value)
        for index in SHIFTS[type(op).ONNX_SCHEMA.op_type]:
            if index >= len(ins) or ins[index][0] is None:
                # An absent zero point (fill value) is a uint8 0: its class keeps uint8.
                type_str = op.spec().schema.inputs[min(index, len(op.spec().schema.inputs) - 1)].type_str
                for value in by_variable.get(type_str, []):
                    classes.block(value)
        for values in by_variable.values():
            for value in values[1:]:
                classes.union(values[0], value)
    return classes.free()


def _shifted_constant(constant: ConstantOp) -> ConstantOp:
    codes = constant_array(constant).astype(np.int16) - SHIFT
    hint = constant.results[0].name_hint or "shifted"
    shifted = ConstantOp.from_onnx([], [TensorType(INT8, codes.shape)], {"value": make_constant_attr(codes.astype(np.int8), hint)})
    shifted.attributes.update(constant.attributes)
    shifted.results[0].name_hint = constant.results[0].name_hint
    shifted.location = constant.location
    return shifted


@dataclass(frozen=True)
class SignedActivationsPass(ModulePass):
    """uint8 values → int8 codes shifted by -128 where every reader and writer allows it (see
    the module docstring)."""

    name = "signed-activations"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for value in shiftable_values(op):
            owner = value.owner
            if isinstance(owner, ConstantOp):
                shifted = _shifted_constant(owner)
                Rewriter.insert_op(shifted, InsertPoint.before(owner))
                value.replace_all_uses_with(shifted.results[0])
                Rewriter.erase_op(owner)
            else:
                Rewriter.replace_value_with_new_type(value, TensorType(INT8, value.type.get_shape()))


__all__ = ["SHIFTS", "SignedActivationsPass", "shiftable_values"]
