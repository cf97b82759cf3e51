"""The ONNX backend node-test conformance runner (`zant conformance`, zant.tools.conformance)."""

from __future__ import annotations

import ctypes
from types import SimpleNamespace

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from zant.driver import TensorSignature
from zant.errors import ZantError
from zant.passes.onnx_to_uop import supported_ops
from zant.tools import batch, conformance

def _case(nodes, inputs, outputs, name="test_x", data_sets=()):
    graph = helper.make_graph(nodes, name, inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    return SimpleNamespace(name=name, model=model, data_sets=list(data_sets), rtol=1e-3, atol=1e-7)


def _f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def test_representative_slice_still_passes():
    """One case per operator (its first passing case in the committed report) still passes."""
    import json

    report = json.loads(conformance.DEFAULT_REPORT.read_text(encoding="utf-8"))
    passing_ops = {r["op"] for r in report["cases"] if r["status"] == "pass"}
    names = conformance.representative_slice()
    records, stats = conformance.run_conformance(names=names, jobs=2, batch_size=64)
    failed = [(r["name"], r["status"], r["reason"]) for r in records if r["status"] != "pass"]
    assert not failed
    assert {r["op"] for r in records} == passing_ops and len(records) == len(names)
    assert stats["batches"] >= 2
    # Every compiled case went through verify-arena-plan and planned at the lower bound.
    assert all(r["scratch_bytes"] is not None for r in records)
    assert all(r["scratch_bytes"] <= r["lower_bound_bytes"] for r in records)


def test_random_op_is_compiled_and_checked_against_the_seeds_draws():
    """A random op is compiled (no longer out of scope); a case without a seed gets the runner's
    seed and onnx.reference's draws for it as its expected outputs, its own data checked by
    shape, type and value range only; data out of the draws' range is an error."""
    node = helper.make_node("RandomUniformLike", ["x"], ["y"], low=2.0, high=3.0)
    case = _case([node], [_f32("x", [4])], [_f32("y", [4])])
    record = conformance.classify(case, 7, supported_ops())
    assert record.status == "" and record.op == "RandomUniformLike"
    x = np.zeros(4, np.float32)
    theirs = np.full(4, 2.5, np.float32)
    model, data_sets, check = conformance.random_reference(case.model, [([x], [theirs])])
    assert "seed 0 added by the runner" in check
    assert [a.f for a in model.graph.node[0].attribute if a.name == "seed"] == [0.0]
    expected = np.random.RandomState(0).rand(4).astype(np.float32) + np.float32(2.0)
    np.testing.assert_array_equal(data_sets[0][1][0], expected)
    with pytest.raises(ValueError, match="hold 7.0 for 'y', which RandomUniformLike cannot draw"):
        conformance.random_reference(case.model, [([x], [np.full(4, 7.0, np.float32)])])
    with pytest.raises(ValueError, match="differ in shape or type"):
        conformance.random_reference(case.model, [([x], [np.zeros(4, np.float64)])])
    # A seeded case whose data are the seed's draws is a plain case.
    case.model.graph.node[0].attribute.append(helper.make_attribute("seed", 0.0))
    _, _, check = conformance.random_reference(case.model, [([x], [expected])])
    assert check == ""


def test_bernoulli_cases_are_checked_not_passed(tmp_path):
    """test_bernoulli (no seed) and test_bernoulli_seed (data from NumPy's global generator,
    not the seed) compile and equal onnx.reference's draws: "checked", not "pass"."""
    import json

    report = tmp_path / "r.json"
    argv = ["--filter", "^test_bernoulli(_seed)?$", "--as-written", "--quiet", "--jobs", "1", "--output-json", str(report)]
    conformance.main(argv)
    saved = json.loads(report.read_text())
    records = {r["name"]: r for r in saved["cases"]}
    assert {n: r["status"] for n, r in records.items()} == {"test_bernoulli": "checked", "test_bernoulli_seed": "checked"}
    assert "seed 0 added by the runner" in records["test_bernoulli"]["reason"]
    assert "NumPy's global generator" in records["test_bernoulli_seed"]["reason"]
    assert saved["totals"]["checked"] == 2 and saved["totals"]["passed"] == 0


def test_training_dropout_is_compiled_with_a_seed_only():
    """A seed makes training-mode Dropout reproducible (the compiler draws the reference's
    NumPy stream); without one the mask is fresh on every call: out of scope."""
    def dropout(**attributes):
        node = helper.make_node("Dropout", ["x", "r", "t"], ["y"], **attributes)
        inputs = [_f32("x", [3]), _f32("r", []), helper.make_tensor_value_info("t", TensorProto.BOOL, [])]
        return conformance.classify(_case([node], inputs, [_f32("y", [3])], name="test_training_dropout"), 0, supported_ops())

    assert dropout(seed=0).status == ""
    record = dropout()
    assert record.status == "out_of_scope" and "without a seed" in record.reason


def test_data_dependent_and_sequence_cases_are_out_of_scope():
    # ImageDecoder compiles for BMP, PPM, JPEG, PNG, TIFF, JPEG 2000 and WebP; other bytes stay out, with the reason.
    def decoder(encoded: bytes):
        return _case(
            [helper.make_node("ImageDecoder", ["x"], ["y"])],
            [helper.make_tensor_value_info("x", TensorProto.UINT8, [len(encoded)])],
            [helper.make_tensor_value_info("y", TensorProto.UINT8, [1, 1, 3])],
            data_sets=[([np.frombuffer(encoded, np.uint8)], [])],
        )

    assert conformance.classify(decoder(b"\0\0\0\x0cjP  \r\n" + bytes(12)), 0, supported_ops()).status == ""
    assert conformance.classify(decoder(b"RIFF\0\0\0\0WEBPVP8 "), 0, supported_ops()).status == ""
    gif = conformance.classify(decoder(b"GIF89a" + bytes(12)), 0, supported_ops())
    assert gif.status == "out_of_scope" and "unknown format" in gif.reason
    assert conformance.classify(decoder(b"\xff\xd8\xff\xe0" + bytes(12)), 0, supported_ops()).status == ""
    assert conformance.classify(decoder(b"\x89PNG\r\n\x1a\n" + bytes(12)), 0, supported_ops()).status == ""
    assert conformance.classify(decoder(b"II*\0" + bytes(12)), 0, supported_ops()).status == ""
    assert conformance.classify(decoder(b"P6 1 1 255\n123"), 0, supported_ops()).status == ""
    # NonZero compiles for the output shape the model declares: the compiler's to judge.
    nonzero = _case(
        [helper.make_node("NonZero", ["x"], ["y"])],
        [_f32("x", [2])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, [1, 2])],
    )
    assert conformance.classify(nonzero, 0, supported_ops()).status == ""
    sequence = _case(
        [helper.make_node("SequenceConstruct", ["x"], ["y"])],
        [_f32("x", [2])],
        [helper.make_tensor_sequence_value_info("y", TensorProto.FLOAT, None)],
    )
    # Sequences are resolve-sequences' (compile-time lengths): the compiler's to judge; a map is out.
    record = conformance.classify(sequence, 0, supported_ops())
    assert record.status == "" and not record.numeric
    map_type = onnx.TypeProto()
    map_type.map_type.key_type = TensorProto.INT64
    map_type.map_type.value_type.tensor_type.elem_type = TensorProto.FLOAT
    mapped = _case(
        [helper.make_node("Identity", ["x"], ["y"])],
        [helper.make_value_info("x", map_type)],
        [helper.make_value_info("y", map_type)],
    )
    record = conformance.classify(mapped, 0, supported_ops())
    assert record.status == "out_of_scope" and "map" in record.reason


