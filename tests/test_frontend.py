"""Frontend errors through `zant-opt`, weight-blob timing, name round trips and dialect helpers."""

from __future__ import annotations

import re
import io
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import Builtin
from xdsl.dialects.func import Func
from xdsl.parser import Parser
from xdsl.printer import Printer

sys.path.insert(0, str(Path(__file__).parent / "filecheck" / "Inputs"))
import make_model  # noqa: E402

from zant.dialects.onnx import (  # noqa: E402
    ONNX,
    get_attr,
    input_value,
    inputs,
    onnx_op_class,
    string_value,
)
from zant.frontend.onnx_importer import import_model  # noqa: E402
from zant.ir.resources import constant_array  # noqa: E402

ZANT_OPT = str(Path(sys.executable).parent / "zant-opt")


def write(tmp_path: Path, kind: str, name: str = "model.onnx") -> Path:
    model = getattr(make_model, kind)() if "=" not in kind else make_model.external(
        kind.split("=", 1)[1]
    )
    path = tmp_path / name
    path.write_bytes(model.SerializeToString())
    return path


def run_error(*args: str) -> str:
    """Run zant-opt, expect exit 1 and exactly one `zant-opt: error:` line; return it."""
    proc = subprocess.run([ZANT_OPT, *args], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("zant-opt: error: ")
    return lines[0]


@pytest.mark.parametrize(
    ("kind", "args", "message"),
    [
        ("custom_domain", (), "node 'fused' (FusedThing): unsupported operator domain 'com.example'"),
        ("unknown_op", (), "node 'n0' (NoSuchOp): unsupported operator 'NoSuchOp'"),
        ("subgraph", (), "node 'n' (Loop): the trip count is only known at run time"),
        ("complex_input", (), "tensor 's' has unsupported element type COMPLEX64"),
        ("bad_checker", (), "invalid ONNX model: "),
        (
            "symbolic",
            (),
            "input 'x' has symbolic dimension 0 ('N'); fix it with --input-shape x=1x3",
        ),
        ("symbolic", ("--input-shape", "q=2x3"), "--input-shape names unknown input 'q'"),
        ("symbolic", ("--input-shape", "x=2"), "--input-shape x: rank 1 does not match"),
        ("dynamic_shape", (), "cannot infer a static shape for 'y' (output of node 'reshape0' (Reshape))"),
        ("external=../w.bin", (), "external data location '../w.bin' is outside the model's folder"),
        ("external=/etc/passwd", (), "external data location '/etc/passwd' is outside"),
    ],
)
def test_import_errors(tmp_path: Path, kind: str, args: tuple[str, ...], message: str):
    path = write(tmp_path, kind)
    assert message in run_error(str(path), *args)


def test_external_data_symlink_escape(tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    np.ones(4, np.float32).tofile(outside / "w.bin")
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    os.symlink(outside, model_dir / "link")
    path = write(model_dir, "external=link/w.bin")
    assert "outside the model's folder" in run_error(str(path))


def test_external_data_inside_folder_loads(tmp_path: Path):
    np.full(4, 2.5, np.float32).tofile(tmp_path / "w.bin")
    module = import_model(str(write(tmp_path, "external=w.bin")))
    (const,) = [op for op in module.walk() if op.name == "onnx.Constant"]
    assert constant_array(const).tolist() == [2.5] * 4


def test_malformed_truncated_empty_missing(tmp_path: Path):
    data = make_model.mlp().SerializeToString()
    (tmp_path / "trunc.onnx").write_bytes(data[:100])
    assert "malformed ONNX model" in run_error(str(tmp_path / "trunc.onnx"))
    (tmp_path / "empty.onnx").write_bytes(b"")
    assert "malformed ONNX model" in run_error(str(tmp_path / "empty.onnx"))
    (tmp_path / "junk.onnx").write_bytes(b"\xff\xfe garbage \x00" * 10)
    assert "malformed ONNX model" in run_error(str(tmp_path / "junk.onnx"))
    assert "missing.onnx" in run_error(str(tmp_path / "missing.onnx"))


def test_import_model_missing_file(tmp_path: Path):
    from zant.errors import ZantError

    with pytest.raises(ZantError, match="cannot read model"):
        import_model(str(tmp_path / "nope.onnx"))


def _context() -> Context:
    ctx = Context()
    for dialect in (Builtin, Func, ONNX):
        ctx.load_dialect(dialect)
    return ctx


def _print(module) -> str:
    stream = io.StringIO()
    printer = Printer(stream)
    printer.print_op(module)
    printer.print_metadata([Builtin])
    return stream.getvalue()


def test_one_megabyte_model_prints_and_reparses_fast(tmp_path: Path):
    """Import + print in-process, then re-parse and re-print with `zant-opt` in a fresh process.

    (xDSL keeps resource blobs in one process-wide store keyed by name, so re-parsing text that
    reuses keys already declared in this process would rename them; a fresh process is also
    what users run.)
    """
    path = write(tmp_path, "big")
    assert path.stat().st_size > 1_000_000
    start = time.perf_counter()
    text = _print(import_model(str(path)))
    (tmp_path / "big.mlir").write_text(text)
    proc = subprocess.run(
        [ZANT_OPT, str(tmp_path / "big.mlir")], capture_output=True, text=True, timeout=120
    )
    elapsed = time.perf_counter() - start
    assert proc.returncode == 0, proc.stderr
    assert elapsed < 20, f"import + print + parse + print took {elapsed:.1f}s"
    assert len(text) < 2_200_000  # one hex blob, not a million formatted floats
    # Resource keys are unique per process (xDSL keeps one store), so an earlier test in this
    # process may already own `w`: the weight's key is `w` or `w_<n>`.
    handle = re.search(r"dense_resource<(w(?:_\d+)?)> : tensor<512x512xf32>", text)
    assert handle, "the weight is not a dense_resource"
    key = handle.group(1)
    assert proc.stdout.strip() == text.strip()

    from onnx import numpy_helper

    expected = numpy_helper.to_array(make_model.big().graph.initializer[0])
    blob = text.split(f'{key}: "0x', 1)[1].split('"', 1)[0]
    assert blob[:8] == "10000000"  # alignment 16, little-endian
    np.testing.assert_array_equal(
        np.frombuffer(bytes.fromhex(blob[8:]), "<f4").reshape(512, 512), expected
    )


def test_hostile_names_round_trip(tmp_path: Path):
    module = import_model(str(write(tmp_path, "hostile")))
    reparsed = Parser(_context(), _print(module)).parse_module()
    (main,) = reparsed.ops
    names = main.attributes["onnx.input_names"].data + main.attributes["onnx.output_names"].data
    assert [string_value(s) for s in names] == ['in "x"\n\\', "out ü €"]
    assert string_value(main.attributes["onnx.graph_name"]) == 'graph "g"\n'
    relu = next(op for op in main.walk() if op.name == "onnx.Relu")
    assert string_value(relu.attributes["onnx.node_name"]) == 'node "0"\n\\é'


def test_dialect_helpers(tmp_path: Path):
    module = import_model(str(write(tmp_path, "conv")))
    ops = {op.name: op for op in module.walk()}
    clip = ops["onnx.Clip"]
    assert input_value(clip, 1) is None
    assert input_value(clip, 2) is not None and input_value(clip, 3) is None
    assert len(inputs(ops["onnx.Concat"])) == 2
    conv = ops["onnx.Conv"]
    assert input_value(conv, 2) is None
    assert get_attr(conv, "pads") == [1, 1, 1, 1]
    assert get_attr(conv, "auto_pad") == "NOTSET"  # schema default
    assert get_attr(conv, "group") == 1
    assert get_attr(conv, "strides") is None  # no default in the schema
    assert get_attr(ops["onnx.Split"], "num_outputs") == 2
    with pytest.raises(KeyError):
        get_attr(conv, "nope")
    assert onnx_op_class("Conv").name == "onnx.Conv"
    with pytest.raises(KeyError):
        onnx_op_class("NoSuchOp")
    constant = next(op for op in module.walk() if op.name == "onnx.Constant")
    assert constant_array(constant).shape == (1, 1, 3, 3)


def test_every_default_ml_and_training_domain_schema_has_an_op():
    import onnx.defs

    schemas = onnx.defs.get_all_schemas()
    names = {f"onnx.{s.name}" for s in schemas if s.domain in ("", "ai.onnx")}
    names |= {f"onnx.ml.{s.name}" for s in schemas if s.domain == "ai.onnx.ml"}
    names |= {f"onnx.training.{s.name}" for s in schemas if s.domain == "ai.onnx.preview.training"}
    # Besides the schemas: com.microsoft's QLinear ops (QOperator models hold them, fold-qdq creates
    # some) and Zant's LookupTable, Guard and SequenceSelect, no onnx schema; the model-local function ops.
    contrib = {"QLinearAdd", "QLinearMul", "QLinearLeakyRelu", "QLinearSoftmax", "QLinearAveragePool", "QLinearSigmoid",
               "QLinearGlobalAveragePool", "QLinearConcat", "QGemm"}
    own = {"onnx.LookupTable", "onnx.Guard", "onnx.SequenceSelect", "onnx.function", "onnx.call", "onnx.return"}
    assert {op.name for op in ONNX.operations} == names | {f"onnx.{n}" for n in contrib} | own
    # Deprecated ml versions are skipped: the regressor keeps its opset-3 attributes.
    regressor = onnx_op_class("TreeEnsembleRegressor", "ai.onnx.ml")
    assert "nodes_values_as_tensor" in regressor.spec().schema.attributes
    assert not regressor.spec().schema.deprecated


def _ml_model(tmp_path: Path, op_type: str, ml_opset: int = 1, **attributes) -> Path:
    import onnx
    from onnx import TensorProto, helper

    node = helper.make_node(op_type, ["x"], ["y"], name="n0", domain="ai.onnx.ml", **attributes)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("ai.onnx.ml", ml_opset)])
    path = tmp_path / "ml.onnx"
    onnx.save(model, path)
    return path


