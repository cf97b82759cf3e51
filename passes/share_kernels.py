"""`share-kernels`: kernels that differ only in the buffers they are given and in some constants
become one kernel, called once per layer with those buffers and constants (a build for size).

`outline-kernels` makes one function per loop nest, so the layers of a network that repeats a
block (KWS's four depthwise 3x3 Convs over 25x5x64, ResNet's stages) are as many copies of one
body: the same ops, the same loops, other weights, other scratch buffers and another
requantization shift. In a build for size that is the flash a model spends on code: KWS int8's
four depthwise layers are 3.9 KB of its 10.4 KB of text on the Cortex-M4 in ReleaseSmall.

Two kernels are the same here when their bodies are op for op alike (names, properties and
attributes, result types, which value each operand is, regions alike) except for the values of
`uop.const`s, their function types are equal and every call passes buffers of the same kind at
each position (graph inputs, outputs, constants or scratch). The first of them is kept: each
constant whose values differ among them (at most `MAX_CONSTANTS`) becomes a parameter of it, and
each call passes its own value, a `uop.const` before the call; the others go. A kernel marked
`zant.hot` (`mark-hot-kernels`) is never shared: passed in registers, its buffers and constants
cost it about 5% of its instructions (the constant addresses and shifts LLVM folded), which the
kernels built for speed are not to pay. The Zig printer prints a kernel with several calls with
every buffer it reads as a parameter (`zant.backend.zig_printer`).

The driver runs it last in a build for size (ReleaseSmall) of a model whose scratch arena is the
library's (`zant.driver.options_pipeline`); any other build keeps a function per layer, whose
constant addresses and shifts are faster.

    func.call @kernel_a(%x, %w0, %y) ...        func.call @kernel_a(%x, %w0, %y, %c37) ...
    func.call @kernel_b(%y, %w1, %z) ...   ->   func.call @kernel_a(%y, %w1, %z, %c38) ...
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.ir import Block, SSAValue
from xdsl.passes import ModulePass

from zant.dialects import uop
from zant.dialects.zant import HOT
from zant.ir.types import is_packed
from zant.passes.mark_hot_kernels import is_kernel

MAX_CONSTANTS = 4
"""The most constants a shared kernel takes as parameters (each is a register, or a stack slot
past the fourth argument on Arm)."""


def body_shape(kernel: func.FuncOp) -> tuple[tuple[Hashable, ...], list[uop.ConstOp]]:
    """A kernel's body up to its constants' values: one entry per op (in walk order) of its name,
    properties but a constant's value, attributes, result types, regions' block argument types
    and operands (each as the index of the op or block argument defining it), and its constants
    in that order."""
    numbers: dict[SSAValue, tuple[int, int]] = {}
    for index, argument in enumerate(kernel.body.block.args):
        numbers[argument] = (-1, index)
    shape: list[Hashable] = []
    constants: list[uop.ConstOp] = []
    for position, op in enumerate(kernel.body.walk()):
        properties = dict(op.properties)
        if isinstance(op, uop.ConstOp):
            properties.pop("value")
            constants.append(op)
        blocks = tuple(tuple(arg.type for arg in block.args) for region in op.regions for block in region.blocks)
        shape.append((
            op.name,
            tuple(sorted(properties.items())),
            tuple(sorted(op.attributes.items())),
            tuple(r.type for r in op.results),
            blocks,
            tuple(numbers.get(v, (-2, 0)) for v in op.operands),
        ))
        for index, result in enumerate(op.results):
            numbers[result] = (position, index)
        for region in op.regions:
            for block_index, block in enumerate(region.blocks):
                for index, argument in enumerate(block.args):
                    numbers[argument] = (position, 1000 + 100 * block_index + index)
    return tuple(shape), constants


def _kind(value: SSAValue) -> Hashable:
    """What a call passes at a position: a buffer's role (graph input, output, constant, or
    scratch), or a scalar."""
    owner = value.owner
    if isinstance(owner, uop.DefineGlobalOp):
        return ("global", owner.role.data)
    if isinstance(owner, uop.DefineLocalOp):
        return ("scratch",)
    return ("value",)


@dataclass(frozen=True)
class ShareKernelsPass(ModulePass):
    """Kernels alike up to their buffers and constants become one (the module docstring)."""

    name = "share-kernels"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        calls: dict[str, list[func.CallOp]] = {}
        for call in op.walk():
            if isinstance(call, func.CallOp):
                calls.setdefault(call.callee.string_value(), []).append(call)
        groups: dict[Hashable, list[tuple[func.FuncOp, list[uop.ConstOp]]]] = {}
        for kernel in [k for k in op.ops if is_kernel(k)]:
            assert isinstance(kernel, func.FuncOp)
            own = calls.get(kernel.sym_name.data, [])
            if HOT in kernel.attributes or len(own) != 1:
                continue
            if any(is_packed(getattr(a.type, "element_type", None)) for a in kernel.body.block.args):
                continue  # a packed buffer is two parameters: bytes and element index
            shape, constants = body_shape(kernel)
            key = (kernel.function_type, tuple(_kind(v) for v in own[0].arguments), shape)
            groups.setdefault(key, []).append((kernel, constants))
        for members in groups.values():
            if len(members) > 1:
                self.share(members, calls)

    @staticmethod
    def share(members: list[tuple[func.FuncOp, list[uop.ConstOp]]], calls: dict[str, list[func.CallOp]]) -> None:
        kept, kept_constants = members[0]
        differ = [
            index for index, const in enumerate(kept_constants)
            if any(other[index].value != const.value for _, other in members[1:])
        ]
        if len(differ) > MAX_CONSTANTS:
            return
        block: Block = kept.body.block
        for index in differ:
            const = kept_constants[index]
            argument = block.insert_arg(const.result.type, len(block.args))
            const.result.replace_all_uses_with(argument)
        for index in differ:
            kept_constants[index].detach()
            kept_constants[index].erase()
        inputs = [a.type for a in block.args]
        kept.function_type = FunctionType.from_lists(inputs, list(kept.function_type.outputs.data))
        for kernel, constants in members:
            (call,) = calls[kernel.sym_name.data]
            values = []
            for index in differ:
                value = constants[index].value
                number = value.value.data
                const = uop.ConstOp(number, constants[index].result.type)
                parent = call.parent_block()
                assert parent is not None
                parent.insert_op_before(const, call)
                values.append(const.result)
            shared = func.CallOp(kept.sym_name.data, [*call.arguments, *values], [])
            shared.location = call.location
            parent = call.parent_block()
            assert parent is not None
            parent.insert_op_before(shared, call)
            call.detach()
            call.erase()
            if kernel is not kept:
                kernel.detach()
                kernel.erase()
