"""Broken model files get one clear error, and valid ones onnxruntime takes are not refused.

Each case is built with onnx.helper or by mutating the bytes of a good model (the mutants of
issue 32's fuzzer): a tensor whose data contradict its dims, an unknown or missing element type,
text that is not UTF-8, an opset or a type the file's own opset does not define, a graph without
outputs, external data whose sizes do not add up or pass protobuf's 2 GB; then what is taken:
a graph input with an initializer (a run-time input with a default) and stale intermediate
shapes (re-inferred with a warning).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from zant.driver import compile_to_module
from zant.errors import ModelWarning, ZantError
from zant.frontend.onnx_importer import import_model_bytes
from zant.interpreter import run_module

ZANT = [sys.executable, "-m", "zant.tools.cli"]
X = np.array([[-5, 0, 1], [2, -1, 0]], np.float32)


def conv_model(opset: int = 17) -> onnx.ModelProto:
    """x (1x1x5x5) → Conv with W (4x1x3x3) and B → Relu → y."""
    rng = np.random.default_rng(0)
    graph = helper.make_graph(
        [
            helper.make_node("Conv", ["x", "W", "B"], ["c"], name="conv", pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["c"], ["y"], name="relu"),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 5, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 5, 5])],
        [
            numpy_helper.from_array(rng.standard_normal((4, 1, 3, 3)).astype(np.float32), "W"),
            numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "B"),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def add_relu(extra_input: bool = False, ir_version: int | None = None, opset: int = 17) -> onnx.ModelProto:
    """y = Relu(x + b), x 2x3, b an initializer (also listed as a graph input with `extra_input`)."""
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "b"], ["s"], name="add"), helper.make_node("Relu", ["s"], ["y"], name="act")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [numpy_helper.from_array(np.arange(3, dtype=np.float32), "b")],
    )
    if extra_input:
        graph.input.append(helper.make_tensor_value_info("b", TensorProto.FLOAT, [3]))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    if ir_version is not None:
        model.ir_version = ir_version
    return model


def refusal(model: onnx.ModelProto | bytes, model_dir: str | os.PathLike | None = None) -> str:
    """The one-line `ZantError` the driver raises for `model` (nothing else may escape)."""
    with pytest.raises(ZantError) as caught:
        compile_to_module(model, model_dir=model_dir)
    message = str(caught.value)
    assert "\n" not in message and "Traceback" not in message
    return message


# --- tensors whose data contradict their dims -------------------------------------------------


@pytest.mark.parametrize(("size", "what"), [(37 * 4, "148 B"), (10, "10 B"), (0, "0 B")])
def test_initializer_raw_data_of_the_wrong_size(size, what):
    model = conv_model()
    weight = model.graph.initializer[0]
    weight.raw_data = bytes(size)
    assert refusal(model) == (
        f"invalid ONNX model: tensor 'W' holds {what} of raw data; its dims [4, 1, 3, 3] of FLOAT need 144 B"
    )


def test_typed_data_of_the_wrong_count():
    model = conv_model()
    model.graph.initializer[1].CopyFrom(helper.make_tensor("B", TensorProto.FLOAT, [4], [1.0, 2.0, 3.0, 4.0]))
    model.graph.initializer[1].float_data.append(5.0)
    assert refusal(model) == "invalid ONNX model: tensor 'B' holds 5 values in float_data; its dims [4] of FLOAT need 4"


def test_constant_node_tensor_of_the_wrong_size():
    value = numpy_helper.from_array(np.ones(3, np.float32), "v")
    value.raw_data += b"\0\0\0\0"
    graph = helper.make_graph(
        [helper.make_node("Constant", [], ["c"], name="k", value=value), helper.make_node("Add", ["x", "c"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    assert "tensor 'v' holds 16 B of raw data; its dims [3] of FLOAT need 12 B" in refusal(model)


# --- element types, text, opsets, outputs ------------------------------------------------------


@pytest.mark.parametrize(
    ("where", "elem_type", "message"),
    [
        ("input", 99, "invalid ONNX model: graph input 'x' has an unknown element type (99)"),
        ("input", 0, "invalid ONNX model: graph input 'x' has no element type (elem_type 0)"),
        ("output", 0, "invalid ONNX model: graph output 'y' has no element type (elem_type 0)"),
        ("output", 99, "invalid ONNX model: graph output 'y' has an unknown element type (99)"),
    ],
)
def test_graph_input_or_output_element_type(where, elem_type, message):
    model = add_relu()
    getattr(model.graph, where)[0].type.tensor_type.elem_type = elem_type
    assert refusal(model) == message


def test_initializer_of_unknown_element_type():
    model = conv_model()
    model.graph.initializer[1].data_type = 99
    assert refusal(model) == "invalid ONNX model: tensor 'B' has an unknown element type (99)"


def test_op_type_that_is_not_utf8():
    data = add_relu().SerializeToString()
    assert data.count(b"Relu") == 1
    message = refusal(data.replace(b"Relu", b"R\xfflu"))
    assert message == "malformed ONNX model: model.graph.node[1].op_type is not UTF-8 text (b'R\\xfflu')"


def test_opset_newer_than_onnx_defines():
    newest = onnx.defs.onnx_opset_version()
    assert refusal(add_relu(opset=99)) == (
        f"invalid ONNX model: it imports opset 99 of 'ai.onnx'; the installed onnx {onnx.__version__} "
        f"defines opsets 1 to {newest}"
    )


def test_graph_without_outputs():
    model = add_relu()
    del model.graph.output[:]
    assert refusal(model) == "invalid ONNX model: the graph has no outputs (it would compute nothing)"


def quantize_linear(opset: int) -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], name="q")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [4])],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, [4])],
        [numpy_helper.from_array(np.array(0.5, np.float16), "s"), numpy_helper.from_array(np.array(3, np.uint8), "z")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def test_type_its_own_opset_does_not_allow():
    """QuantizeLinear-13 takes float32 and int32 only; the conversion to the newest opset (which
    takes float16) must not launder the file."""
    message = refusal(quantize_linear(17))
    assert message.startswith("invalid ONNX model at opset 17: ")
    assert "node name: q" in message and "unsupported type: tensor(float16)" in message


def test_type_the_newest_opset_allows_is_not_refused_by_that_check():
    onnx.checker.check_model(quantize_linear(onnx.defs.onnx_opset_version()), full_check=True)
    import_model_bytes(quantize_linear(onnx.defs.onnx_opset_version()).SerializeToString(), ".")


# --- external data -----------------------------------------------------------------------------


def external_model(folder: Path, count: int, file_bytes: int, length: int | None = None, offset: int = 0) -> Path:
    """m.onnx in `folder`: y = x + W, W float32[count] in w.bin (a sparse file of `file_bytes`)."""
    weight = TensorProto(name="W", data_type=TensorProto.FLOAT, dims=[count], data_location=TensorProto.EXTERNAL)
    entries = [("location", "w.bin"), ("offset", str(offset))] + ([("length", str(length))] if length is not None else [])
    for key, value in entries:
        entry = weight.external_data.add()
        entry.key, entry.value = key, value
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "W"], ["y"], name="add")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [count])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [count])],
        [weight],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    (folder / "w.bin").touch()
    os.truncate(folder / "w.bin", file_bytes)  # sparse: no disk, no time
    path = folder / "m.onnx"
    path.write_bytes(model.SerializeToString())
    return path


def test_external_tensor_larger_than_a_protobuf_is_refused_before_loading(tmp_path):
    """3.2 GB of external weights (issue 32: 6.3 GB of memory, then protobuf's EncodeError):
    refused on the declared sizes, before a byte is read. Measured in a child process: its peak
    memory stays far below the tensor's size."""
    count = 800_000_000
    path = external_model(tmp_path, count, 4 * count, length=4 * count)
    script = (
        "import resource, sys\n"
        "from zant.driver import compile_to_module\n"
        "from zant.errors import ZantError\n"
        "try:\n"
        f"    compile_to_module({str(path)!r}, 'cortex-m4')\n"
        "except ZantError as error:\n"
        "    print(error)\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    message, peak_kib = result.stdout.strip().splitlines()
    assert message == (
        f"the model with its external data is {4 * count + path.stat().st_size:,} B (tensor 'W' alone "
        "3,200,000,000 B); a model is imported as one protobuf, which holds at most 2,147,483,647 B (2 GB)"
    )
    assert int(peak_kib) < 1_000_000  # KiB: under 1 GB for a 3.2 GB tensor


@pytest.mark.parametrize(
    ("file_bytes", "length", "offset", "message"),
    [
        (40, 36, 0, "tensor 'W' declares 36 B of external data; its dims [10] of FLOAT need 40 B"),
        (36, 40, 0, "tensor 'W''s external data 'w.bin' holds 36 B from offset 0; its dims [10] of FLOAT need 40 B"),
        (44, None, 0, "tensor 'W''s external data 'w.bin' holds 44 B from offset 0; its dims [10] of FLOAT need 40 B"),
        (40, 40, 8, "tensor 'W''s external data 'w.bin' holds 32 B from offset 8; its dims [10] of FLOAT need 40 B"),
    ],
    ids=["length-contradicts-dims", "file-too-short", "no-length-file-too-long", "offset-past-data"],
)
def test_external_data_sizes_that_do_not_add_up(tmp_path, file_bytes, length, offset, message):
    path = external_model(tmp_path, 10, file_bytes, length=length, offset=offset)
    assert refusal(path) == f"invalid ONNX model: {message}"


def test_external_data_that_adds_up_loads(tmp_path):
    path = external_model(tmp_path, 10, 48, length=40, offset=8)
    (tmp_path / "w.bin").write_bytes(bytes(8) + np.arange(10, dtype=np.float32).tobytes())
    planned = compile_to_module(path)
    (got,) = run_module(planned.module, [np.ones(10, np.float32)])
    np.testing.assert_array_equal(got, np.arange(10, dtype=np.float32) + 1)


# --- accepted: inputs with a default, stale intermediate shapes --------------------------------


def test_input_with_an_initializer_stays_a_run_time_input():
    """IR >= 4: onnxruntime lets the caller override it, so NAME_predict takes it."""
    planned = compile_to_module(add_relu(extra_input=True))
    assert [(t.name, t.shape) for t in planned.inputs] == [("x", [2, 3]), ("b", [3])]
    (got,) = run_module(planned.module, [X, np.full(3, 7, np.float32)])
    np.testing.assert_array_equal(got.reshape(2, 3), np.maximum(X + 7, 0))


def test_input_with_an_initializer_takes_its_shape_from_it():
    model = add_relu(extra_input=True)
    model.graph.input[1].type.tensor_type.ClearField("shape")
    assert [(t.name, t.shape) for t in compile_to_module(model).inputs] == [("x", [2, 3]), ("b", [3])]


def test_frozen_input_with_an_initializer_uses_the_given_value():
    planned = compile_to_module(add_relu(extra_input=True), freeze={"b": np.full(3, -1, np.float32)})
    assert [t.name for t in planned.inputs] == ["x"]
    (got,) = run_module(planned.module, [X])
    np.testing.assert_array_equal(got.reshape(2, 3), np.maximum(X - 1, 0))


def test_initializer_listed_as_input_before_ir_4_is_a_constant():
    """Before IR 4 every initializer had to be an input: weights, not run-time inputs (as in
    onnxruntime)."""
    model = add_relu(extra_input=True, ir_version=3, opset=8)
    planned = compile_to_module(model)
    assert [t.name for t in planned.inputs] == ["x"]
    (got,) = run_module(planned.module, [X])
    np.testing.assert_array_equal(got.reshape(2, 3), np.maximum(X + np.arange(3), 0))


def stale_reshape(opset: int) -> onnx.ModelProto:
    """x[8] → Reshape to [8, 1, 1] → Relu → y, with the Reshape's result declared [8] (the stale
    value_info of the ONNX zoo's CNTK MNIST: Reshape398_Output_0)."""
    if opset < 5:  # Reshape-1: the shape is an attribute
        reshape = helper.make_node("Reshape", ["x"], ["r"], name="Reshape398", shape=[8, 1, 1])
        initializers = []
    else:
        reshape = helper.make_node("Reshape", ["x", "shape"], ["r"], name="Reshape398")
        initializers = [numpy_helper.from_array(np.array([8, 1, 1], np.int64), "shape")]
    graph = helper.make_graph(
        [reshape, helper.make_node("Relu", ["r"], ["y"], name="act")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8, 1, 1])],
        initializers,
        value_info=[helper.make_tensor_value_info("r", TensorProto.FLOAT, [8])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 3 if opset < 5 else model.ir_version
    return model


@pytest.mark.parametrize("opset", [1, 17])
def test_stale_intermediate_shape_is_reinferred_with_a_warning(opset):
    with pytest.warns(ModelWarning, match=r"stale shapes for 'r' \[8\] \(inferred \[8, 1, 1\]\): re-inferred"):
        planned = compile_to_module(stale_reshape(opset))
    assert [(t.name, t.shape) for t in planned.outputs] == [("y", [8, 1, 1])]
    x = np.arange(-4, 4, dtype=np.float32)
    (got,) = run_module(planned.module, [x])
    np.testing.assert_array_equal(got.ravel(), np.maximum(x, 0))


def test_graph_output_contradicting_its_nodes_stays_an_error():
    model = stale_reshape(17)
    del model.graph.value_info[:]
    model.graph.output[0].type.tensor_type.shape.dim[1].dim_value = 2  # declared [8, 2, 1]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelWarning)  # nothing is re-inferred quietly either
        message = refusal(model)
    assert message.startswith("shape inference failed: ") and "act" in message


# --- through the command line ------------------------------------------------------------------


def byte_mutants(tmp_path: Path) -> dict[str, Path]:
    """A few broken files, written as a user would get them."""
    files = {}
    model = conv_model()
    model.graph.initializer[0].raw_data = bytes(37 * 4)
    files["raw-data"] = model.SerializeToString()
    files["op-type"] = add_relu().SerializeToString().replace(b"Relu", b"R\xfflu")
    paths = {}
    for name, data in files.items():
        paths[name] = tmp_path / f"{name}.onnx"
        paths[name].write_bytes(data)
    big = tmp_path / "big"
    big.mkdir()
    paths["external-3.2GB"] = external_model(big, 800_000_000, 3_200_000_000, length=3_200_000_000)
    return paths


CLI_FRAGMENTS = {
    "raw-data": "tensor 'W' holds 148 B of raw data",
    "op-type": "op_type is not UTF-8 text",
    "external-3.2GB": "at most 2,147,483,647 B (2 GB)",
}


@pytest.mark.parametrize(
    ("name", "target"),
    [("raw-data", "host"), ("op-type", "host"), ("external-3.2GB", "host"), ("external-3.2GB", "cortex-m4")],
)
def test_cli_reports_a_broken_file_in_one_line_and_writes_nothing(tmp_path, name, target):
    path = byte_mutants(tmp_path)[name]
    out = tmp_path / "out"
    result = subprocess.run(
        [*ZANT, "compile", str(path), "-o", str(out), "--target", target], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("zant: error: "), result.stderr
    assert CLI_FRAGMENTS[name] in lines[0], lines[0]
    assert not out.exists() or not any(out.iterdir())


def test_cli_warns_of_stale_shapes_in_one_line_and_compiles(tmp_path):
    onnx.save(stale_reshape(1), tmp_path / "mnist_like.onnx")
    result = subprocess.run(
        [*ZANT, "compile", str(tmp_path / "mnist_like.onnx"), "-o", str(tmp_path / "out"), "--no-build"],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip().splitlines() == [
        "zant: warning: the model declares stale shapes for 'r' [8] (inferred [8, 1, 1]): re-inferred from its nodes"
    ]


def test_cli_input_with_an_initializer_is_in_the_header_and_plan(tmp_path):
    onnx.save(add_relu(extra_input=True), tmp_path / "m.onnx")
    out = tmp_path / "out"
    result = subprocess.run(
        [*ZANT, "compile", str(tmp_path / "m.onnx"), "-o", str(out), "--name", "net", "--no-build"],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    plan = json.loads((out / "net.plan.json").read_text())
    assert [(t["name"], t["shape"]) for t in plan["inputs"]] == [("x", [2, 3]), ("b", [3])]
    assert "net_predict(const float *input_x, const float *input_b, float *output_y);" in (out / "net.h").read_text()


@pytest.mark.parametrize("opset", [7, 17])
def test_byte_mutants_import_or_fail_with_a_zant_error(opset):
    """Issue 32's fuzzer in small: 150 seeded mutants of a Conv model (bytes changed, dropped or
    inserted) each import or raise a one-line `ZantError`, never another exception."""
    import random

    data = conv_model(opset).SerializeToString()
    rng = random.Random(opset)
    outcomes = {"imported": 0, "refused": 0}
    for _ in range(150):
        mutant = bytearray(data)
        for _ in range(rng.choice([1, 1, 2, 3])):
            at, roll = rng.randrange(len(mutant)), rng.random()
            if roll < 0.6:
                mutant[at] = rng.randrange(256)
            elif roll < 0.8:
                del mutant[at]
            else:
                mutant.insert(at, rng.randrange(256))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ModelWarning)
            try:
                import_model_bytes(bytes(mutant), ".")
                outcomes["imported"] += 1
            except ZantError as error:
                assert "\n" not in str(error)
                outcomes["refused"] += 1
    assert outcomes["imported"] > 0 and outcomes["refused"] > 0, outcomes
