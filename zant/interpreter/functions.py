"""`@impl` functions for every op of the `uop` and `abi` dialects, and one for the ops of target
dialects that declare their semantics (`arm_dsp`, `arm_mve`: `TargetOpFunctions`), on xDSL's
interpreter.

Memory: a buffer is a flat NumPy array of its element type. A graph input holds the caller's
values, a graph output and a scratch buffer start filled with a poison byte (`POISONS`: what a
read before the first write sees). Once `plan-arenas` has given the scratch buffers offsets,
each is a typed view of one shared scratch arena at its byte offset, so buffers the plan
overlaps share their bytes, as in the generated code. A `uop.view` is the array with strides
and an offset, a `uop.gep` a (array, flat index) pointer, checked against the buffer as a
checked Zig address is (an `inbounds` one too: the interpreter trusts no proof). An
accumulator is a one-element cell.
Scalars and vectors are described in `zant.interpreter.semantics`.

Speed: the ops that fill loop bodies have a kernel (`KERNELS`), a Python function of their
operands' values made once per op; their `@impl` calls it, and `uop.range` runs its body as a
list of steps calling the kernels directly, keyed by value ids, without the interpreter's scopes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import AnyFloat, FloatAttr, IntegerAttr, VectorType
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    ReturnedValues,
    TerminatorValue,
    impl,
    impl_callable,
    impl_terminator,
    register_impls,
)
from xdsl.ir import Block, Operation, SSAValue

from zant.dialects import abi, uop
import zant.interpreter.semantics as sem
from zant.interpreter.semantics import Trap
from zant.ir.resources import attr_to_array
from zant.ir.target_ops import declares_target_semantics
from zant.ir.types import is_packed

_MISSING = object()

POISONS = (0xFF, 0x00)
"""The bytes graph outputs and scratch buffers hold before they are written, one per run: an
output element that differs between a run with each was never written, or computed from
memory that was not (`run_defined`). 0xFF bytes are a NaN for floats (which most float ops
propagate) and -1 for integers."""


@dataclass(frozen=True)
class View:
    """A `uop.view` of a buffer: element (i0, …) is `data[offset + Σ ik·strides[k]]`."""

    data: np.ndarray
    strides: tuple[int, ...]
    offset: int


class Ptr(NamedTuple):
    """A `uop.gep` address: element `index` of the flat array `data`."""

    data: np.ndarray
    index: int


class Cell:
    """A `uop.define_acc` accumulator."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value


@dataclass
class Memory:
    """The graph's buffers of one run: the inputs given, the outputs made (by index)."""

    inputs: list[np.ndarray]
    outputs: dict[int, np.ndarray]
    poison: int = 0xA5
    """The byte the outputs and scratch buffers start filled with."""
    scratch: dict[str | None, np.ndarray] = field(default_factory=dict)
    """The planned scratch arenas by board memory (None: the one without a memory)."""


def _memory(interpreter: Interpreter) -> Memory:
    return interpreter.get_data(UOpFunctions, "memory", lambda: Memory([], {}))


def _tensor_name(value) -> str:
    owner = value.owner
    if isinstance(owner, uop.ViewOp):
        owner = owner.source.owner
    name = getattr(owner, "tensor_name", None)
    return f"'{name.data}'" if name is not None else "a buffer"


def _check(op: Operation, data: np.ndarray, first: int, last: int) -> None:
    """Trap unless elements `first` … `last` of `data` exist (the lanes of a vector access; the
    op's last operand is its pointer)."""
    if first < 0 or last >= data.shape[0]:
        buffer = op.operands[-1]
        gep = buffer.owner
        what = _tensor_name(gep.source) if isinstance(gep, uop.GepOp) else "a buffer"
        raise Trap(
            f"{op.name} reaches element {first if first < 0 else last} of {what}, "
            f"which has {data.shape[0]} elements"
        )


def _scratch_arena(interpreter: Interpreter, op: uop.DefineLocalOp) -> np.ndarray:
    """The planned scratch arena `op` is in (its function has one per board memory it uses,
    `place-memories`): as large as its `abi.arena "scratch"` or, without one, as its buffers
    reach."""
    memory = _memory(interpreter)
    where = _memory_name(op)
    if where not in memory.scratch:
        block = op.parent_block()
        size = 0
        for other in block.ops if block is not None else ():
            if isinstance(other, abi.ArenaOp) and other.role.data == abi.ArenaRole.SCRATCH:
                if _memory_name(other) == where:
                    size = max(size, other.size.value.data)
            elif isinstance(other, uop.DefineLocalOp) and other.offset is not None and _memory_name(other) == where:
                size = max(size, other.offset.value.data + other.result.type.byte_size)
        memory.scratch[where] = np.full(size, memory.poison, np.uint8)
    return memory.scratch[where]


