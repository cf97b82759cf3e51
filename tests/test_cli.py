"""The `zant` command line: the compile summary, `zant run`, and bad input.

Every bad input exits non-zero with one `zant: error:` line, no traceback, and leaves no
generated file behind in the output folder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

ZANT = [sys.executable, "-m", "zant.tools.cli"]


def run_zant(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*ZANT, *map(str, args)], capture_output=True, text=True, cwd=cwd)


def add_relu_model(shape=(2, 3), op="Relu", input_name="x") -> onnx.ModelProto:
    graph = helper.make_graph(
        [
            helper.make_node("Add", [input_name, "b"], ["s"], name="add"),
            helper.make_node(op, ["s"], ["y"], name="act"),
        ],
        "g",
        [helper.make_tensor_value_info(input_name, TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(shape))],
        [numpy_helper.from_array(np.arange(shape[-1], dtype=np.float32), "b")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def assert_clean_error(result: subprocess.CompletedProcess, *fragments: str) -> None:
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("zant: error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def test_compile_writes_sources_and_prints_summary(tmp_path):
    onnx.save(add_relu_model(), tmp_path / "m.onnx")
    result = run_zant("compile", tmp_path / "m.onnx", "-o", tmp_path / "out", "--name", "net")
    assert result.returncode == 0, result.stderr
    for file_name in ("net.zig", "net.h", "net.plan.json", "libnet.so"):
        assert (tmp_path / "out" / file_name).exists(), file_name
    assert "scratch arena" in result.stdout and ".text" in result.stdout and "time" in result.stdout


def test_compile_no_build_writes_only_sources(tmp_path):
    onnx.save(add_relu_model(), tmp_path / "m.onnx")
    result = run_zant("compile", tmp_path / "m.onnx", "-o", tmp_path / "out", "--no-build")
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "model.h", "model.plan.json", "model.weights.bin", "model.zig"
    ]


def test_run_prints_outputs_beside_reference(tmp_path):
    onnx.save(add_relu_model(), tmp_path / "m.onnx")
    np.save(tmp_path / "x.npy", np.array([[-1, 0, 1], [2, -3, 4]], np.float32))
    result = run_zant("run", tmp_path / "m.onnx", "--input", f"x={tmp_path / 'x.npy'}")
    assert result.returncode == 0, result.stderr
    assert "reference" in result.stdout
    assert "max abs error 0" in result.stdout
    # ReleaseFast by default, and each stage told on stderr as it starts, in order.
    stages = [line.split()[1] for line in result.stderr.splitlines()]
    assert stages == ["building", "import", "passes", "emit", "build", "run", "reference", "done"], result.stderr
    assert result.stderr.startswith(
        "zant: building ReleaseFast for host (--safe adds bounds and overflow checks)\n"
        f"zant: import {tmp_path / 'm.onnx'}\n"
        "zant: passes (default pipeline of host)\n"
    )
    assert "zant: build ReleaseFast shared library for host\n" in result.stderr


def test_run_safe_builds_release_safe(tmp_path):
    onnx.save(add_relu_model(), tmp_path / "m.onnx")
    result = run_zant("run", tmp_path / "m.onnx", "--safe")
    assert result.returncode == 0, result.stderr
    assert "zant: building ReleaseSafe for host (bounds and overflow checked)" in result.stderr
    assert "zant: build ReleaseSafe shared library for host" in result.stderr


@pytest.mark.parametrize(
    "flags, mode",
    [([], "ReleaseFast"), (["--safe"], "ReleaseSafe"), (["-O", "Debug"], "Debug"),
     (["--safe", "-O", "ReleaseSafe"], "ReleaseSafe")],
)
def test_run_build_mode(flags, mode):
    from zant.tools.cli import _run_mode, make_parser

    assert _run_mode(make_parser().parse_args(["run", "m.onnx", *flags])) == mode


def test_run_safe_contradicting_optimize(tmp_path):
    onnx.save(add_relu_model(), tmp_path / "m.onnx")
    result = run_zant("run", tmp_path / "m.onnx", "--safe", "-O", "ReleaseSmall")
    assert_clean_error(result, "--safe means -O ReleaseSafe, not -O ReleaseSmall")


def test_missing_file(tmp_path):
    assert_clean_error(run_zant("compile", tmp_path / "nope.onnx", "-o", tmp_path / "out"), "nope.onnx")
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


@pytest.mark.parametrize("content", [b"", b"not an onnx file at all", None])
def test_malformed_or_truncated_file(tmp_path, content):
    path = tmp_path / "bad.onnx"
    if content is None:  # a real model cut in half
        content = add_relu_model().SerializeToString()[:40]
    path.write_bytes(content)
    result = run_zant("compile", path, "-o", tmp_path / "out")
    assert_clean_error(result)
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_unsupported_operator_names_node_and_op(tmp_path):
    graph = helper.make_graph(
        # Multinomial has neither a lowering nor a function body (seeded Random*/Bernoulli do now).
        [helper.make_node("Multinomial", ["x"], ["y"], name="noise", seed=1.0)],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.INT32, [3, 1])],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), tmp_path / "m.onnx")
    result = run_zant("compile", tmp_path / "m.onnx", "-o", tmp_path / "out")
    assert_clean_error(result, "noise", "Multinomial", "no lowering")
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_symbolic_dimension_needs_input_shape(tmp_path):
    onnx.save(add_relu_model(shape=("N", 3)), tmp_path / "m.onnx")
    assert_clean_error(run_zant("compile", tmp_path / "m.onnx", "-o", tmp_path / "out"), "'x'", "--input-shape")
    fixed = run_zant("compile", tmp_path / "m.onnx", "-o", tmp_path / "out", "--no-build", "--input-shape", "x=4x3")
    assert fixed.returncode == 0, fixed.stderr
    plan = json.loads((tmp_path / "out" / "model.plan.json").read_text())
    assert plan["inputs"] == [{"name": "x", "shape": [4, 3], "dtype": "float32"}]


def test_unsupported_element_type(tmp_path):
    graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"], name="id")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.COMPLEX64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.COMPLEX64, [2])],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), tmp_path / "m.onnx")
    assert_clean_error(run_zant("compile", tmp_path / "m.onnx", "-o", tmp_path / "out"), "element type")


def test_external_data_outside_model_folder_is_refused(tmp_path):
    model = add_relu_model(shape=(2, 64))
    secret = tmp_path / "secret.bin"
    secret.write_bytes(np.arange(64, dtype=np.float32).tobytes())
    weight = model.graph.initializer[0]
    weight.ClearField("raw_data")
    weight.data_location = TensorProto.EXTERNAL
    for key, value in (("location", "../secret.bin"), ("offset", "0"), ("length", str(64 * 4))):
        entry = weight.external_data.add()
        entry.key, entry.value = key, value
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "m.onnx").write_bytes(model.SerializeToString())
    result = run_zant("compile", folder / "m.onnx", "-o", tmp_path / "out")
    assert_clean_error(result, "external data")


def test_invalid_name_prefix(tmp_path):
    onnx.save(add_relu_model(), tmp_path / "m.onnx")
    assert_clean_error(run_zant("compile", tmp_path / "m.onnx", "-o", tmp_path / "out", "--name", "1-bad name"))


def test_output_folder_that_is_a_file(tmp_path):
    onnx.save(add_relu_model(), tmp_path / "m.onnx")
    (tmp_path / "out").write_text("not a folder")
    assert_clean_error(run_zant("compile", tmp_path / "m.onnx", "-o", tmp_path / "out", "--no-build"), "is a file")
    assert (tmp_path / "out").read_text() == "not a folder"


def test_debug_shows_traceback(tmp_path):
    result = run_zant("compile", tmp_path / "nope.onnx", "-o", tmp_path / "out", "--debug")
    assert result.returncode != 0
    assert "Traceback" in result.stderr


def test_zant_opt_invalid_ir_reports_location(tmp_path):
    source = tmp_path / "bad.mlir"
    source.write_text(
        "func.func @main() {\n"
        '  %b = uop.define_global "input" 0 "x" : !uop.buffer<4xf32>\n'
        "  %v = uop.view %b : !uop.buffer<4xf32> -> !uop.view<8xf32, strides [1], offset 0>\n"
        "  func.return\n"
        "}\n"
    )
    result = subprocess.run(
        [os.path.join(os.path.dirname(sys.executable), "zant-opt"), str(source)], capture_output=True, text=True
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "the input does not verify: 'uop.view' op view reaches elements" in result.stderr
    assert "%v = uop.view %b" in result.stderr  # the failing op, in custom form, marked


@pytest.mark.parametrize(
    "pipeline, message",
    [
        ("no-such-pass", "invalid pass pipeline 'no-such-pass': unknown pass 'no-such-pass'"),
        ("onnx-to-uo", "unknown pass 'onnx-to-uo' (did you mean 'onnx-to-uop'?"),
        ("onnx-to-uop{", "invalid pass pipeline 'onnx-to-uop{'"),
        # A mistyped option names the pass and lists its options, in kebab-case.
        (
            "onnx-to-uop{conv-lane=16}",
            "unknown option 'conv-lane' for pass 'onnx-to-uop'; its options: conv-lanes=int (default from "
            "#zant.target), conv-tile=int (default from #zant.target), conv-registers=int (default from",
        ),
        ("fold-constants{max_elemnts=3}", "unknown option 'max-elemnts' for pass 'fold-constants'"),
        ("onnx-to-uop{conv-lanes=x}", "invalid options for pass 'onnx-to-uop'"),
    ],
)
def test_invalid_pipeline(tmp_path, pipeline, message):
    onnx.save(add_relu_model(), tmp_path / "m.onnx")
    result = run_zant("compile", tmp_path / "m.onnx", "-o", tmp_path / "out", "--pipeline", pipeline)
    assert_clean_error(result, message)


def test_default_pipeline_follows_the_target(tmp_path):
    # The host vectorizes; a microcontroller (no float SIMD) keeps scalar loops.
    from zant.pipelines import DEFAULT_PIPELINE, MCU_PIPELINE, pipeline_for

    assert pipeline_for("host") == DEFAULT_PIPELINE and "vectorize" in DEFAULT_PIPELINE
    assert pipeline_for("cortex-m4") == MCU_PIPELINE and "vectorize" not in MCU_PIPELINE
    onnx.save(add_relu_model(shape=(4, 64)), tmp_path / "m.onnx")
    for target, vectors in (("host", True), ("cortex-m4", False)):
        out = tmp_path / target
        result = run_zant("compile", tmp_path / "m.onnx", "-o", out, "--target", target, "--no-build")
        assert result.returncode == 0, result.stderr
        assert ("@Vector(" in (out / "model.zig").read_text()) == vectors, target


@pytest.mark.parametrize("option", ["conv-lanes=4", "conv-tile=0"])
def test_invalid_conv_vector_options(tmp_path, option):
    onnx.save(add_relu_model(), tmp_path / "m.onnx")
    result = run_zant("compile", tmp_path / "m.onnx", "-o", tmp_path / "out", "--pipeline", f"onnx-to-uop{{{option}}}")
    assert_clean_error(result, "conv-lanes must be 0 (off), 8 or 16")


def padded_conv_model() -> onnx.ModelProto:
    """A padded 3×3 Conv and a Relu: the host pipeline copies the input into a zero-bordered
    buffer (more scratch) and vectorizes, the MCU pipeline does neither, so their plans differ."""
    weights = numpy_helper.from_array(np.linspace(-1, 1, 4 * 3 * 9, dtype=np.float32).reshape(4, 3, 3, 3), "w")
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 20, 20])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 20, 20])],
        [weights],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_plan_reports_the_plan_compile_ships(tmp_path):
    """`zant plan --target T --json` is the plan JSON `zant compile --target T` writes (plus the
    summary the table and chart read), for the host and a microcontroller without an FPU, whose
    plans differ (the host pads the Conv's input into a scratch copy, the Cortex-M0+ does not)."""
    onnx.save(padded_conv_model(), tmp_path / "m.onnx")
    shipped = {}
    for target in ("host", "cortex-m0plus"):
        out = tmp_path / target
        result = run_zant("compile", tmp_path / "m.onnx", "-o", out, "--target", target, "--no-build")
        assert result.returncode == 0, result.stderr
        written = json.loads((out / "model.plan.json").read_text())
        result = run_zant("plan", tmp_path / "m.onnx", "--target", target, "--json")
        assert result.returncode == 0, result.stderr
        reported = json.loads(result.stdout)
        assert reported.pop("summary")["scratch_bytes"] == next(a["size"] for a in written["arenas"] if a["role"] == "scratch")
        assert reported == written, target
        shipped[target] = written
    assert shipped["host"]["plan_hash"] != shipped["cortex-m0plus"]["plan_hash"]


def clip_model() -> onnx.ModelProto:
    """Clip whose bounds are graph inputs: configuration a user would freeze."""
    graph = helper.make_graph(
        [helper.make_node("Clip", ["x", "lo", "hi"], ["y"])],
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
            helper.make_tensor_value_info("lo", TensorProto.FLOAT, []),
            helper.make_tensor_value_info("hi", TensorProto.FLOAT, []),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_freeze_makes_inputs_constants(tmp_path):
    onnx.save(clip_model(), tmp_path / "m.onnx")
    np.save(tmp_path / "lo.npy", np.array(-0.5, np.float32))
    np.save(tmp_path / "hi.npy", np.array(0.5, np.float32))
    freeze = ["--freeze", f"lo={tmp_path / 'lo.npy'}", "--freeze", f"hi={tmp_path / 'hi.npy'}"]
    result = run_zant("compile", tmp_path / "m.onnx", "-o", tmp_path / "out", "--no-build", *freeze)
    assert result.returncode == 0, result.stderr
    plan = json.loads((tmp_path / "out" / "model.plan.json").read_text())
    assert [t["name"] for t in plan["inputs"]] == ["x"]
    assert "model_predict(const float *input_x, float *output_y);" in (tmp_path / "out" / "model.h").read_text()
    # `zant run` compares with the reference run on the original model, the frozen values as inputs.
    np.save(tmp_path / "x.npy", np.array([[-2, -0.25, 0], [0.25, 1, 3]], np.float32))
    result = run_zant("run", tmp_path / "m.onnx", "--input", f"x={tmp_path / 'x.npy'}", *freeze)
    assert result.returncode == 0, result.stderr
    assert "max abs error 0" in result.stdout and "[-0.5  -0.25  0.    0.25  0.5   0.5 ]" in result.stdout


@pytest.mark.parametrize(
    "name, value, fragments",
    [
        ("low", np.float32(0), ["--freeze low: the model has no input 'low' (inputs: 'x', 'lo', 'hi')"]),
        ("lo", np.zeros([2], np.float32), ["--freeze lo: the value has shape [2], the input is declared a scalar"]),
        ("x", np.zeros([3, 2], np.float32), ["--freeze x: the value has shape [3, 2], the input is declared 2x3"]),
        ("lo", np.float64(0), ["--freeze lo: the value is float64, the input is declared float32"]),
    ],
    ids=["unknown-name", "rank", "shape", "dtype"],
)
def test_freeze_refuses_a_value_unlike_the_input(tmp_path, name, value, fragments):
    onnx.save(clip_model(), tmp_path / "m.onnx")
    np.save(tmp_path / "v.npy", np.asarray(value))
    result = run_zant("compile", tmp_path / "m.onnx", "-o", tmp_path / "out", "--freeze", f"{name}={tmp_path / 'v.npy'}")
    assert_clean_error(result, *fragments)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("spec", ["lo", "lo={missing}", "lo={garbage}"], ids=["no-file", "missing", "not-npy"])
def test_freeze_unreadable_value(tmp_path, spec):
    onnx.save(clip_model(), tmp_path / "m.onnx")
    (tmp_path / "garbage.npy").write_text("not an array")
    spec = spec.format(missing=tmp_path / "missing.npy", garbage=tmp_path / "garbage.npy")
    result = run_zant("compile", tmp_path / "m.onnx", "-o", tmp_path / "out", "--freeze", spec)
    expected = "expected NAME=FILE.npy" if "=" not in spec else "cannot read the value of 'lo' from"
    assert_clean_error(result, expected)


def test_lit_config_runs_an_out_of_tree_suite(tmp_path):
    # A researcher's own suite: their pass in passes/, FileCheck tests beside it, the lit.cfg
    # from `zant lit-config`; lit finds zant-opt and filecheck itself.
    suite = tmp_path / "my-tests"
    (suite / "passes").mkdir(parents=True)
    example = Path(__file__).resolve().parent.parent / "examples" / "passes" / "hoist_constants.py"
    (suite / "passes" / "hoist.py").write_text(example.read_text())
    body = (
        "func.func @main() {\n"
        '  %y = uop.define_global "output" 0 "y" : !uop.buffer<4xf32>\n'
        "  uop.range %i = 0 to 4 {\n"
        "    %c = uop.const 1.500000e+00 : f32\n"
        "    %q = uop.gep %y[%i] : !uop.buffer<4xf32>\n"
        "    uop.store %c, %q : f32\n"
        "  }\n"
        "  func.return\n"
        "}\n"
    )
    run_line = "// RUN: zant-opt %s %load-passes -p example-hoist-constants | filecheck %s\n"
    (suite / "hoist.mlir").write_text(run_line + body + "// CHECK: uop.const\n// CHECK-NEXT: uop.range\n")
    (suite / "wrong.mlir").write_text(run_line + body + "// CHECK: uop.range\n// CHECK-NEXT: uop.const\n")
    (suite / "invalid.mlir").write_text(
        "// RUN: zant-opt %s --verify-diagnostics\n"
        "func.func @main() {\n"
        "  // expected-error@+1 {{role must be one of input, output, constant}}\n"
        '  %x = uop.define_global "weird" 0 "x" : !uop.buffer<2xf32>\n'
        "  func.return\n"
        "}\n"
    )
    result = run_zant("lit-config", suite)
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"wrote {suite / 'lit.cfg'}; run the suite with: lit -v {suite}\n"
    assert_clean_error(run_zant("lit-config", suite), "lit.cfg exists (--force overwrites it)")

    lit = os.path.join(os.path.dirname(sys.executable), "lit")
    env = {**os.environ, "PATH": "/usr/bin:/bin"}  # the venv's tools come from lit.cfg, not PATH
    ran = subprocess.run([lit, "-v", str(suite)], capture_output=True, text=True, env=env)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "PASS: my-tests :: hoist.mlir" in ran.stdout
    assert "PASS: my-tests :: invalid.mlir" in ran.stdout
    assert "FAIL: my-tests :: wrong.mlir" in ran.stdout