SEQUENCE_CASES = (
    "identity_sequence", "optional_has_element_empty_optional_input", "optional_get_element_optional_sequence",
    "sequence_map_add_1_sequence_1_tensor", "split_to_sequence_nokeepdims", "sequence_insert_at_back",
    "sequence_map_add_2_sequences_expanded", "if_seq",  # a Loop over SequenceLength; a run-time If over sequences
)
RUN_TIME_SEQUENCE_CASES = (  # run-time bounded sequences as written (docs/sequences.md)
    "sequence_insert_at_front", "split_to_sequence_1", "split_to_sequence_2", "loop13_seq", "loop16_seq_none",
)


def test_sequence_and_optional_cases_pass_as_written(tmp_path):
    """Sequence and optional graph inputs and outputs are N tensors in the C ABI (N from the
    case's data, as --input-shape gives it); each case compiles, builds and matches its data.
    A length, position or split only the data decide gives a run-time bounded sequence (slots at
    a capacity, the length in the extents array; a Loop's capacity from `_sequence_capacity`)."""
    import json

    report = tmp_path / "r.json"
    cases = (*SEQUENCE_CASES, *RUN_TIME_SEQUENCE_CASES)
    argv = ["--filter", f"^test_({'|'.join(cases)})$", "--as-written", "--quiet", "--jobs", "1", "--output-json", str(report)]
    conformance.main(argv)
    records = {r["name"].removeprefix("test_"): r for r in json.loads(report.read_text())["cases"]}
    assert {n: records[n]["status"] for n in cases} == dict.fromkeys(cases, "pass")


def test_op_without_lowering_is_unsupported_with_its_name():
    # Det has no function body; pretend it has no lowering either (one may have been added).
    supported = supported_ops() - {"onnx.Det"}
    node = helper.make_node("Det", ["x"], ["y"])
    case = _case([helper.make_node("Relu", ["a"], ["x"]), node], [_f32("a", [2, 2])], [_f32("y", [])])
    record = conformance.classify(case, 0, supported)
    assert record.status == "unsupported"
    assert record.missing_ops == ["Det"] and "Det" in record.reason


def test_op_with_a_function_body_goes_to_the_compiler():
    supported = supported_ops() - {"onnx.NegativeLogLikelihoodLoss"}
    node = helper.make_node("NegativeLogLikelihoodLoss", ["x", "t"], ["y"])
    t = helper.make_tensor_value_info("t", TensorProto.INT64, [2])
    case = _case([node], [_f32("x", [2, 3]), t], [_f32("y", [])])
    assert conformance.classify(case, 0, supported).status == ""


