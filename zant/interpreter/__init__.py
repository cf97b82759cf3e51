"""A uop interpreter on xDSL's interpreter framework: the second numerics oracle.

It runs a module in the `uop` (and `arm_dsp`) dialect between any two passes, without a Zig
build: one `@impl` per op (`zant.interpreter.functions`), buffers as flat NumPy arrays, integers
exact with the wrapping and truncating semantics of the generated Zig, floats IEEE in their own
type (`zant.interpreter.semantics`). An `onnx`-dialect module runs op by op on the ONNX
reference evaluator (`zant.interpreter.onnx_reference`, Zant's integer ops as `onnx-to-uop`
lowers them). `check_each_pass` (`zant-opt --check-each-pass`) uses both to name the first pass
of a pipeline, from the first, that changes a result.

    outputs = run_module(module, [x])          # flat arrays, in output-index order
"""

from zant.interpreter.check import (
    ATOL,
    ONNX_ATOL,
    ONNX_RTOL,
    RTOL,
    CheckReport,
    PassChangedResult,
    PassChecker,
    check_each_pass,
    first_difference,
)
from zant.interpreter.onnx_reference import (
    OnnxUnsupported,
    onnx_graph_functions,
    onnx_opsets,
    run_onnx_function,
)
from zant.interpreter.run import (
    InterpreterTrap,
    graph_functions,
    run_defined,
    run_function,
    run_module,
    seeded_arrays,
    seeded_inputs,
    unsupported_ops,
)

__all__ = [
    "ATOL",
    "ONNX_ATOL",
    "ONNX_RTOL",
    "OnnxUnsupported",
    "RTOL",
    "CheckReport",
    "InterpreterTrap",
    "PassChangedResult",
    "PassChecker",
    "check_each_pass",
    "first_difference",
    "graph_functions",
    "onnx_graph_functions",
    "onnx_opsets",
    "run_defined",
    "run_function",
    "run_module",
    "run_onnx_function",
    "seeded_arrays",
    "seeded_inputs",
    "unsupported_ops",
]
