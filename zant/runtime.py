"""Call a host build of a generated model from Python (for `zant run`, tests and benchmarks)."""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from zant.errors import ZantError
from zant.ir.strings import decode, encode, is_string_dtype
from zant.ir.types import PACKED_DTYPES, abi_bytes, pack, unpack
from zant.signature import TensorSignature, caller_outputs, complete_feeds, valid_outputs, valid_parts  # noqa: F401 (complete_feeds: re-exported)


class CompiledModel:
    """`NAME_predict` of a shared library, taking and returning numpy arrays. A library built
    with the caller's scratch arena (`--arena caller`: it exports `NAME_set_arena`) is given
    one here (`arena_bytes`, aligned), or another with `set_arena`."""

    def __init__(
        self,
        library_path: str | Path,
        name: str,
        inputs: Sequence[TensorSignature],
        outputs: Sequence[TensorSignature],
    ):
        self._library = ctypes.CDLL(str(Path(library_path).resolve()))
        self._predict = getattr(self._library, f"{name}_predict")
        self._predict.restype = ctypes.c_int32
        self._predict.argtypes = [ctypes.c_void_p] * (len(inputs) + len(outputs))
        self.inputs = list(inputs)
        self.written = list(outputs)  # every buffer NAME_predict writes, the extents array too
        self.outputs = caller_outputs(outputs)
        self.arena: np.ndarray | None = None  # the caller's scratch arena given to the library
        try:
            self._set_arena = getattr(self._library, f"{name}_set_arena")
        except AttributeError:  # the library's own arena
            self._set_arena = None
        if self._set_arena is not None:
            self._set_arena.restype = ctypes.c_int32
            self._set_arena.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
            size = ctypes.c_size_t.in_dll(self._library, f"{name}_arena_size").value
            alignment = ctypes.c_size_t.in_dll(self._library, f"{name}_arena_align").value
            buffer = np.zeros(size + alignment, np.uint8)
            start = (-buffer.ctypes.data) % alignment
            status = self.set_arena(buffer[start : start + size])
            if status != 0:
                raise ZantError(f"{name}_set_arena refused an arena of its own size: status {status}")

    def set_arena(self, arena: np.ndarray | None, size: int | None = None) -> int:
        """Hand a caller's-arena library `arena` (a contiguous array; its bytes, or `size`) as its
        scratch arena, kept alive here; returns `NAME_set_arena`'s status (0, or 8)."""
        if self._set_arena is None:
            raise ZantError("the library has its own scratch arena (compiled without --arena caller)")
        address = None if arena is None else arena.ctypes.data
        status = self._set_arena(address, arena.nbytes if size is None and arena is not None else (size or 0))
        self.arena = arena if status == 0 else None
        return status

    def __call__(self, *arrays: np.ndarray) -> list[np.ndarray]:
        return [array for _, array in self.call(*arrays)]

    def call(self, *arrays: np.ndarray) -> list[tuple[TensorSignature, np.ndarray]]:
        """The outputs as a caller reads them (`valid_outputs`), each with its signature: a
        run-time-length sequence output gives as many as it holds."""
        if len(arrays) != len(self.inputs):
            raise ZantError(f"the model takes {len(self.inputs)} inputs, got {len(arrays)}")
        args = []
        keep_alive = []
        for array, signature in zip(arrays, self.inputs):
            if is_string_dtype(signature.dtype):  # UTF-8 in NUL-padded fields; too long: refused
                dense = encode(array, signature.shape, np.dtype(signature.dtype).itemsize, signature.name)
            else:
                dense = np.array(array, dtype=signature.dtype, order="C")  # keeps 0-d shapes
            if list(dense.shape) != signature.shape:
                raise ZantError(
                    f"input '{signature.name}' has shape {list(dense.shape)}, expected {signature.shape}"
                )
            if dense.dtype.name in PACKED_DTYPES:  # int4 …: the ABI's packed bytes
                dense = np.frombuffer(pack(dense), np.uint8).copy()
            keep_alive.append(dense)
            args.append(dense.ctypes.data)
        results = [
            np.zeros(abi_bytes(s.size, s.dtype), np.uint8) if s.dtype in PACKED_DTYPES else np.empty(s.shape, dtype=s.dtype)
            for s in self.written
        ]
        args.extend(r.ctypes.data for r in results)
        status = self._predict(*args)
        if status != 0:
            raise ZantError(f"the generated predict function returned {status}")
        results = [
            unpack(r, s.dtype, s.size).reshape(s.shape) if s.dtype in PACKED_DTYPES
            else decode(r) if is_string_dtype(s.dtype) else r  # strings: NumPy object arrays of str
            for r, s in zip(results, self.written)
        ]
        return valid_outputs(self.written, results)

    def run(self, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        missing = [s.name for s in self.inputs if s.name not in feeds]
        if missing:
            raise ZantError(f"missing inputs: {', '.join(missing)}")
        return self(*(feeds[s.name] for s in self.inputs))


def load_compiled(result) -> CompiledModel:
    """The callable model of a host `CompileResult`."""
    if result.library_path is None:
        raise ZantError("the model was compiled without a build (--no-build)")
    name = result.zig_path.stem
    return CompiledModel(result.library_path, name, result.inputs, result.outputs)


REFERENCE_OPSET = 21
"""The opset a model is converted to when the reference evaluator lacks or misreads one of its ops."""

MISREAD_BELOW = {"BatchNormalization": 14}
"""Ops onnx's evaluator computes wrongly before an opset: its BatchNormalization-9 takes the
schema's default momentum as training mode and normalises with the batch's own statistics
(onnx 1.23), so every opset-13 model with a BatchNormalization got a wrong reference."""


def _misread_by_evaluator(model) -> bool:
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
    return any(opset < MISREAD_BELOW.get(node.op_type, 0) for node in model.graph.node if node.domain in ("", "ai.onnx"))


def _onnx_evaluator(model_path: str | Path):
    """onnx's reference evaluator for the model. It implements only some versions of some ops
    (no DequantizeLinear-13, which every opset-13 QDQ model has) and misreads others
    (`MISREAD_BELOW`): such a model is converted to `REFERENCE_OPSET` first."""
    import onnx
    from onnx.reference import ReferenceEvaluator

    model = onnx.load(str(model_path))
    try:
        if _misread_by_evaluator(model):
            raise RuntimeError("an op the evaluator misreads at this opset")
        return ReferenceEvaluator(model)
    except RuntimeError as error:  # "No implementation for operator …"
        try:
            return ReferenceEvaluator(onnx.version_converter.convert_version(model, REFERENCE_OPSET))
        except Exception as retry_error:
            raise ZantError(f"the ONNX reference evaluator cannot run this model: {error}") from retry_error


def reference_outputs(model_path: str | Path, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    """The ONNX reference evaluator's outputs for the same feeds (`_onnx_evaluator`)."""
    return list(_onnx_evaluator(model_path).run(None, dict(feeds)))


@dataclass
class Reference:
    """What `zant run` compares a compiled model with: its name and how to run it (the name
    changes where a reference falls back to another at run time)."""

    name: str
    run: Callable[[Mapping[str, np.ndarray]], list[np.ndarray]]


CONTRIB_DOMAIN = "com.microsoft"


def interpreter_reference(model_path: str | Path, input_shapes: Mapping[str, Sequence[int]] | None) -> Reference:
    """Zant's own reference for a model with com.microsoft ops (a QOperator model), which
    onnx's evaluator lacks: the model imported into the onnx dialect and run op by op by
    `zant.interpreter` (the ONNX reference evaluator for each standard op, NumPy definitions of
    the contrib ones: QLinearAdd and QLinearMul exactly rounded, QLinearSigmoid,
    QLinear(Global)AveragePool, QLinearConcat, QGemm ... by their DequantizeLinear → op →
    QuantizeLinear definition)."""
    from zant.dialects.onnx_attributes import INPUT_NAMES
    from zant.frontend.onnx_importer import import_model_bytes
    from zant.interpreter import onnx_graph_functions, onnx_opsets, run_onnx_function

    path = Path(model_path)
    shapes_given = {k: list(v) for k, v in (input_shapes or {}).items()}
    module = import_model_bytes(path.read_bytes(), str(path.parent), shapes_given)
    function = onnx_graph_functions(module)[0]
    names = [n.data for n in function.attributes[INPUT_NAMES].data]  # the graph inputs, in order
    shapes = [t.get_shape() for t in function.function_type.outputs.data]

    def run(feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        flat = run_onnx_function(function, [feeds[n] for n in names], onnx_opsets(module))
        return [value.reshape(shape) for value, shape in zip(flat, shapes, strict=True)]

    return Reference("Zant's onnx-dialect interpreter (NumPy definitions of the com.microsoft ops)", run)


def reference_for(model_path: str | Path, input_shapes: Mapping[str, Sequence[int]] | None = None) -> Reference:
    """onnxruntime where it is installed (the `test` extra), running the graph as written (no
    graph optimizations: its fused kernels round otherwise than the ops they replace), so a
    com.microsoft QOperator model has a reference too; where onnxruntime is absent or cannot run
    the model, the ONNX reference evaluator, or for a model with com.microsoft ops (which that
    evaluator lacks) Zant's interpreter (`interpreter_reference`; `input_shapes` fixes
    symbolic dimensions there, as `--input-shape`). Raises `ZantError`, before anything is
    built, when none can."""
    try:
        import onnxruntime
    except ImportError:
        onnxruntime = None
    if onnxruntime is not None:
        options = onnxruntime.SessionOptions()
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
        options.log_severity_level = 3
        try:
            session = onnxruntime.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
        except Exception:  # noqa: BLE001 - an op or a type onnxruntime lacks: the ONNX reference
            session = None
        if session is not None:
            names = [i.name for i in session.get_inputs()]
            quiet = onnxruntime.RunOptions()
            quiet.log_severity_level = 4  # a refusal is reported once, by the fallback's name
            ours = Reference(
                f"onnxruntime {onnxruntime.__version__}, the graph as written",
                lambda feeds: session.run(None, {n: feeds[n] for n in names}, quiet),
            )
            return _falling_back(ours, lambda: _reference_without_onnxruntime(model_path, input_shapes))
    return _reference_without_onnxruntime(model_path, input_shapes)


def _reference_without_onnxruntime(model_path: str | Path, input_shapes: Mapping[str, Sequence[int]] | None) -> Reference:
    if _has_contrib_ops(model_path):
        return interpreter_reference(model_path, input_shapes)
    evaluator = _onnx_evaluator(model_path)
    return Reference("onnx.reference.ReferenceEvaluator", lambda feeds: list(evaluator.run(None, dict(feeds))))


def _falling_back(first: Reference, second: Callable[[], Reference]) -> Reference:
    """`first`, or where it fails at run time (onnxruntime refuses shapes ONNX allows, such as a
    pool over zero channels) the reference `second` makes, named in the result's name."""
    reference = Reference(first.name, first.run)

    def run(feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        try:
            return first.run(feeds)
        except Exception as error:  # noqa: BLE001 - any refusal of onnxruntime's: the next reference
            fallback = second()
            reason = str(error).strip().splitlines()[0][:160] if str(error).strip() else type(error).__name__
            reference.name = f"{fallback.name}; {first.name} refused the inputs: {reason}"
            return fallback.run(feeds)

    reference.run = run
    return reference


def _has_contrib_ops(model_path: str | Path) -> bool:
    import onnx

    model = onnx.load(str(model_path), load_external_data=False)
    return any(node.domain == CONTRIB_DOMAIN for node in model.graph.node)