def _ml_case(op_type, **attributes):
    node = helper.make_node(op_type, ["x"], ["y"], domain="ai.onnx.ml", **attributes)
    graph = helper.make_graph([node], "g", [_f32("x", [2, 3])], [_f32("y", [2, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("ai.onnx.ml", 1)])
    return SimpleNamespace(name=f"test_{op_type}", model=model, data_sets=[], rtol=1e-3, atol=1e-7)


def test_ml_ops_with_a_lowering_go_to_the_compiler():
    assert conformance.classify(_ml_case("Binarizer"), 0, supported_ops()).status == ""
    record = conformance.classify(_ml_case("SVMClassifier"), 0, supported_ops())
    assert record.status == "unsupported"
    assert record.missing_ops == ["ai.onnx.ml.SVMClassifier"]
    # Without its lowering an ml op is reported like a default-domain one, not as a foreign domain.
    supported = supported_ops() - {"onnx.ml.Binarizer"}
    record = conformance.classify(_ml_case("Binarizer"), 0, supported)
    assert record.missing_ops == ["ai.onnx.ml.Binarizer"] and "no lowering" in record.reason


def test_pipeline_option_compiles_with_it_and_is_reported(tmp_path):
    """`zant conformance --pipeline P`: the cases compile with P (here without `dce` and the
    onnx-level folds) and the JSON and Markdown reports name it; the default is the driver's."""
    import json

    from zant.pipelines import DEFAULT_PIPELINE

    from zant.pipelines import PRINT_PIPELINE

    pipeline = f"onnx-to-uop,plan-arenas,verify-arena-plan,{PRINT_PIPELINE}"
    report, md = tmp_path / "r.json", tmp_path / "r.md"
    argv = ["--filter", "^test_ai_onnx_ml_binarizer$", "--pipeline", pipeline, "--quiet", "--jobs", "1",
            "--output-json", str(report), "--output-md", str(md)]
    assert conformance.main(argv) == 0
    saved = json.loads(report.read_text())
    assert saved["pipeline"] == pipeline and saved["command"].endswith(f"--pipeline '{pipeline}'")
    assert [r["status"] for r in saved["cases"]] == ["pass"]
    assert f"Target: `host`; pass pipeline: `{pipeline}`." in md.read_text()
    # A pipeline the driver refuses is every compiled case's compile error, named.
    node = helper.make_node("Relu", ["x"], ["y"])
    case = _case([node], [_f32("x", [2])], [_f32("y", [2])], data_sets=[([np.ones(2, np.float32)], [np.ones(2, np.float32)])])
    record = conformance.Record(index=0, name="test_x", op="Relu")
    assert conformance.compile_case(case, 0, tmp_path, record, "no-such-pass") is None
    assert record.status == "compile_error" and "invalid pass pipeline 'no-such-pass'" in record.reason
    record = conformance.Record(index=0, name="test_x", op="Relu")
    assert conformance.compile_case(case, 0, tmp_path, record) is not None  # DEFAULT_PIPELINE
    assert conformance.run_conformance(names=frozenset())[1]["pipeline"] == DEFAULT_PIPELINE


def test_target_option_compiles_with_the_mcu_pipeline(tmp_path):
    """`zant conformance --target cortex-m4`: the cases compile with MCU_PIPELINE (scalar code, no
    `@Vector`), pass on the host, and both reports name the target and the pipeline."""
    import json

    from zant.pipelines import MCU_PIPELINE

    report, md, work = tmp_path / "r.json", tmp_path / "r.md", tmp_path / "work"
    argv = ["--filter", "^test_(conv_with_strides_padding|maxpool_2d_pads|gemm_all_attributes)$",
            "--target", "cortex-m4", "--quiet", "--jobs", "1", "--work-dir", str(work),
            "--output-json", str(report), "--output-md", str(md)]
    assert conformance.main(argv) == 0
    saved = json.loads(report.read_text())
    assert saved["target"] == "cortex-m4" and saved["pipeline"] == MCU_PIPELINE
    assert saved["command"].endswith("--target cortex-m4")
    assert [r["status"] for r in saved["cases"]] == ["pass"] * 3
    assert f"Target: `cortex-m4`; pass pipeline: `{MCU_PIPELINE}`." in md.read_text()
    sources = [p for p in work.rglob("c*.zig") if p.stem[1:].isdigit()]
    assert len(sources) == 3 and not any("@Vector" in p.read_text() for p in sources)


def test_unknown_target_is_one_error_line(tmp_path, capsys):
    report = tmp_path / "r.json"
    assert conformance.main(["--target", "cortex-m99", "--output-json", str(report)]) == 1
    assert capsys.readouterr().err.strip().startswith("zant: error: unknown target 'cortex-m99'")
    assert not report.exists()


def _record(index, op, status, reason=""):
    return {**conformance.asdict(conformance.Record(index=index, name=f"test_{op.lower()}_{index}", op=op)),
            "status": status, "reason": reason}


def test_beside_reports_are_shown_side_by_side(tmp_path):
    """`--beside REPORT` (repeatable): the totals of every run in one table, the cases whose
    status differs from this run's, and per operator each run's pass count."""
    ours = [_record(0, "Relu", "pass"), _record(1, "Relu", "pass"), _record(2, "Conv", "pass")]
    theirs = [_record(0, "Relu", "pass"), _record(1, "Relu", "trap", "trap: the process killed by SIGILL"),
              _record(2, "Conv", "pass")]
    docs = tmp_path / "docs"
    docs.mkdir()
    conformance.write_json(theirs, {"target": "cortex-m4", "pipeline": "P", "seconds": 3.0}, docs / "mcu.json",
                           "zant conformance --target cortex-m4")
    firmware = {"target": "cortex-m4", "pipeline": "P", "firmware": {"board": "mps2-an386", "optimize": "ReleaseSafe"}}
    conformance.write_json(ours[:2], firmware, docs / "fw.json", "zant conformance --target cortex-m4 --firmware")
    beside = [conformance._load_beside(str(docs / name), str(docs / "report.md")) for name in ("mcu.json", "fw.json")]
    md = conformance.render_markdown(ours, {"target": "host", "pipeline": "H"}, "zant conformance", beside=beside)
    assert "| | host | cortex-m4 | cortex-m4 on mps2-an386 |" in md
    assert "| traps | 0 | 1 | 0 |" in md and "| passed | 3 | 2 | 2 |" in md and "| cases | 3 | 3 | 2 |" in md
    assert "`cortex-m4`: `P` (built and run on the host), parameters frozen, from `zant conformance --target cortex-m4`" in md
    assert "(mcu.json)" in md
    assert "`cortex-m4 on mps2-an386`: `P` in ReleaseSafe firmware images run under QEMU" in md
    assert "| test_relu_1 | Relu | pass | trap: trap: the process killed by SIGILL |" in md
    assert "Every case has the same status in `host` and `cortex-m4 on mps2-an386`." in md
    assert "| operator | cases | passed (host) | passed (cortex-m4) | passed (cortex-m4 on mps2-an386) |" in md
    assert "| Relu | 2 | 2 | 1 | 2 | all pass |" in md and "| Conv | 1 | 1 | 1 | – | all pass |" in md
    alone = conformance.render_markdown(ours, {"target": "host", "pipeline": "H"}, "zant conformance")
    assert "| Relu | 2 | 2 | all pass |" in alone and "cortex-m4" not in alone
    (tmp_path / "bad.json").write_text("[]")
    with pytest.raises(ZantError, match="not a conformance JSON report"):
        conformance._load_beside(str(tmp_path / "bad.json"), None)


def test_compile_errors_that_name_missing_lowerings_count_as_unsupported(tmp_path, monkeypatch):
    """The compiler's `UnsupportedOpsError` carries every node without a lowering, also where its
    message stops after five; the runner counts the case unsupported, each operator named once."""
    import zant.passes.onnx_to_uop as onnx_to_uop
    from zant.errors import UnsupportedOp, UnsupportedOpsError

    known = onnx_to_uop.supported_ops()
    monkeypatch.setattr(onnx_to_uop, "supported_ops", lambda: known - {"onnx.Sin", "onnx.Cos"})
    names = ["x", *(f"r{i}" for i in range(6)), "y"]
    nodes = [helper.make_node("Sin", [a], [b], name=f"sin{i}") for i, (a, b) in enumerate(zip(names, names[1:-1]))]
    nodes.append(helper.make_node("Cos", [names[-2]], ["y"]))
    case = _case(nodes, [_f32("x", [2])], [_f32("y", [2])])
    record = conformance.Record(index=0, name="test_x", op="Sin")
    assert conformance.compile_case(case, 0, tmp_path, record) is None
    assert record.status == "unsupported" and record.missing_ops == ["Cos", "Sin"]

    with pytest.raises(UnsupportedOpsError, match="and 2 more") as raised:
        from zant.driver import run_pipeline
        from zant.frontend.onnx_importer import import_model_bytes

        run_pipeline(import_model_bytes(case.model.SerializeToString(), str(tmp_path)), "onnx-to-uop")
    assert raised.value.ops[-1] == UnsupportedOp("", "Cos", "")
    assert [op.node for op in raised.value.ops[:6]] == [f"sin{i}" for i in range(6)]

    ml = UnsupportedOpsError("…", [UnsupportedOp("n", "SVMClassifier", "ai.onnx.ml")])
    assert conformance.unsupported_ops(ml) == ["ai.onnx.ml.SVMClassifier"]
    assert conformance.unsupported_ops(ZantError("no lowering to uop yet for onnx.Foo")) == []
    assert conformance.unsupported_ops(ValueError("no lowering to uop yet for onnx.Foo")) == []


def test_importer_names_the_nodes_it_refuses(tmp_path):
    """An ai.onnx.ml operator without a lowering and a subgraph left after expansion are
    `UnsupportedOpsError`s naming the node (the runner reads them, not the message)."""
    from zant.errors import UnsupportedOp, UnsupportedOpsError
    from zant.frontend.onnx_importer import import_model_bytes

    svm = helper.make_node("SVMClassifier", ["x"], ["label", "scores"], name="n0", domain="ai.onnx.ml")
    graph = helper.make_graph(
        [svm], "g", [_f32("x", [1, 2])],
        [helper.make_tensor_value_info("label", TensorProto.INT64, [1]), _f32("scores", [1, 2])],
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("ai.onnx.ml", 3)]
    )
    with pytest.raises(UnsupportedOpsError, match="no lowering for operator 'ai.onnx.ml.SVMClassifier'") as raised:
        import_model_bytes(model.SerializeToString(), str(tmp_path))
    assert raised.value.ops == (UnsupportedOp("n0", "SVMClassifier", "ai.onnx.ml"),)
    assert conformance.unsupported_ops(raised.value) == ["ai.onnx.ml.SVMClassifier"]


def test_parameter_inputs_are_frozen():
    case = _case(
        [helper.make_node("Reshape", ["x", "shape"], ["y"])],
        [_f32("x", [2, 3]), helper.make_tensor_value_info("shape", TensorProto.INT64, [2])],
        [_f32("y", [3, 2])],
        data_sets=[([np.zeros((2, 3), np.float32), np.array([3, 2], np.int64)], [np.zeros((3, 2), np.float32)])],
    )
    model, data_sets, frozen = conformance.freeze_parameters(case)
    assert frozen == ["shape"]
    assert [v.name for v in model.graph.input] == ["x"] and len(data_sets[0][0]) == 1
    assert [i.name for i in model.graph.initializer] == ["shape"]


def test_parameters_computed_by_scalar_arithmetic_are_frozen():
    """Expanded function bodies compute a Range limit from an input through Cast/Sub: the
    inputs it comes from are candidates; an input that only feeds data ops is not."""
    case = _case(
        [
            helper.make_node("Cast", ["n"], ["nf"], to=TensorProto.FLOAT),
            helper.make_node("Sub", ["nf", "x"], ["limit"]),
            helper.make_node("Range", ["x", "limit", "one"], ["r"]),
        ],
        [helper.make_tensor_value_info("n", TensorProto.INT64, []), _f32("x", []), _f32("one", [])],
        [_f32("r", [3])],
        data_sets=[([np.array(4, np.int64), np.float32(1.0), np.float32(1.0)], [np.arange(1, 4, dtype=np.float32)])],
    )
    assert conformance._parameter_sources(case.model.graph, {"n", "x", "one"}) == {"n", "x", "one"}
    relu = _case([helper.make_node("Relu", ["x"], ["y"])], [_f32("x", [2])], [_f32("y", [2])])
    assert conformance._parameter_sources(relu.model.graph, {"x"}) == set()


def test_parameters_computed_inside_if_branches_are_frozen():
    """AffineGrid's body splits `size` inside an If's branches and builds a shape from the If's
    outputs: the walk goes from an If result to the branches' values."""
    i64 = TensorProto.INT64

    def branch(name):
        return helper.make_graph(
            [helper.make_node("Split", ["size"], ["h", "w"], num_outputs=2)],
            name, [], [helper.make_tensor_value_info(o, i64, [1]) for o in ("h", "w")],
        )

    case = _case(
        [
            helper.make_node("If", ["c"], ["H", "W"], then_branch=branch("t"), else_branch=branch("e")),
            helper.make_node("Concat", ["H", "W"], ["shape"], axis=0),
            helper.make_node("ConstantOfShape", ["shape"], ["z"]),
        ],
        [helper.make_tensor_value_info("c", TensorProto.BOOL, []), helper.make_tensor_value_info("size", i64, [2])],
        [_f32("z", [2, 3])],
    )
    assert conformance._parameter_sources(case.model.graph, {"c", "size"}) == {"size"}


def _write(directory, name, body):
    (directory / f"{name}.zig").write_text(body, encoding="utf-8")


def test_batch_build_bisects_to_the_broken_file(tmp_path):
    names = [f"t{i}" for i in range(5)]
    for i, name in enumerate(names):
        body = f"export fn {name}_predict() callconv(.c) i32 {{ return {i}; }}\n"
        if i == 3:
            body = f"export fn {name}_predict() callconv(.c) i32 {{ return no_such_value; }}\n"
        # every generated file carries its own root-only panic handler: it must not matter
        body = "const std = @import(\"std\");\npub const panic = std.debug.FullPanic(std.debug.defaultPanic);\n" + body
        _write(tmp_path, name, body)
    for use_error_names in (False, True):
        library, broken, builds = batch.build_batch(tmp_path, names, f"b{int(use_error_names)}", use_error_names)
        assert set(broken) == {"t3"} and "no_such_value" in broken["t3"]
        assert broken["t3"].startswith("compile error: zig:")
        assert builds >= 3
        loaded = ctypes.CDLL(str(library))
        for i, name in enumerate(names):
            if name != "t3":
                assert getattr(loaded, f"{name}_predict")() == i
        with pytest.raises(AttributeError):
            getattr(loaded, "t3_predict")


def test_trapping_case_is_pinpointed(tmp_path):
    # Like generated code: a runtime index cast with @intCast; x[0] = -1 makes it trap in ReleaseSafe.
    for name, index in (("ok1", "0"), ("bad", "@intFromFloat(x[0])"), ("ok2", "1")):
        _write(
            tmp_path,
            name,
            f"export fn {name}_predict(x: [*]const f32, y: [*]f32) callconv(.c) i32 {{\n"
            f"    const i: isize = {index};\n"
            f"    y[0] = x[@intCast(i)] * 2;\n"
            f"    return 0;\n}}\n",
        )
    library, broken, _ = batch.build_batch(tmp_path, ["ok1", "bad", "ok2"], "traps")
    assert library is not None and not broken
    x = np.array([-1.0, 5.0], np.float32)
    specs = [
        {
            "name": name,
            "inputs": [TensorSignature("x", [2], "float32")],
            "outputs": [TensorSignature("y", [1], "float32")],
            "data_sets": [([x], [np.array([want], np.float32)])],
            "rtol": 0.0,
            "atol": 0.0,
        }
        for name, want in (("ok1", -2.0), ("bad", 0.0), ("ok2", 9.0))
    ]
    results, children = batch.run_batch(library, specs, tmp_path, timeout=120)
    assert results["ok1"]["status"] == "pass"
    assert results["bad"]["status"] == "trap" and "SIG" in results["bad"]["reason"]
    assert results["ok2"]["status"] == "mismatch" and "max abs error 1" in results["ok2"]["reason"]
    assert children == 3  # the batch, the trapping case alone, the rest


def test_compare_semantics():
    nan = np.float32("nan")
    assert batch.compare(np.array([1.0, nan], np.float32), np.array([1.0005, nan], np.float32), 1e-3, 0)[0]
    ok, reason, max_abs, max_ulp = batch.compare(np.float32(1.0).reshape(()), np.float32(1.0 + 2**-22).reshape(()), 0, 0)
    assert not ok and max_ulp == 2.0
    assert not batch.compare(np.array([1, 2]), np.array([1, 3]), 1, 1)[0]  # integers: exactly
    assert not batch.compare(np.array([1.0], np.float32), np.array([1.0]), 0, 0)[0]  # dtype


# -- the firmware slice ----------------------------------------------------------------------------


def _m4():
    from zant.backend.build import board_for
    from zant.backend.firmware import qemu_missing

    board = board_for("cortex-m4")
    missing = qemu_missing(board)
    if missing:
        pytest.skip(missing)
    return board


FIRMWARE_CASES = (
    "conv_with_strides_padding", "maxpool_2d_pads", "gemm_all_attributes", "lstm_defaults",
    "dequantizelinear",  # 0-d inputs
    "reduce_sum_empty_set", "cast_FLOAT_to_FLOAT16", "argmax_keepdims_example", "where_example",
)


def test_firmware_runs_cases_in_one_image_under_qemu(tmp_path):
    """`zant conformance --target cortex-m4 --firmware --filter …`: the cases are linked into
    one ReleaseFast image for mps2-an386, run under QEMU, their outputs compared with the suite's."""
    import json

    from zant.pipelines import MCU_PIPELINE

    _m4()
    report, work = tmp_path / "r.json", tmp_path / "work"
    argv = ["--filter", f"^test_({'|'.join(FIRMWARE_CASES)})$", "--target", "cortex-m4", "--firmware",
            "--quiet", "--jobs", "1", "--work-dir", str(work), "--output-json", str(report)]
    assert conformance.main(argv) == 0
    saved = json.loads(report.read_text())
    assert saved["firmware"] == {"board": "mps2-an386", "optimize": "ReleaseFast"}
    assert saved["pipeline"] == MCU_PIPELINE and saved["command"].endswith("--target cortex-m4 --firmware")
    assert sorted(r["name"] for r in saved["cases"]) == sorted(f"test_{n}" for n in FIRMWARE_CASES)
    assert [(r["name"], r["status"], r["reason"]) for r in saved["cases"] if r["status"] != "pass"] == []
    assert [p.name for p in work.rglob("*.elf")] == ["image000_1.elf"]


def test_firmware_failures_are_pinned_to_their_case(tmp_path):
    """A case whose predict returns non-zero is a mismatch; one that panics (a ReleaseSafe
    bounds check) is a trap, and the cases it kept from running go into a second image."""
    board = _m4()
    bodies = {
        "c0001": "y[0] = x[0] * 2;",
        "c0002": "if (x[0] > 0) return 3;\n    y[0] = 0;",
        "c0003": "const i: isize = @intFromFloat(x[0]);\n    y[0] = x[@intCast(i)];",  # x[0] = -1: panics
        "c0004": "y[0] = x[1];",
    }
    for name, body in bodies.items():
        _write(tmp_path, name, f"export fn {name}_predict(x: [*]const f32, y: [*]f32) callconv(.c) i32 {{\n    {body}\n    return 0;\n}}\n")
    x = np.array([-1.0, 5.0], np.float32)
    wants = {"c0001": -2.0, "c0002": 0.0, "c0003": 0.0, "c0004": 4.0}
    x_positive = np.array([1.0, 5.0], np.float32)
    compiled = [
        batch.Compiled(name, [TensorSignature("x", [2], "float32")], [TensorSignature("y", [1], "float32")],
                             [([x_positive if name == "c0002" else x], [np.array([want], np.float32)])])
        for name, want in wants.items()
    ]
    records = {int(n[1:]): conformance.Record(index=int(n[1:]), name=n, op="Custom") for n in bodies}
    timings = {}
    conformance.run_images(tmp_path, compiled, records, conformance.Firmware(board, "ReleaseSafe"), "image", timings)
    status = {r.name: (r.status, r.reason) for r in records.values()}
    assert status["c0001"] == ("pass", "")
    assert status["c0002"] == ("mismatch", "firmware: c0002_predict returned 3")
    assert status["c0003"][0] == "trap" and status["c0003"][1].startswith("trap: c0003_predict panic:")
    assert status["c0004"][0] == "mismatch" and "max abs error 1" in status["c0004"][1]
    assert timings["children"] == 2  # the image, then c0004 alone in a second one


def test_firmware_options_are_checked_before_anything_runs(tmp_path, capsys):
    report = tmp_path / "r.json"
    for argv, message in (
        (["--firmware"], "--firmware runs the cases on a microcontroller: give an MCU --target"),
        (["--target", "cortex-m4", "--board", "mps2-an386"], "--board and -O describe the firmware images: add --firmware"),
        (["--target", "cortex-m4", "--firmware", "-O", "Fastest"], "unknown optimize mode 'Fastest'"),
        (["--target", "cortex-m4", "--firmware", "--board", "microbit"], "has a cortex-m0plus core, not cortex-m4"),
    ):
        assert conformance.main([*argv, "--output-json", str(report)]) == 1
        err = capsys.readouterr().err.strip()
        assert err.startswith("zant: error: ") and message in err and len(err.splitlines()) == 1
    assert not report.exists()


@pytest.mark.slow
@pytest.mark.parametrize("optimize", ["ReleaseFast", "ReleaseSafe"])
def test_firmware_slice_passes(tmp_path, optimize):
    """The MCU report's representative slice (one passing case per operator) as firmware: every
    case passes on the emulated Cortex-M4 too."""
    import json

    _m4()
    names = conformance.representative_slice(conformance.MCU_REPORT)
    report = tmp_path / "r.json"
    argv = ["--target", "cortex-m4", "--firmware", "-O", optimize, "--quiet", "--output-json", str(report)]
    assert conformance.main(argv) == 0
    saved = json.loads(report.read_text())
    assert {r["name"] for r in saved["cases"]} == names
    assert [(r["name"], r["status"], r["reason"]) for r in saved["cases"] if r["status"] != "pass"] == []



def test_as_written_keeps_every_graph_input_a_runtime_input(tmp_path):
    """`--as-written`: nothing is frozen (the Reshape's shape stays an input of the generated
    function, as `zant compile` takes the file); the reports record the mode."""
    import json

    shape = np.array([3, 2], np.int64)
    case = _case(
        [helper.make_node("Reshape", ["x", "shape"], ["y"])],
        [_f32("x", [2, 3]), helper.make_tensor_value_info("shape", TensorProto.INT64, [2])],
        [_f32("y", [3, 2])],
        data_sets=[([np.zeros((2, 3), np.float32), shape], [np.zeros((3, 2), np.float32)])],
    )
    frozen, written = (conformance.Record(index=0, name="test_x", op="Reshape") for _ in range(2))
    compiled = conformance.compile_case(case, 0, tmp_path, frozen, mode="frozen")
    assert frozen.frozen == ["shape"] and [s.name for s in compiled.inputs] == ["x"]
    compiled = conformance.compile_case(case, 1, tmp_path, written, mode="as-written")
    assert written.frozen == [] and [s.name for s in compiled.inputs] == ["x", "shape"]
    assert [len(ins) for ins, _ in compiled.data_sets] == [2]

    report, md = tmp_path / "r.json", tmp_path / "r.md"
    argv = ["--filter", "^test_reshape_reduced_dims$", "--as-written", "--quiet", "--jobs", "1",
            "--output-json", str(report), "--output-md", str(md)]
    assert conformance.main(argv) == 0
    saved = json.loads(report.read_text())
    assert saved["mode"] == "as-written" and saved["command"] == "zant conformance --filter '^test_reshape_reduced_dims$' --as-written"
    assert [(r["status"], r["frozen"]) for r in saved["cases"]] == [("pass", [])]
    assert "Every graph input stays a run-time input" in md.read_text()
    with pytest.raises(ZantError, match="unknown conformance mode 'thawed'"):
        conformance.run_conformance(names=frozenset(), mode="thawed")


def test_render_shows_a_saved_run_beside_others(tmp_path, capsys):
    """`--render REPORT --output-md PATH --beside OTHER`: the Markdown of a saved run with another
    beside it (here the same cases as written), per operator both pass counts; nothing runs."""
    frozen = [_record(0, "ReduceSum", "pass"), _record(1, "ReduceSum", "pass"), _record(2, "Relu", "pass")]
    written = [_record(0, "ReduceSum", "compile_error", "compile error: input 1 must be a constant"),
               _record(1, "ReduceSum", "pass"), _record(2, "Relu", "pass")]
    conformance.write_json(frozen, {"target": "host", "pipeline": "P", "seconds": 5.0, "note": "Measured at abc."},
                           tmp_path / "host.json", "zant conformance")
    conformance.write_json(written, {"target": "host", "pipeline": "P", "seconds": 6.0, "mode": "as-written"},
                           tmp_path / "aw.json", "zant conformance --as-written")
    md = tmp_path / "host.md"
    argv = ["--render", str(tmp_path / "host.json"), "--beside", str(tmp_path / "aw.json"), "--output-md", str(md)]
    assert conformance.main(argv) == 0
    text = md.read_text()
    assert "from the records of `zant conformance` (onnx" in text and "Measured at abc." in text
    assert "| | host | host, as written |" in text and "| numeric passed | 3 | 2 |" in text
    assert "`host, as written`: `P` (built and run on the host), as written, from `zant conformance --as-written`" in text
    assert "| operator | cases | passed (host) | passed (host, as written) | status / notes |" in text
    assert "| ReduceSum | 2 | 2 | 1 | all pass |" in text
    assert "Inputs that real models hold as constants" in text  # the rendered run froze them
    assert conformance.main(["--render", str(tmp_path / "host.json")]) == 1
    assert "give --output-md" in capsys.readouterr().err
    assert conformance.main(["--render", str(tmp_path / "host.json"), "--as-written", "--output-md", str(md)]) == 1
    assert "--as-written would describe a new one" in capsys.readouterr().err


# -- the model suites (`zant conformance --models`) -------------------------------------------


def test_model_suites_are_read_as_onnx_runner_reads_them():
    """149 cases over the four suites; a light model gets arange(n)/n and its output .pb, a
    case whose inputs have defaults (IR >= 4) leaves them out of its data sets."""
    cases = {c.name: c for c in conformance.load_cases("models")}
    counts = {s: sum(1 for c in cases.values() if c.suite == s) for s in conformance.MODEL_SUITES}
    assert counts == {"simple": 23, "pytorch-converted": 82, "pytorch-operator": 35, "light": 9}
    vgg = cases["light/test_vgg19"]
    (inputs, outputs), = vgg.data_sets
    assert inputs[0].shape == (1, 3, 224, 224) and inputs[0].dtype == np.float32
    np.testing.assert_array_equal(inputs[0].reshape(-1)[:3], np.array([0, 1, 2], np.float32) / inputs[0].size)
    assert outputs[0].shape == (1, 1000) and vgg.rtol == 1e-3
    sequence = cases["simple/test_sequence_model1"]
    assert [len(ins) for ins, _ in sequence.data_sets] == [3]  # X, Y, Z; pos and pos_at take their defaults
    model, data_sets, frozen = conformance.freeze_parameters(sequence)
    assert frozen == ["pos", "pos_at"] and [v.name for v in model.graph.input] == ["X", "Y", "Z"]
    model, data_sets, frozen = conformance.as_written(sequence)
    assert frozen == [] and [a.tolist() for a in data_sets[0][0][3:]] == [1, 2]  # the initializers


MODEL_CASES = ("simple/test_sign_model", "simple/test_gradient_of_add_and_mul", "simple/test_sequence_model3",
               "pytorch-operator/test_operator_chunk")


@pytest.mark.parametrize("target", ["host", "cortex-m4"])
def test_model_suite_cases_pass(tmp_path, target):
    """A few cases of the model suites through the runner: Gradient, inputs with defaults, a
    torch export; with --render the report groups them by suite."""
    import json

    argv = ["--models", "--filter", "^(" + "|".join(MODEL_CASES) + ")$", "--target", target, "-q",
            "--output-json", str(tmp_path / "models.json")]
    assert conformance.main(argv) == 0
    saved = json.loads((tmp_path / "models.json").read_text(encoding="utf-8"))
    assert saved["suite"] == "models" and saved["command"].startswith("zant conformance --models")
    assert {r["name"]: r["status"] for r in saved["cases"]} == dict.fromkeys(MODEL_CASES, "pass")
    assert conformance.main(["--render", str(tmp_path / "models.json"), "--output-md", str(tmp_path / "models.md")]) == 0
    text = (tmp_path / "models.md").read_text(encoding="utf-8")
    assert text.startswith("# ONNX backend model-test conformance") and "## Per suite" in text and "## Per case" in text
    assert "| simple | 3 | 3 |" in text


@pytest.mark.slow
@pytest.mark.parametrize("target", ["host", "cortex-m4"])
def test_every_model_suite_case_passes(target):
    """The whole model suites (the light models take minutes each and GBs of memory to build):
    every case passes but the string ones (out of scope until the compiler takes strings)."""
    records, _ = conformance.run_conformance(target=target, suite="models")
    failed = [(r["name"], r["status"], r["reason"]) for r in records if r["status"] not in ("pass", "out_of_scope")]
    assert not failed
    assert all(r["reason"] == "string tensors" for r in records if r["status"] == "out_of_scope")


def test_model_suites_as_firmware_default_to_all_but_the_light_models(monkeypatch):
    """`--models --target cortex-m4 --firmware` without --filter: every model but the light
    ones (hundreds of MB of weights), not the node suite's representative slice."""
    _m4()
    seen = {}

    def fake_run(filter_regex, jobs, batch_size, work_dir, progress, names, *rest):
        seen["names"], seen["suite"] = names, rest[-1]
        return [], {"seconds": 0.0, "target": "cortex-m4", "pipeline": "", "mode": "frozen"}

    monkeypatch.setattr(conformance, "run_conformance", fake_run)
    assert conformance.main(["--models", "--target", "cortex-m4", "--firmware", "-q"]) == 0
    cases = conformance.load_cases("models")
    assert seen["suite"] == "models"
    assert seen["names"] == {c.name for c in cases if c.suite != "light"} and len(seen["names"]) == 140