def _memory_name(op: Operation) -> str | None:
    """The board memory a scratch arena or buffer is placed in (`place-memories`), if any."""
    name = getattr(op, "memory", None)
    return None if name is None else name.data


def _poisoned(buffer_type: uop.BufferType, poison: int) -> np.ndarray:
    dtype = sem.dtype_of(buffer_type.element_type)
    return np.full(buffer_type.size.data * dtype.itemsize, poison, np.uint8).view(dtype)


def _alu_name(op: Operation) -> str:
    return op.name.removeprefix("uop.")


class UOpFunctions(InterpreterFunctions):
    """The `uop` ops. Loops run their body once per induction value, in order."""

    def __init__(self):
        self.bodies: dict[Block, _Body] = {}
        self.values: dict[int, SSAValue] = {}
        """The SSA values of every loop body seen, by id (the key of `_Env`)."""
        self.specialized: dict[int, Any] = {}
        """Per op, what its implementation derives from its types once (an ALU op's function,
        a literal, whether a load reads integers)."""

    def kernel(self, op: Operation) -> Callable:
        """`op`'s kernel (`KERNELS`), made once."""
        return self.once(op, KERNELS[type(op)])

    def once(self, op: Operation, make: Callable[[Operation], Any]) -> Any:
        # Keyed by id: an op's own __hash__ is Python code, and this runs once per op executed.
        found = self.specialized.get(id(op), _MISSING)
        if found is _MISSING:
            found = self.specialized[id(op)] = make(op)
        return found

    # -- functions ----------------------------------------------------------------------------

    @impl_callable(func.FuncOp)
    def call_func(self, interpreter: Interpreter, op: func.FuncOp, args: tuple[Any, ...]):
        return interpreter.run_ssacfg_region(op.body, args, op.sym_name.data)

    @impl(func.CallOp)
    def run_call(self, interpreter: Interpreter, op: func.CallOp, args: PythonValues) -> PythonValues:
        # A kernel `outline-kernels` made: its body runs on the caller's buffers.
        return interpreter.call_op(op.callee.string_value(), args)

    @impl_terminator(func.ReturnOp)
    def run_return(
        self, interpreter: Interpreter, op: func.ReturnOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()

    # -- buffers ------------------------------------------------------------------------------

    @impl(uop.DefineGlobalOp)
    def run_define_global(self, interpreter: Interpreter, op: uop.DefineGlobalOp, args: PythonValues):
        buffer_type = op.result.type
        assert isinstance(buffer_type, uop.BufferType)
        index = op.index.value.data
        role = op.role.data
        if role == uop.BufferRole.CONSTANT:
            assert op.value is not None
            data = attr_to_array(op.value).reshape(-1).copy()
            data.flags.writeable = False
            return (data,)
        memory = _memory(interpreter)
        if role == uop.BufferRole.OUTPUT:
            memory.outputs[index] = _poisoned(buffer_type, memory.poison)
            return (memory.outputs[index],)
        if index >= len(memory.inputs):
            raise Trap(f"input {index} ('{op.tensor_name.data}') was not given")
        return (memory.inputs[index],)

    @impl(uop.DefineLocalOp)
    def run_define_local(self, interpreter: Interpreter, op: uop.DefineLocalOp, args: PythonValues):
        buffer_type = op.result.type
        assert isinstance(buffer_type, uop.BufferType)
        if op.offset is None or is_packed(buffer_type.element_type):
            # A packed buffer (int4 …) holds an element per NumPy byte here: its own array, not
            # its planned bytes in the arena (half or a quarter as many).
            return (_poisoned(buffer_type, _memory(interpreter).poison),)
        dtype = sem.dtype_of(buffer_type.element_type)
        start = op.offset.value.data
        arena = _scratch_arena(interpreter, op)
        return (arena[start : start + buffer_type.size.data * dtype.itemsize].view(dtype),)

    @impl(abi.ArenaOp)
    def run_arena(self, interpreter: Interpreter, op: abi.ArenaOp, args: PythonValues):
        return ()

    @impl(uop.ViewOp)
    def run_view(self, interpreter: Interpreter, op: uop.ViewOp, args: PythonValues):
        view_type = op.result.type
        assert isinstance(view_type, uop.ViewType)
        return (View(args[0], view_type.get_strides(), view_type.offset.data),)

    @impl(uop.GepOp)
    def run_gep(self, interpreter: Interpreter, op: uop.GepOp, args: PythonValues):
        return (self.kernel(op)(*args),)

    @impl(uop.LoadOp)
    def run_load(self, interpreter: Interpreter, op: uop.LoadOp, args: PythonValues):
        return (self.kernel(op)(*args),)

    @impl(uop.StoreOp)
    def run_store(self, interpreter: Interpreter, op: uop.StoreOp, args: PythonValues):
        self.kernel(op)(*args)
        return ()

    @impl(uop.VLoadOp)
    def run_vload(self, interpreter: Interpreter, op: uop.VLoadOp, args: PythonValues):
        data, index = args[0]
        n, stride = uop.lanes(op.result.type), op.element_stride
        _check(op, data, index, index + (n - 1) * stride)
        return (data[index : index + n * stride : stride].copy(),)

    @impl(uop.VStoreOp)
    def run_vstore(self, interpreter: Interpreter, op: uop.VStoreOp, args: PythonValues):
        value, (data, index) = args
        n, stride = uop.lanes(op.value.type), op.element_stride
        _check(op, data, index, index + (n - 1) * stride)
        data[index : index + n * stride : stride] = value
        return ()

    # -- scalars and vectors ------------------------------------------------------------------

    @impl(uop.ConstOp)
    def run_const(self, interpreter: Interpreter, op: uop.ConstOp, args: PythonValues):
        return (self.kernel(op)(),)

    @impl(uop.BroadcastOp)
    def run_broadcast(self, interpreter: Interpreter, op: uop.BroadcastOp, args: PythonValues):
        t = op.result.type
        return (np.full(uop.lanes(t), args[0], dtype=sem.dtype_of(t)),)

    @impl(uop.ReduceAddOp)
    def run_reduce_add(self, interpreter: Interpreter, op: uop.ReduceAddOp, args: PythonValues):
        lanes = args[0]
        t = op.result.type
        if sem.is_int(t):
            return (sem.wrapper(t)(sum(int(v) for v in lanes)),)
        total = lanes[0]
        for lane in lanes[1:]:  # lane order, one rounding per lane
            total = total + lane
        return (total,)

    @impl(uop.CastOp)
    def run_cast(self, interpreter: Interpreter, op: uop.CastOp, args: PythonValues):
        return (self.kernel(op)(*args),)

    @impl(uop.CastUnsaturatedOp)
    def run_cast_unsaturated(self, interpreter: Interpreter, op: uop.CastUnsaturatedOp, args: PythonValues):
        return (sem.storage_float_caster(op.result.type, saturate=False)(args[0]),)

    @impl(uop.BitcastOp)
    def run_bitcast(self, interpreter: Interpreter, op: uop.BitcastOp, args: PythonValues):
        if isinstance(op.result.type, VectorType):  # lane by lane: the same bytes
            return (args[0].view(sem.dtype_of(op.result.type)).copy(),)
        return (sem.bitcaster(op.input.type, op.result.type)(args[0]),)

    @impl(uop.WhereOp)
    def run_where(self, interpreter: Interpreter, op: uop.WhereOp, args: PythonValues):
        return (self.kernel(op)(*args),)

    @impl(abi.CheckOp)
    def run_check(self, interpreter: Interpreter, op: abi.CheckOp, args: PythonValues):
        # The generated function returns the status here; the run stops as at a trap.
        if not args[0]:
            raise Trap(f"abi.check failed: the function returns status {op.status.value.data}")
        return ()

    @impl(uop.BoundIndexOp)
    def run_bound_index(self, interpreter: Interpreter, op: uop.BoundIndexOp, args: PythonValues):
        # Before `check-data-indices` an invalid index is the function's STATUS_BAD_INDEX;
        # the run stops as at a trap.
        value, extent = int(args[0]), op.extent.value.data
        if not op.lowest <= value < extent:
            raise Trap(
                f"uop.bound_index: index {value} is outside [{op.lowest}, {extent}): the function "
                f"returns status {abi.Status.BAD_INDEX}"
            )
        return (value + extent if value < 0 else value,)

    # -- loops and accumulators ---------------------------------------------------------------

    @impl(uop.RangeOp)
    def run_range(self, interpreter: Interpreter, op: uop.RangeOp, args: PythonValues):
        """The body once per induction value. The body's ops run as a list of steps (`_Body`:
        their kernels, or their `@impl`s), not through `Interpreter.run_ssacfg_region`: its
        scopes and per-op checks cost ten times the op itself, and a model runs millions of ops
        inside loops."""
        block = op.body.block
        body = self.bodies.get(block)
        if body is None:
            body = self.bodies[block] = _Body(self, interpreter, block)
        outer = interpreter.get_data(UOpFunctions, "env", lambda: None)
        env = _Env(interpreter, outer, self.values)
        interpreter.set_data(UOpFunctions, "env", env)
        try:
            induction_var = id(block.args[0])
            steps = body.steps
            for i in range(op.start.data, op.end.data, op.step.data):
                env[induction_var] = i
                for step in steps:
                    step(env)
        finally:
            interpreter.set_data(UOpFunctions, "env", outer)
        return ()

    @impl_terminator(uop.EndRangeOp)
    def run_endrange(
        self, interpreter: Interpreter, op: uop.EndRangeOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(()), ()

    @impl(uop.DefineAccOp)
    def run_define_acc(self, interpreter: Interpreter, op: uop.DefineAccOp, args: PythonValues):
        element_type = op.result.type.element_type  # type: ignore[attr-defined]
        init = _literal(op.init)
        if isinstance(element_type, VectorType):
            init = np.full(uop.lanes(element_type), init, dtype=sem.dtype_of(element_type))
        return (Cell(init),)

    @impl(uop.MulAccOp)
    def run_mulacc(self, interpreter: Interpreter, op: uop.MulAccOp, args: PythonValues):
        self.kernel(op)(*args)
        return ()

    @impl(uop.FmaOp)
    def run_fma(self, interpreter: Interpreter, op: uop.FmaOp, args: PythonValues):
        return (self.kernel(op)(*args),)

    @impl(uop.AccSetOp)
    def run_acc_set(self, interpreter: Interpreter, op: uop.AccSetOp, args: PythonValues):
        self.kernel(op)(*args)
        return ()

    @impl(uop.AccGetOp)
    def run_acc_get(self, interpreter: Interpreter, op: uop.AccGetOp, args: PythonValues):
        return (self.kernel(op)(*args),)


# -- kernels: what an op computes, as a Python function of its operands' values made once per
# op from its types. The op's @impl calls it; a loop body calls it directly (`_Body`). ---------


def _gep_kernel(op: uop.GepOp) -> Callable:
    def gep(source, *indices) -> Ptr:
        if isinstance(source, View):
            address = source.offset
            for index, stride in zip(indices, source.strides):
                address += index * stride
            data = source.data
        else:
            data, address = source, indices[0]
        if not 0 <= address < data.shape[0]:
            raise Trap(
                f"uop.gep addresses element {address} of {_tensor_name(op.source)}, which has "
                f"{data.shape[0]} elements"
            )
        return Ptr(data, address)

    return gep


def _load_kernel(op: uop.LoadOp) -> Callable:
    if sem.is_int(op.result.type):
        return lambda ptr: int(ptr[0][ptr[1]])
    return lambda ptr: ptr[0][ptr[1]]


def _store_kernel(op: uop.StoreOp) -> Callable:
    def store(value, ptr) -> None:
        ptr[0][ptr[1]] = value

    return store


def _const_kernel(op: uop.ConstOp) -> Callable:
    value = _literal(op.value)
    return lambda: value


def _cast_kernel(op: uop.CastOp) -> Callable:
    target = op.result.type
    if isinstance(target, VectorType):
        dtype = sem.dtype_of(target)
        return lambda x: x.astype(dtype)
    return sem.caster(op.input.type, target)


def _where_kernel(op: uop.WhereOp) -> Callable:
    if isinstance(op.condition.type, VectorType):
        dtype = sem.dtype_of(op.result.type)
        return lambda c, a, b: np.where(c, a, b).astype(dtype)
    return lambda c, a, b: a if c else b


def _mulacc_kernel(op: uop.MulAccOp) -> Callable:
    t = op.lhs.type
    lane = uop.lane_type(t)
    vector = isinstance(t, VectorType)

    def accumulate(cell: Cell, a, b) -> None:
        cell.value = cell.value + a * b  # floats: two roundings; integer vectors wrap in NumPy

    if sem.is_bool(lane):
        def accumulate(cell: Cell, a, b) -> None:  # noqa: F811
            cell.value = (cell.value | (a & b)) if vector else int(cell.value or (a and b))
    elif sem.is_int(lane) and not vector:
        wrap = sem.wrapper(t)

        def accumulate(cell: Cell, a, b) -> None:  # noqa: F811
            cell.value = wrap(cell.value + a * b)
    elif op.fused is not None:
        # One rounding: the product of two floats is exact in f64 (f32, f16), then the sum is
        # rounded to f64 and to the type (a double rounding only on rare exact ties).
        dtype = sem.dtype_of(lane)
        wide = np.float64 if dtype.itemsize < 8 else np.longdouble

        def accumulate(cell: Cell, a, b) -> None:  # noqa: F811
            exact = np.asarray(a, wide) * np.asarray(b, wide) + np.asarray(cell.value, wide)
            cell.value = exact.astype(dtype) if vector else dtype.type(exact)

    return accumulate


def _acc_set_kernel(op: uop.AccSetOp) -> Callable:
    def acc_set(cell: Cell, value) -> None:
        cell.value = value

    return acc_set


def _acc_get_kernel(op: uop.AccGetOp) -> Callable:
    return lambda cell: cell.value


class _Env(dict):
    """The values of a loop body by the `id` of their SSA value (an int hashes in C; an
    SSAValue's hash is Python code): its own, and (looked up once, then kept) those of the code
    around it: the enclosing loop's `_Env`, or the interpreter's scopes at the top."""

    def __init__(self, interpreter: Interpreter, outer: _Env | None, values: dict[int, SSAValue]):
        super().__init__()
        self.interpreter = interpreter
        self.outer = outer
        self.values = values

    def __missing__(self, key: int):
        if self.outer is not None:
            found = self.outer[key]
        else:
            found = self.interpreter.get_values((self.values[key],))[0]
        self[key] = found
        return found


class _Body:
    """A loop body as a list of steps, each a function of the body's `_Env`: an op with a
    kernel (`KERNELS`) calls it on its operands' values; any other op calls its `@impl`."""

    def __init__(self, functions: UOpFunctions, interpreter: Interpreter, block: Block):
        self.steps: list[Callable[[_Env], None]] = []
        for op in block.ops:
            if isinstance(op, uop.EndRangeOp):
                continue
            for value in (*op.operands, *op.results):
                functions.values[id(value)] = value
            self.steps.append(_step(functions, interpreter, op))
        functions.values[id(block.args[0])] = block.args[0]


def _step(functions: UOpFunctions, interpreter: Interpreter, op: Operation) -> Callable[[_Env], None]:
    operands = tuple(id(v) for v in op.operands)
    results = tuple(id(r) for r in op.results)
    if type(op) in KERNELS:
        kernel = functions.kernel(op)
        if len(results) == 1:
            (r,) = results
            if len(operands) == 1:
                (a,) = operands
                return lambda env: env.__setitem__(r, kernel(env[a]))
            if len(operands) == 2:
                a, b = operands
                return lambda env: env.__setitem__(r, kernel(env[a], env[b]))
            return lambda env: env.__setitem__(r, kernel(*[env[v] for v in operands]))
        return lambda env: kernel(*[env[v] for v in operands])
    entry = IMPLEMENTATIONS.get(type(op))
    if entry is None:
        raise Trap(f"the uop interpreter cannot run '{op.name}'")
    owner, run = entry
    ft = functions if owner is UOpFunctions else owner()

    def step(env: _Env) -> None:
        values = run(ft, interpreter, op, tuple([env[v] for v in operands])).values
        for result, value in zip(results, values):
            env[result] = value

    return step


def _literal(attr: IntegerAttr | FloatAttr):
    return sem.scalar(attr.value.data, attr.type)


# -- the ALU ops: one implementation per family, registered for every op of it ----------------


def _alu_function(op: Operation) -> Callable:
    """The Python function of an ALU op on its operands' values, chosen by its types."""
    name = _alu_name(op)
    t = op.operands[0].type
    lane = uop.lane_type(t)
    if isinstance(op, uop.CompareOp):
        compare = sem.compare(name)
        if isinstance(t, VectorType):
            return compare
        return lambda a, b: int(compare(a, b))
    binary = isinstance(op, uop.BinaryOp)
    if isinstance(t, VectorType):
        if binary:
            table = sem.VECTOR_FLOAT_BINARY if isinstance(lane, AnyFloat) else sem.VECTOR_INT_BINARY
        else:
            table = sem.VECTOR_UNARY
        if name not in table:
            raise Trap(f"{op.name} takes no {t}")
        return table[name]
    if isinstance(t, AnyFloat):
        table = sem.FLOAT_BINARY if binary else sem.FLOAT_UNARY
        if name not in table:
            raise Trap(f"{op.name} takes no {t}")
        return table[name]
    return sem.integer_binary(name, t) if binary else sem.integer_unary(name, t)


def _alu(self: UOpFunctions, interpreter: Interpreter, op: Operation, args: PythonValues):
    return (self.kernel(op)(*args),)


for _op in uop.ALU_OPS.values():
    setattr(UOpFunctions, f"run_{_alu_name(_op)}", impl(_op)(_alu))
register_impls(UOpFunctions)

KERNELS: dict[type[Operation], Callable[[Operation], Callable]] = {
    uop.GepOp: _gep_kernel,
    uop.LoadOp: _load_kernel,
    uop.StoreOp: _store_kernel,
    uop.ConstOp: _const_kernel,
    uop.CastOp: _cast_kernel,
    uop.WhereOp: _where_kernel,
    uop.MulAccOp: _mulacc_kernel,
    uop.FmaOp: lambda op: sem.fma,  # rounded once, exactly (not through f64: no double rounding)
    uop.AccSetOp: _acc_set_kernel,
    uop.AccGetOp: _acc_get_kernel,
    **dict.fromkeys(uop.ALU_OPS.values(), _alu_function),
}
"""The ops that run most often in loops, by the function that makes an op's kernel."""


class TargetOpFunctions(InterpreterFunctions):
    """The ops of target dialects (`arm_dsp`, `arm_mve` …), each run by its own declared
    `reference` semantics (`zant.ir.target_ops`) through one `@impl`, registered below for every
    op that declares one: the interpreter names no target op."""


def _run_declared(self: TargetOpFunctions, interpreter: Interpreter, op: Operation, args: PythonValues):
    written = {getattr(op, name) for name in getattr(op, "WRITES", ())}
    operands = [
        (_writer(op, a) if v in written else _reader(op, a)) if isinstance(v.type, uop.PtrType) else a
        for v, a in zip(op.operands, args)
    ]
    return tuple(op.reference(*operands))  # type: ignore[attr-defined]


def _reader(op: Operation, pointer: tuple[np.ndarray, int]) -> Callable[[Sequence[int]], np.ndarray]:
    """A pointer operand as `reference` reads it: the elements at offsets from it, checked."""
    data, index = pointer

    def read(offsets: Sequence[int]) -> np.ndarray:
        at = [index + o for o in offsets]
        _check(op, data, min(at), max(at))
        return data[at]

    return read


def _writer(op: Operation, pointer: tuple[np.ndarray, int]) -> Callable[[Sequence[int], np.ndarray], None]:
    """A pointer operand an op writes through (its `WRITES`), as `reference` writes it: values to
    the elements at offsets from it, checked."""
    data, index = pointer

    def write(offsets: Sequence[int], values: np.ndarray) -> None:
        at = [index + o for o in offsets]
        if at:
            _check(op, data, min(at), max(at))
            data[at] = values

    return write


def declared_target_ops() -> list[type[Operation]]:
    """The ops of Zant's dialects that declare their reference semantics. The onnx dialect is
    not looked at: it runs on the ONNX reference (`onnx_reference`), and importing it costs."""
    from zant.dialects import get_all_dialects

    return [
        op
        for name, dialect in get_all_dialects().items()
        if name != "onnx"
        for op in dialect().operations
        if declares_target_semantics(op)
    ]


for _op in declared_target_ops():
    setattr(TargetOpFunctions, f"run_{_op.name.replace('.', '_')}", impl(_op)(_run_declared))
register_impls(TargetOpFunctions)


IMPLEMENTATIONS: dict[type[Operation], tuple[type[InterpreterFunctions], Any]] = {
    op: (functions, run)
    for functions in (UOpFunctions, TargetOpFunctions)
    for op, run in functions._impls()  # xDSL's table of a class's @impl functions
}
"""Each op's `@impl` function and the class that defines it (the loop bodies' dispatch)."""

SUPPORTED: frozenset[type[Operation]] = frozenset({*IMPLEMENTATIONS, func.FuncOp})
"""The ops the interpreter runs."""
