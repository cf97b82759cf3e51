"""`outline-kernels`: each top-level loop nest of an entry function becomes a function of its own.

The kernel unit of the generated code, decided here rather than in the Zig printer: a top-level
`uop.range` of an entry function (a public `func.func`, the graph's `@main`) moves into a private
`func.func @kernel_T`, named after the tensor it stores last (T: the end of a fused chain, made
unique in the module with `_1`, `_2` …), and a `func.call` takes its place, carrying its location
(the ONNX nodes it computes: `zant.ir.locations`). The kernel's arguments are the values its ops
use from the entry function, in order of first use, found from the IR's uses: the buffers it
reads and writes (graph inputs and outputs, scratch, constants) and the scalars computed before
it. What needs no argument moves in with it: a `uop.const` is cloned into the kernel, and a
`uop.view` defined outside is cloned too, its buffer passed instead.

A loop nest stays where it is when it updates an accumulator of the function around it (a
`uop.define_acc` outside it) or defines a buffer (the arena plan reads those from the entry
function). Run it last: the Zig printer prints each kernel as a Zig function and each call as a
call of it (`zant.backend.zig_printer`), and passes after it would see only calls.

    func.func @main() {
      %x = uop.define_global "x" input 0 : !uop.buffer<4 x f32>
      %y = uop.define_global "y" output 0 : !uop.buffer<4 x f32>
      uop.range %i = 0 to 4 { ... %x ... %y ... }
    }

becomes

    func.func @main() {
      %x = uop.define_global "x" input 0 : !uop.buffer<4 x f32>
      %y = uop.define_global "y" output 0 : !uop.buffer<4 x f32>
      func.call @kernel_y(%x, %y) : (!uop.buffer<4 x f32>, !uop.buffer<4 x f32>) -> ()
    }
    func.func private @kernel_y(%x: !uop.buffer<4 x f32>, %y: !uop.buffer<4 x f32>) {
      uop.range %i = 0 to 4 { ... %x ... %y ... }
      func.return
    }
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from zant.dialects import abi, uop

KERNEL_PREFIX = "kernel_"


def _defined_inside(value: SSAValue, inside: set[Operation]) -> bool:
    owner = value.owner
    return (owner.parent_op() if isinstance(owner, Block) else owner) in inside


@dataclass
class _Captures:
    """What a loop nest uses from the function around it: its arguments (in order of first use)
    and the ops cloned in with it (constants and views, in order of first use)."""

    arguments: dict[SSAValue, None]
    cloned: dict[Operation, None]


def _captures(loop: uop.RangeOp) -> _Captures | None:
    """The values `loop` uses from outside, or None when it must stay inline (it updates an
    accumulator of the function, or defines a buffer or an arena)."""
    ops = list(loop.walk())
    inside = set(ops)
    captures = _Captures({}, {})

    def capture(value: SSAValue) -> bool:
        owner = value.owner
        if isinstance(owner, uop.ConstOp):
            captures.cloned[owner] = None
        elif isinstance(owner, uop.ViewOp):
            if not capture(owner.source):
                return False
            captures.cloned[owner] = None
        elif isinstance(owner, uop.DefineAccOp):
            return False
        else:
            captures.arguments[value] = None
        return True

    for op in ops:
        if isinstance(op, uop.DefineGlobalOp | uop.DefineLocalOp | abi.ArenaOp):
            return None
        for value in op.operands:
            if not _defined_inside(value, inside) and not capture(value):
                return None
    return captures


def kernel_base_name(loop: uop.RangeOp) -> str:
    """`kernel_T`, T the tensor `loop` stores last (through geps and views), or `kernel_loop`."""
    stores = [op for op in loop.walk() if isinstance(op, uop.StoreOp | uop.VStoreOp)]
    if stores:
        value = stores[-1].ptr
        while isinstance(value.owner, uop.GepOp | uop.ViewOp):
            value = value.owner.operands[0]
        if isinstance(value.owner, uop.DefineGlobalOp | uop.DefineLocalOp):
            return KERNEL_PREFIX + value.owner.tensor_name.data
    return KERNEL_PREFIX + "loop"


def outline(loop: uop.RangeOp, name: str) -> tuple[func.FuncOp, list[SSAValue]] | None:
    """Move `loop` into a new private function `name`, and the values to call it with; None
    if it stays."""
    captures = _captures(loop)
    if captures is None:
        return None
    arguments = list(captures.arguments)
    block = Block(arg_types=[value.type for value in arguments])
    mapping: dict[SSAValue, SSAValue] = {}
    for value, argument in zip(arguments, block.args, strict=True):
        argument.name_hint = value.name_hint
        mapping[value] = argument
    # Cloned in order of first use: a view after the views and constants it reads.
    for op in sorted(captures.cloned, key=_position(loop)):
        clone = op.clone(dict(mapping))
        block.add_op(clone)
        mapping.update(zip(op.results, clone.results))
    loop.detach()
    block.add_op(loop)
    for op in loop.walk():
        for index, operand in enumerate(op.operands):
            if operand in mapping:
                op.operands[index] = mapping[operand]
    block.add_op(func.ReturnOp())
    return func.FuncOp(name, ([value.type for value in arguments], []), Region(block), visibility="private"), arguments


def _position(loop: uop.RangeOp):
    """Sort key: an op's position in its block (the cloned ops all precede `loop` there)."""
    order = {op: index for index, op in enumerate(loop.parent_block().ops)} if loop.parent_block() else {}
    return lambda op: order.get(op, -1)


@dataclass(frozen=True)
class OutlineKernelsPass(ModulePass):
    """Each top-level loop nest of an entry function becomes a private `func.func @kernel_T`,
    called where it was (the module docstring)."""

    name = "outline-kernels"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        functions = [f for f in op.ops if isinstance(f, func.FuncOp)]
        taken = {f.sym_name.data for f in functions}
        for function in functions:
            if function.sym_visibility is not None and function.sym_visibility.data == "private":
                continue  # a kernel already, or a helper: not an entry function
            if not function.body.blocks:
                continue
            for loop in [o for o in function.body.block.ops if isinstance(o, uop.RangeOp)]:
                name = base = kernel_base_name(loop)
                counter = 1
                while name in taken:
                    name = f"{base}_{counter}"
                    counter += 1
                block = loop.parent_block()
                assert block is not None
                successor = loop.next_op
                outlined = outline(loop, name)
                if outlined is None:
                    continue
                kernel, arguments = outlined
                taken.add(name)
                call = func.CallOp(name, arguments, [])
                call.location = loop.location
                if successor is None:
                    block.add_op(call)
                else:
                    block.insert_op_before(call, successor)
                op.body.block.add_op(kernel)
