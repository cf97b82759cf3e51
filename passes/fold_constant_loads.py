"""`fold-constant-loads`: a `uop.load` of a constant buffer's element at a fixed address becomes
a `uop.const` of that element's value.

    %w = uop.define_global "constant" 0 "w" value dense<[1.0, 6.0]> : tensor<2xf32> : !uop.buffer<2xf32>
    %p = uop.gep %w[%c1] : !uop.buffer<2xf32>          (%c1 = uop.const 1 : index)
    %x = uop.load %p : f32
  → %x = uop.const 6.0 : f32

The address is read through a view too (its strides and offset; a broadcast index does not
matter). Zig would evaluate such a load at compile time by reinterpreting the whole constant
blob, once per load (25 s for the 280 Clip bounds of a MobileNet, in every build mode), so it is
a literal instead. An address outside the buffer is left to its checked gep. A gep left without
users is erased.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from zant.dialects import uop
from zant.ir.resources import attr_to_array
from zant.ir.walk import ops_of


def fixed_address(gep: uop.GepOp) -> int | None:
    """The element a gep addresses when every index that matters is a literal."""
    strides, address = gep.layout
    for index, stride in zip(gep.indices, strides):
        if stride == 0:
            continue
        literal = uop.constant_of(index)
        if literal is None:
            return None
        address += literal.value.data * stride
    return address


@dataclass(frozen=True)
class FoldConstantLoadsPass(ModulePass):
    """Replace loads of constant elements at fixed addresses by their values."""

    name = "fold-constant-loads"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        values: dict[SSAValue, np.ndarray] = {}
        for load in ops_of(op, uop.LoadOp):
            gep = load.ptr.owner
            if not isinstance(gep, uop.GepOp):
                continue
            buffer = gep.buffer.owner
            if not isinstance(buffer, uop.DefineGlobalOp) or buffer.value is None:
                continue
            address = fixed_address(gep)
            if buffer.result not in values:
                values[buffer.result] = attr_to_array(buffer.value).reshape(-1)
            array = values[buffer.result]
            if address is None or not 0 <= address < array.size:
                continue
            literal = uop.ConstOp(array[address].item(), load.result.type)
            literal.location = load.location
            Rewriter.replace_op(load, literal)
            if not gep.result.uses:
                Rewriter.erase_op(gep)
