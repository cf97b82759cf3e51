"""End-to-end numerics: compile an ONNX model, build it in ReleaseSafe, run it, compare.

ReleaseSafe makes an out-of-bounds access or an integer overflow in generated code trap (the
test process dies) instead of passing silently.
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import onnx
import pytest

from zant.driver import CompileOptions, CompileResult, compile_model
from zant.runtime import load_compiled, reference_outputs

SHIPPED_MODE = CompileOptions.optimize
"""The build mode `zant compile --firmware` links images in unless told (`-O`)."""


def firmware_modes() -> list:
    """A firmware test's build modes as parameters: the shipped one in the default run, the
    others (each its own register budget, step counts and checks) under the `slow` marker
    (`pytest -m slow`; CI runs them, .ci/run)."""
    from zant.backend.build import OPTIMIZE_MODES

    return [pytest.param(mode, marks=() if mode == SHIPPED_MODE else pytest.mark.slow) for mode in OPTIMIZE_MODES]


def random_inputs(model: onnx.ModelProto, seed: int = 0) -> dict[str, np.ndarray]:
    """Seeded inputs for every graph input that is not an initializer (floats ~ N(0, 1))."""
    rng = np.random.default_rng(seed)
    initializers = {i.name for i in model.graph.initializer}
    feeds = {}
    for value in model.graph.input:
        if value.name in initializers:
            continue
        tensor_type = value.type.tensor_type
        shape = [d.dim_value for d in tensor_type.shape.dim]
        dtype = onnx.helper.tensor_dtype_to_np_dtype(tensor_type.elem_type)
        if np.dtype(dtype).kind == "f":
            feeds[value.name] = rng.standard_normal(shape).astype(dtype)
        elif np.dtype(dtype).kind == "b":
            feeds[value.name] = rng.integers(0, 2, shape).astype(bool)
        else:
            feeds[value.name] = rng.integers(-5, 6, shape).astype(dtype)
    return feeds


def compile_and_run(
    model: onnx.ModelProto,
    feeds: dict[str, np.ndarray],
    optimize: str = "ReleaseSafe",
    pipeline: str | None = None,
) -> list[np.ndarray]:
    """The outputs of `model` compiled for the host (the driver's pipeline unless `pipeline`)."""
    return compile_and_run_result(model, feeds, optimize, pipeline)[1]


def compile_and_run_result(
    model: onnx.ModelProto,
    feeds: dict[str, np.ndarray],
    optimize: str = "ReleaseSafe",
    pipeline: str | None = None,
) -> tuple[CompileResult, list[np.ndarray]]:
    """`compile_and_run`, with the compile result (plan, sizes) first."""
    options = CompileOptions(name="m", optimize=optimize)
    if pipeline is not None:
        options = replace(options, pipeline=pipeline)
    with tempfile.TemporaryDirectory(prefix="zant-e2e-") as folder:
        path = Path(folder) / "model.onnx"
        onnx.save(model, path)
        result = compile_model(path, Path(folder) / "out", options)
        return result, load_compiled(result)(*(feeds[s.name] for s in result.inputs))


def check_compiled(
    model: onnx.ModelProto,
    inputs: dict[str, np.ndarray] | None = None,
    rtol: float = 1e-4,
    atol: float = 1e-5,
    pipeline: str | None = None,
) -> tuple[CompileResult, list[np.ndarray]]:
    """Assert that the compiled model matches the ONNX reference evaluator on `inputs`; the
    compile result (its plan, sizes) and the outputs."""
    feeds = inputs if inputs is not None else random_inputs(model)
    result, ours = compile_and_run_result(model, feeds, pipeline=pipeline)
    with tempfile.TemporaryDirectory(prefix="zant-ref-") as folder:
        path = Path(folder) / "model.onnx"
        onnx.save(model, path)
        reference = reference_outputs(path, feeds)
    assert len(ours) == len(reference)
    for index, (got, want) in enumerate(zip(ours, reference)):
        want = np.asarray(want)
        assert got.shape == want.shape, f"output {index}: shape {got.shape} != {want.shape}"
        assert got.dtype == want.dtype, f"output {index}: dtype {got.dtype} != {want.dtype}"
        if want.dtype.kind in "biu":
            np.testing.assert_array_equal(got, want, err_msg=f"output {index}")
        else:
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=f"output {index}")
    return result, ours


def check_model(
    model: onnx.ModelProto,
    inputs: dict[str, np.ndarray] | None = None,
    rtol: float = 1e-4,
    atol: float = 1e-5,
    pipeline: str | None = None,
) -> list[np.ndarray]:
    """Assert that the compiled model matches the ONNX reference evaluator on `inputs`."""
    return check_compiled(model, inputs, rtol, atol, pipeline)[1]


SENTINEL = -7.0
"""What every output holds before a `StatusModel` call: a call that returns non-zero leaves it."""


class StatusModel:
    """`m_predict` of a host build called with NumPy arrays, each output filled with `SENTINEL`
    first: returns (status, outputs), so a test sees what a refused call left."""

    def __init__(self, model: onnx.ModelProto, folder: Path, optimize: str = "ReleaseSafe", out: str = "out"):
        import ctypes

        path = folder / "model.onnx"
        onnx.save(model, path)
        result = compile_model(path, folder / out, CompileOptions(name="m", optimize=optimize))
        assert result.library_path is not None
        self.model = model
        self.outputs = result.outputs
        self.predict = ctypes.CDLL(str(result.library_path)).m_predict
        self.predict.restype = ctypes.c_int32

    def __call__(self, *arrays: np.ndarray) -> tuple[int, list[np.ndarray]]:
        import ctypes

        arrays = tuple(np.ascontiguousarray(a) for a in arrays)
        outputs = [np.full(s.shape, SENTINEL, dtype=s.dtype) for s in self.outputs]
        pointers = [ctypes.c_void_p(a.ctypes.data) for a in (*arrays, *outputs)]
        return self.predict(*pointers), outputs


def check_passes_after_lowering(model: onnx.ModelProto, target: str = "cortex-m4", seed: int = 3):
    """Import `model`, run `target`'s default pipeline through `onnx-to-uop`, then check every
    later pass against the uop interpreter (`check_each_pass`, seeded inputs): the lowered
    module and the report, whose `checked` names the passes that kept the outputs."""
    from xdsl.passes import PassPipeline
    from xdsl.transforms import get_all_passes

    from zant.driver import make_context
    from zant.frontend.onnx_importer import import_model
    from zant.interpreter import check_each_pass
    from zant.pipelines import pipeline_for
    from zant.plugins import all_passes

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "model.onnx"
        onnx.save(model, path)
        module = import_model(str(path))
    passes = PassPipeline.parse_spec({**get_all_passes(), **all_passes()}, pipeline_for(target)).passes
    first = [p.name for p in passes].index("onnx-to-uop") + 1
    ctx = make_context()
    for p in passes[:first]:  # through the lowering
        p.apply(ctx, module)
    return module, check_each_pass(module, passes[first:], ctx, seed=seed)