def test_ml_node_imports_with_its_domain_opset(tmp_path: Path):
    # A model that imports only ai.onnx.ml (as the backend suite's ml cases do).
    module = import_model(str(_ml_model(tmp_path, "Binarizer", threshold=0.25)))
    assert module.attributes["onnx.ml_opset"].value.data == 1
    (binarizer,) = [op for op in module.walk() if op.name == "onnx.ml.Binarizer"]
    assert get_attr(binarizer, "threshold") == 0.25
    assert binarizer.attributes["onnx.node_name"].data == "n0"


def test_ml_output_shapes_onnx_leaves_open_are_inferred(tmp_path: Path):
    """ONNX infers no shape for Scaler's output; the importer does, so Binarizer after it types."""
    import onnx
    from onnx import TensorProto, helper

    nodes = [
        helper.make_node("Scaler", ["x"], ["s"], domain="ai.onnx.ml", scale=[2.0]),
        helper.make_node("Binarizer", ["s"], ["y"], domain="ai.onnx.ml"),
    ]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("ai.onnx.ml", 1)])
    onnx.save(model, tmp_path / "chain.onnx")
    module = import_model(str(tmp_path / "chain.onnx"))
    (scaler,) = [op for op in module.walk() if op.name == "onnx.ml.Scaler"]
    assert str(scaler.results[0].type) == "tensor<2x3xf32>"


