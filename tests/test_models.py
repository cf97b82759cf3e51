"""Multi-op models end to end: an MLP and a LeNet-style CNN, hostile names, the digits demo."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from e2e import check_model
from onnx import TensorProto, helper, numpy_helper

from zant.driver import CompileOptions, compile_model

ROOT = Path(__file__).resolve().parents[1]


def _init(rng, name, shape, scale=0.3):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def make_mlp() -> onnx.ModelProto:
    rng = np.random.default_rng(1)
    nodes = [
        helper.make_node("Gemm", ["x", "w1", "b1"], ["h1"], name="fc1", transB=1),
        helper.make_node("Relu", ["h1"], ["a1"], name="relu1"),
        helper.make_node("MatMul", ["a1", "w2"], ["h2"], name="fc2"),
        helper.make_node("Add", ["h2", "b2"], ["h3"], name="bias2"),
        helper.make_node("Sigmoid", ["h3"], ["y"], name="out"),
    ]
    graph = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 5])],
        [_init(rng, "w1", [32, 16]), _init(rng, "b1", [32]), _init(rng, "w2", [32, 5]), _init(rng, "b2", [5])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def make_lenet() -> onnx.ModelProto:
    rng = np.random.default_rng(2)
    nodes = [
        helper.make_node("Conv", ["x", "c1w", "c1b"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "c2w", "c2b"], ["c2"], name="conv2"),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("MaxPool", ["r2"], ["p2"], name="pool2", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["p2"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "fw", "fb"], ["logits"], name="fc", transB=1),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
    ]
    graph = helper.make_graph(
        nodes,
        "lenet",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 16, 16])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [1, 10])],
        [
            _init(rng, "c1w", [4, 1, 3, 3]),
            _init(rng, "c1b", [4]),
            _init(rng, "c2w", [8, 4, 3, 3]),
            _init(rng, "c2b", [8]),
            _init(rng, "fw", [10, 8 * 3 * 3]),
            _init(rng, "fb", [10]),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_mlp_matches_reference():
    check_model(make_mlp())


def test_lenet_matches_reference():
    check_model(make_lenet())


def test_lenet_builds_for_cortex_m4_release_small(tmp_path):
    path = tmp_path / "lenet.onnx"
    onnx.save(make_lenet(), path)
    result = compile_model(
        path, tmp_path / "m4", CompileOptions(name="lenet", target="cortex-m4", optimize="ReleaseSmall")
    )
    assert result.library_path is not None and result.library_path.exists()
    assert result.sizes is not None and result.sizes[".text"] > 0
    # The weights (4·9+4+8·36+8+10·72+10 floats) are in the image, in flash.
    assert result.sizes[".rodata"] + result.sizes[".text"] >= 4 * (36 + 4 + 288 + 8 + 720 + 10)
    header = result.header_path.read_text()
    assert "lenet_predict" in header and "LENET_PLAN_HASH" in header.upper()


HOSTILE_NAMES = [
    'in"put',  # quote
    "line\nbreak",  # newline
    "back\\slash",
    "const",  # Zig keyword
    "u8",  # Zig primitive type name
    "名前",  # non-ASCII
    "a-b",  # collide after sanitizing …
    "a_b",  # … with this one
]


def test_hostile_names_compile_to_correct_code():
    names = HOSTILE_NAMES
    nodes = [
        helper.make_node("Add", [names[0], names[1]], [names[2]], name='node "1"\n'),
        helper.make_node("Relu", [names[2]], [names[3]], name="fn"),
        helper.make_node("Mul", [names[3], names[4]], [names[5]], name="test"),
        helper.make_node("Neg", [names[5]], [names[6]], name="名"),
        helper.make_node("Abs", [names[6]], [names[7]], name=""),
    ]
    value = lambda n: helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 3])  # noqa: E731
    graph = helper.make_graph(
        nodes, "hostile\"graph", [value(names[0]), value(names[1]), value(names[4])], [value(names[6]), value(names[7])]
    )
    check_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))


def test_digits_demo_predictions_match_reference(tmp_path):
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples/digits/demo.py"), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "identical predictions      359/359" in result.stdout
    assert "cortex-m4 image            flash" in result.stdout
    # The firmware image, in zant compile's default mode, runs on the emulated M4 where QEMU is.
    assert re.search(r"one inference: [\d,]+ instructions, [\d,]+ cycles", result.stdout) or (
        "not run: qemu-system-arm not found" in result.stdout
    )


@pytest.mark.parametrize("model_maker", [make_mlp, make_lenet])
def test_compiled_output_is_deterministic(tmp_path, model_maker):
    path = tmp_path / "m.onnx"
    onnx.save(model_maker(), path)
    first = compile_model(path, tmp_path / "a", CompileOptions(name="m", build=False))
    second = compile_model(path, tmp_path / "b", CompileOptions(name="m", build=False))
    assert first.zig_path.read_text() == second.zig_path.read_text()
    assert first.plan["plan_hash"] == second.plan["plan_hash"]
    assert first.plan["tensor_layout_hash"] == second.plan["tensor_layout_hash"]


def test_dsp_kernels_compile_to_the_same_bytes(tmp_path):
    """The Cortex-M4 passes that rebuild an index from its linear form (`linear_form`,
    arm-dsp-requant's layers, arm-dsp-depthwise-rows' rows) build it in one order: the bench
    MobileNet int8 gives the same Zig in two processes, whose values' ids (and so any set's
    order) differ. (Before: different index orders in 2 runs of 2.)"""
    pytest.importorskip("onnxruntime")  # bench/models.py quantizes with it
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from models import QUANTIZED
    finally:
        sys.path.remove(str(ROOT / "bench"))
    path = tmp_path / "mobilenet_int8.onnx"
    onnx.save(QUANTIZED["mobilenet_int8"](), path)
    zig = []
    for run in ("a", "b"):
        out = tmp_path / run
        result = subprocess.run(
            [sys.executable, "-m", "zant.tools.cli", "compile", str(path), "--target", "cortex-m4", "--no-build",
             "-o", str(out)],
            capture_output=True, text=True,
        )
        assert result.returncode == 0, result.stderr
        zig.append((out / "model.zig").read_text())
    assert "zant_smmla" in zig[0]
    assert zig[0] == zig[1]
