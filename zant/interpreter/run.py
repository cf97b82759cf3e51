"""Running a uop function on NumPy inputs: `run_module`, `run_function`, seeded inputs."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter
from xdsl.ir import Attribute, Operation

from zant.dialects import uop
from zant.errors import ZantError
import zant.interpreter.semantics as sem
from zant.interpreter.functions import (
    POISONS,
    SUPPORTED,
    Memory,
    TargetOpFunctions,
    UOpFunctions,
)
from zant.interpreter.semantics import Trap


class InterpreterTrap(ZantError):
    """The interpreted code did what the generated code traps on (an access outside a buffer,
    an integer division by zero …)."""


def graph_functions(module: ModuleOp) -> list[func.FuncOp]:
    """The functions of a module the interpreter can be asked to run: those with a body and no
    arguments (a graph's buffers are `uop.define_global`s, not arguments)."""
    return [
        op
        for op in module.body.block.ops
        if isinstance(op, func.FuncOp) and op.body.blocks and not op.function_type.inputs.data
    ]


def unsupported_ops(function: Operation) -> list[str]:
    """The names of the ops of `function` the interpreter cannot run (an `onnx.Conv` before
    lowering …), each once, in order of appearance."""
    names: dict[str, None] = {}
    for op in function.walk():
        if op is not function and type(op) not in SUPPORTED:
            names[op.name] = None
    return list(names)


def input_buffers(function: func.FuncOp) -> list[tuple[str, uop.BufferType]]:
    """The graph inputs of a uop function by index: (tensor name, buffer type)."""
    found: dict[int, tuple[str, uop.BufferType]] = {}
    for op in function.body.block.ops:
        if isinstance(op, uop.DefineGlobalOp) and op.role.data == uop.BufferRole.INPUT:
            assert isinstance(op.result.type, uop.BufferType)
            found[op.index.value.data] = (op.tensor_name.data, op.result.type)
    return [found[i] for i in sorted(found)]


def seeded_inputs(function: func.FuncOp, seed: int) -> list[np.ndarray]:
    """Inputs for every graph input of `function`, drawn from `seed` (`seeded_arrays`)."""
    return seeded_arrays([(t.element_type, t.size.data) for _name, t in input_buffers(function)], seed)


def seeded_arrays(inputs: Sequence[tuple[Attribute, int]], seed: int) -> list[np.ndarray]:
    """One flat array per (element type, element count), drawn from `seed`: floats from
    N(0, 1), booleans 0/1, 8-bit integers over their whole range, wider ones from -5..5 (0..10
    unsigned: they are often indices or shapes). The onnx-level and uop-level forms of a graph
    get the same arrays."""
    rng = np.random.default_rng(seed)
    arrays = []
    for t, size in inputs:
        dtype = sem.dtype_of(t)
        if not sem.is_int(t):
            arrays.append(rng.standard_normal(size).astype(dtype))
        elif sem.is_bool(t):
            arrays.append(rng.integers(0, 2, size).astype(dtype))
        elif dtype.itemsize == 1:
            low, high = sem.int_range(t)  # type: ignore[misc]
            arrays.append(rng.integers(low, high + 1, size).astype(dtype))
        else:
            low = 0 if dtype.kind == "u" else -5
            arrays.append(rng.integers(low, low + 11, size).astype(dtype))
    return arrays


def run_function(
    function: func.FuncOp, inputs: Sequence[np.ndarray], poison: int = POISONS[0]
) -> list[np.ndarray]:
    """The outputs of a uop function (flat, in output-index order) for `inputs` (one array per
    graph input, in input-index order, any shape with the buffer's element count). Raises a
    `ZantError` naming the first op the interpreter cannot run, or an `InterpreterTrap`.
    Outputs and scratch buffers start filled with the byte `poison`."""
    unsupported = unsupported_ops(function)
    if unsupported:
        more = f" (and {len(unsupported) - 1} more)" if len(unsupported) > 1 else ""
        raise ZantError(f"the uop interpreter cannot run '{unsupported[0]}'{more}")
    buffers = input_buffers(function)
    if len(inputs) != len(buffers):
        raise ZantError(f"@{function.sym_name.data} takes {len(buffers)} inputs, got {len(inputs)}")
    arrays = []
    for (name, buffer_type), given in zip(buffers, inputs):
        array = np.asarray(given).reshape(-1)
        if array.shape[0] != buffer_type.size.data:
            raise ZantError(
                f"input '{name}' has {buffer_type.size.data} elements, got {array.shape[0]}"
            )
        arrays.append(array.astype(sem.dtype_of(buffer_type.element_type)))
    module = function.get_toplevel_object()
    assert isinstance(module, ModuleOp)
    interpreter = Interpreter(module)
    interpreter.register_implementations(UOpFunctions())
    interpreter.register_implementations(TargetOpFunctions())
    memory = Memory(arrays, {}, poison)
    interpreter.set_data(UOpFunctions, "memory", memory)
    try:
        with np.errstate(all="ignore"):
            interpreter.call_op(function, ())
    except Trap as trap:
        raise InterpreterTrap(str(trap)) from None
    return [memory.outputs[i].copy() for i in sorted(memory.outputs)]


def run_defined(
    function: func.FuncOp, inputs: Sequence[np.ndarray]
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """`run_function` with each of the two `POISONS`: the outputs of the first run, and per
    output a boolean mask of its defined elements (the same bits in both runs: written, and
    computed from nothing that was not)."""
    first = run_function(function, inputs, POISONS[0])
    second = run_function(function, inputs, POISONS[1])
    masks = []
    for a, b in zip(first, second):
        bytes_a = a.view(np.uint8).reshape(a.shape[0], a.dtype.itemsize)
        bytes_b = b.view(np.uint8).reshape(b.shape[0], b.dtype.itemsize)
        masks.append((bytes_a == bytes_b).all(axis=1))
    return first, masks


def run_module(
    module: ModuleOp, inputs: Sequence[np.ndarray], function: str | None = None
) -> list[np.ndarray]:
    """`run_function` on the module's graph function: `function` by name, else `@main`, else
    its only one."""
    functions = graph_functions(module)
    by_name = {f.sym_name.data: f for f in functions}
    if function is not None:
        if function not in by_name:
            raise ZantError(f"no function @{function} to interpret (have {', '.join(by_name) or 'none'})")
        return run_function(by_name[function], inputs)
    if "main" in by_name:
        return run_function(by_name["main"], inputs)
    if len(functions) != 1:
        raise ZantError(
            f"the module has {len(functions)} graph functions: name one to interpret "
            f"({', '.join(by_name) or 'none'})"
        )
    return run_function(functions[0], inputs)