def test_ml_classifier_scores_onnx_leaves_untyped_are_inferred(tmp_path: Path):
    """Strict inference fails on the first consumer of a classifier's untyped scores (as
    skl2onnx emits them, behind an Identity); lenient inference and the importer's rules type
    them: one coefficient row for two classes scores both, a binary tree ensemble scores two."""
    import onnx
    from onnx import TensorProto, helper

    ml = {"domain": "ai.onnx.ml"}
    leaf = {"nodes_treeids": [0], "nodes_nodeids": [0], "nodes_modes": ["LEAF"], "class_treeids": [0],
            "class_nodeids": [0], "class_ids": [0], "class_weights": [0.5], "classlabels_int64s": [0, 1]}
    nodes = [
        helper.make_node("LinearClassifier", ["x"], ["l1", "s1"], coefficients=[1.0, 2.0, 3.0], intercepts=[0.5],
                         classlabels_ints=[0, 1], **ml),
        helper.make_node("TreeEnsembleClassifier", ["x"], ["l2", "s2"], **leaf, **ml),
        helper.make_node("Identity", ["s1"], ["y1"]),
        helper.make_node("Identity", ["s2"], ["y2"]),
    ]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 3])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [4, 2]) for n in ("y1", "y2")]
        + [helper.make_tensor_value_info(n, TensorProto.INT64, [4]) for n in ("l1", "l2")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("ai.onnx.ml", 3), helper.make_opsetid("", 21)])
    onnx.save(model, tmp_path / "classifiers.onnx")
    module = import_model(str(tmp_path / "classifiers.onnx"))
    types = {op.name: [str(r.type) for r in op.results] for op in module.walk() if op.name.startswith("onnx.ml.")}
    assert types == {
        "onnx.ml.LinearClassifier": ["tensor<4xi64>", "tensor<4x2xf32>"],
        "onnx.ml.TreeEnsembleClassifier": ["tensor<4xi64>", "tensor<4x2xf32>"],
    }


@pytest.mark.parametrize(
    ("op_type", "message"),
    [
        ("ZipMap", "node 'n0' (ZipMap): ai.onnx.ml.ZipMap works on maps or sequences, which are out of scope"),
        ("SVMClassifier", "node 'n0' (SVMClassifier): no lowering for operator 'ai.onnx.ml.SVMClassifier'"),
    ],
)
def test_ml_nodes_without_lowering_are_refused_by_name(tmp_path: Path, op_type: str, message: str):
    from zant.errors import ZantError

    with pytest.raises(ZantError) as error:
        import_model(str(_ml_model(tmp_path, op_type)))
    assert message in str(error.value)
