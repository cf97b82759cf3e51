"""Random-graph differential testing (`zant.tools.random_graphs`): the generator, the shrinker,
a few hundred random graphs through the whole compiler, and the shrunk regressions it found."""

from __future__ import annotations

import collections
from pathlib import Path

import numpy as np
import onnx
import pytest
from zant.tools import random_graphs as rg
from zant.pipelines import PRINT_PIPELINE

REGRESSIONS = Path(__file__).parent / "regressions"
SEED = 20261122


@pytest.fixture(scope="module")
def sample() -> list[rg.Graph]:
    graphs = [rg.prepared(SEED, i) for i in range(200)]
    errors = [g for g in graphs if isinstance(g, str)]
    assert not errors, errors[:3]  # the reference accepts every generated graph
    return graphs


def test_generation_is_deterministic():
    for index in range(5):
        a, b = rg.generate(SEED, index), rg.generate(SEED, index)
        assert a.model.SerializeToString() == b.model.SerializeToString()
        assert all(np.array_equal(x, y) for x, y in zip(a.feeds, b.feeds))
    assert rg.generate(SEED, 0).model.SerializeToString() != rg.generate(SEED + 1, 0).model.SerializeToString()


def test_graphs_are_valid_chains_and_dags(sample):
    consumers_max, outputs_max, sizes = 0, 0, []
    for graph in sample:
        rg.check(graph.model)  # full_check, but for the extents onnx's inference misreads
        nodes = graph.model.graph.node
        sizes.append(len(nodes))
        uses = collections.Counter(i for n in nodes for i in n.input)
        produced = {o for n in nodes for o in n.output}
        consumers_max = max(consumers_max, max((uses[v] for v in produced), default=0))
        outputs_max = max(outputs_max, len(graph.model.graph.output))
        for y in graph.expected:
            assert y.dtype.kind != "f" or np.isfinite(y).all()
    assert min(sizes) >= 2 and max(sizes) == 12
    assert consumers_max >= 2 and outputs_max >= 3  # values reused, several outputs


def test_graphs_cover_dtypes_and_ops(sample):
    dtypes, ops = set(), collections.Counter()
    for graph in sample:
        ops.update(n.op_type for n in graph.model.graph.node)
        dtypes.update(x.dtype.name for x in graph.feeds)
        dtypes.update(y.dtype.name for y in graph.expected)
    assert dtypes >= {"float32", "float16", "float64", "int32", "int64", "int8", "uint8", "bool"}
    available = {op.name for op in rg.available_ops()}
    assert len(available & set(ops)) >= 0.8 * len(available), sorted(available - set(ops))


def test_only_supported_ops_are_generated():
    supported = frozenset(f"onnx.{n}" for n in ("Abs", "Add", "Clip", "Relu", "Mul", "Softmax"))
    ops = rg.available_ops(supported)
    assert {op.name for op in ops} == {"Abs", "Add", "Clip", "Relu", "Mul", "Softmax"}
    for index in range(20):
        used = {n.op_type for n in rg.generate(SEED, index, ops).model.graph.node}
        assert used <= {"Abs", "Add", "Clip", "Relu", "Mul", "Softmax", "Identity"}


def test_dtypes_follow_the_schemas():
    ops = {op.name: op for op in rg.available_ops()}
    assert "uint8" not in ops["ReduceSum"].dtypes and "bool" not in ops["Add"].dtypes
    assert "float16" in ops["Exp"].dtypes and "int8" in ops["Where"].dtypes


def _has(op_type: str):
    return lambda graphs: [any(n.op_type == op_type for n in g.model.graph.node) for g in graphs]


def test_shrinker_reduces_an_injected_failure(sample):
    """A predicate 'contains a Softmax' stands in for a compiler bug: the shrinker must keep
    the Softmax and strip everything else, down to small inputs."""
    graph = max((g for g in sample if _has("Softmax")([g])[0]), key=lambda g: len(g.model.graph.node))
    assert len(graph.model.graph.node) >= 4
    small = rg.shrink(graph, _has("Softmax"))
    nodes = [n.op_type for n in small.model.graph.node]
    assert nodes == ["Softmax"]
    assert len(small.model.graph.output) == 1 and len(small.model.graph.node[0].attribute) == 0
    assert sum(x.size for x in small.feeds) <= 2  # every dimension halved down
    onnx.checker.check_model(small.model, full_check=True)


def test_shrinker_keeps_a_graph_it_cannot_reduce(sample):
    graph = sample[0]
    assert rg.shrink(graph, lambda graphs: [False] * len(graphs)) is graph


def test_saved_graphs_round_trip(sample, tmp_path):
    graph = sample[1]
    rg.save_graph(graph, tmp_path / "g")
    loaded = rg.load_graph(tmp_path / "g")
    assert loaded.model.graph.node == graph.model.graph.node
    assert all(np.array_equal(a, b) for a, b in zip(loaded.expected, graph.expected))


def test_random_graphs_compile_and_match(tmp_path):
    """A few hundred graphs through the whole compiler, two libraries built in parallel."""
    records, _ = rg.run(300, seed=SEED, jobs=2, batch_size=150, keep=str(tmp_path), do_shrink=False)
    failures = [f"graph {r['index']}: {r['status']}: {r['reason']}" for r in records if r["status"] != "pass"]
    assert len(records) == 300 and not failures, "\n".join(failures)


def test_regressions(tmp_path):
    """Every shrunk failure kept in tests/regressions compiles, runs and matches."""
    stems = sorted(p.with_suffix("") for p in REGRESSIONS.glob("*.onnx"))
    assert stems
    graphs = [rg.load_graph(stem, index) for index, stem in enumerate(stems)]
    records = rg.run_graphs(graphs, tmp_path)
    failures = [f"{stems[i].name}: {r['status']}: {r['reason']}" for i, r in records.items() if r["status"] != "pass"]
    assert not failures, "\n".join(failures)


def test_integer_division_by_zero_is_not_a_valid_graph():
    """Found by the long run (seed 1, graph 1731): Clip(x, 0.5, 0.5) on int32 is 0, not 0.5,
    so a Div by it was not guarded; the reference must refuse such a graph, not wrap."""
    x, zero = np.array(-45, np.int32), np.array(0, np.int32)
    div = onnx.helper.make_model(
        onnx.helper.make_graph(
            [onnx.helper.make_node("Div", ["x", "y"], ["z"])], "div",
            [onnx.helper.make_tensor_value_info(n, onnx.TensorProto.INT32, []) for n in "xy"],
            [onnx.helper.make_tensor_value_info("z", onnx.TensorProto.INT32, [])],
        ),
        opset_imports=[onnx.helper.make_opsetid("", rg.OPSET)],
    )
    with pytest.raises(FloatingPointError):
        rg.reference(div, [x, zero])
    d = rg.Draft(np.random.default_rng(0))
    clipped = rg.Value("x", (), "int32", -50, 50)
    for _ in range(50):
        rg.make_clip(d, clipped)
    for value in d.pool:  # every Clip bound is what the int32 constant holds
        assert value.lo == int(value.lo) and value.hi == int(value.hi)


def test_pipeline_option_reaches_the_compiler_and_the_report(tmp_path):
    """`--pipeline` compiles every graph with it (a bad one is each graph's compile error) and
    the JSON report records it."""
    records, _ = rg.run(2, seed=SEED, jobs=1, do_shrink=False, pipeline="no-such-pass")
    assert [r["status"] for r in records] == ["compile_error"] * 2
    assert all("invalid pass pipeline 'no-such-pass'" in r["reason"] for r in records)
    pipeline = f"fold-constants,onnx-to-uop,plan-arenas,verify-arena-plan,{PRINT_PIPELINE}"
    report = tmp_path / "report.json"
    argv = ["--count", "2", "--seed", str(SEED), "--jobs", "1", "--quiet", "--pipeline", pipeline,
            "--output-json", str(report)]
    assert rg.main(argv) == 0
    import json

    saved = json.loads(report.read_text())
    assert saved["pipeline"] == pipeline and [r["status"] for r in saved["records"]] == ["pass"] * 2


@pytest.mark.parametrize("argv, target, pipeline", [
    ([], "host", None),
    (["--target", "cortex-m4"], "cortex-m4", None),
    (["--target", "riscv32"], "riscv32", None),
    (["--target", "cortex-m4", "--pipeline", "onnx-to-uop,plan-arenas"], "cortex-m4", "onnx-to-uop,plan-arenas"),
])
def test_target_picks_the_default_pipeline_and_is_recorded(tmp_path, monkeypatch, capsys, argv, target, pipeline):
    """The target's default pipeline (`pipeline_for(target)`), unless --pipeline overrides it;
    the summary and the JSON report name both."""
    import inspect
    import json

    from zant.pipelines import pipeline_for

    expected = pipeline or pipeline_for(target)
    seen, signature = {}, inspect.signature(rg.run)
    monkeypatch.setattr(rg, "run", lambda *args, **kwargs: seen.setdefault("call", (args, kwargs)) and ([], 0.0))
    report = tmp_path / "report.json"
    assert rg.main(["--count", "0", "--output-json", str(report), *argv]) == 0
    saved = json.loads(report.read_text())
    assert (saved["target"], saved["pipeline"]) == (target, expected)
    args, kwargs = seen["call"]
    assert signature.bind(*args, **kwargs).arguments["pipeline"] == expected
    assert f"target {target}, pipeline {expected})" in capsys.readouterr().out


def test_mcu_pipeline_graphs_compile_and_match(tmp_path, capsys, monkeypatch):
    """`--target cortex-m4`: graphs compiled with the scalar MCU pipeline (no vector code in the
    Zig it generates), built for the host, match the reference."""
    import json

    from zant.pipelines import MCU_PIPELINE

    compiled = []
    original = rg.batch.compile_zig

    def spy(model, name, out_dir, *, pipeline=None, **options):
        compiled.append(pipeline)
        result = original(model, name, out_dir, pipeline=pipeline, **options)
        assert "@Vector" not in (out_dir / f"{name}.zig").read_text()
        return result

    monkeypatch.setattr(rg.batch, "compile_zig", spy)
    report = tmp_path / "report.json"
    status = rg.main(["--count", "40", "--seed", str(SEED + 7), "--jobs", "1", "--batch-size", "40", "--quiet",
                      "--no-shrink", "--target", "cortex-m4", "--output-json", str(report)])
    records = json.loads(report.read_text())["records"]
    failures = [f"graph {r['index']}: {r['status']}: {r['reason']}" for r in records if r["status"] != "pass"]
    assert status == 0 and len(records) == 40 and not failures, "\n".join(failures)
    assert compiled and set(compiled) == {MCU_PIPELINE}
    assert "40 graphs (seed" in capsys.readouterr().out


def test_gelu_f64_far_tail_is_exact_where_the_reference_is_not():
    """Found by the fused long run (seed 3, graph 7583), shrunk to Gelu → Sin → Abs → Add → Sqrt
    on f64: at x = -5.46875 ONNX's reference evaluator (Gelu's function body) gives
    sqrt(|sin(gelu(x))|) = 4.04e-4, where gelu(x) = x/2 · erfc(-x/√2) = -1.2393e-7 exactly and
    the output is 3.52e-4. Ours is within 2e-9 of it (1 + erf(x/√2) cancels to 4.5e-8, so the
    f64 erf's last bits become relative error there); the finding is the reference's."""
    import math

    from e2e import compile_and_run

    nodes = [onnx.helper.make_node("Gelu", ["x"], ["g"]), onnx.helper.make_node("Sin", ["g"], ["s"]),
             onnx.helper.make_node("Abs", ["s"], ["a"]), onnx.helper.make_node("Sqrt", ["a"], ["y"])]
    f64 = onnx.TensorProto.DOUBLE
    model = onnx.helper.make_model(
        onnx.helper.make_graph(nodes, "gelu_tail", [onnx.helper.make_tensor_value_info("x", f64, [2])],
                               [onnx.helper.make_tensor_value_info("y", f64, [2])]),
        opset_imports=[onnx.helper.make_opsetid("", 21)],
    )
    x = np.array([-0.03125, -5.46875])
    exact = [math.sqrt(abs(math.sin(v / 2 * math.erfc(-v / math.sqrt(2))))) for v in x]
    (ours,) = compile_and_run(model, {"x": x})
    np.testing.assert_allclose(ours, exact, rtol=1e-8)
    assert abs(ours[1] - 4.0371e-4) > 5e-5  # far from what the reference says


def test_group_norm_f64_statistics_are_float64_where_the_reference_stashes_float32():
    """Found by the MCU-pipeline run (seed 13, graph 1459), shrunk to one GroupNormalization on
    f64 (3 values per group): with the default stash_type=1 the reference's function body casts
    X to float32 and takes the variance as E[x²] - E[x]², 4.7e-6 from the exact result (float64
    is held to 2.4e-7 there). Ours computes the statistics in float64 and is within 1e-11 of it,
    as the reference is once stash_type=11 asks for float64; the generator now asks for it."""
    from e2e import compile_and_run
    from zant.pipelines import MCU_PIPELINE

    f64 = onnx.TensorProto.DOUBLE
    x = np.array([2.25, -0.125, -2.375, -2.25, -3.625, 3.0, -1.75, -0.25, -1.0,
                  -3.375, 0.25, -1.0, 0.75, -2.875, 0.5, -1.125, -1.5, -1.25]).reshape(3, 2, 3)
    scale, bias = np.array([-0.5, -1.25]), np.array([-1.0, 0.0])

    def group_norm(**stash):
        node = onnx.helper.make_node("GroupNormalization", ["x", "scale", "bias"], ["y"], num_groups=2, **stash)
        graph = onnx.helper.make_graph(
            [node], "group_norm", [onnx.helper.make_tensor_value_info("x", f64, x.shape)],
            [onnx.helper.make_tensor_value_info("y", f64, x.shape)],
            initializer=[onnx.numpy_helper.from_array(scale, "scale"), onnx.numpy_helper.from_array(bias, "bias")],
        )
        return onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", rg.OPSET)])

    epsilon = float(np.float32(1e-5))  # the attribute's default, a float32
    exact = (x - x.mean(2, keepdims=True)) / np.sqrt(x.var(2, keepdims=True) + epsilon) * scale[:, None] + bias[:, None]
    (ours,) = compile_and_run(group_norm(), {"x": x}, pipeline=MCU_PIPELINE)
    np.testing.assert_allclose(ours, exact, rtol=0, atol=1e-11)
    (stashed,) = rg.reference(group_norm(), [x])
    assert np.abs(stashed - exact).max() > 1e-6
    (asked,) = rg.reference(group_norm(stash_type=f64), [x])
    np.testing.assert_allclose(asked, exact, rtol=0, atol=1e-13)

    d = rg.Draft(np.random.default_rng(0))
    for dtype in ("float64", "float32"):
        rg.make_channel_norm("GroupNormalization")(d, rg.Value("x", (3, 2, 3), dtype, -4, 4))
    stash = [{a.name: a.i for a in n.attribute}.get("stash_type") for n in d.nodes]
    assert stash == [f64, None]


def test_internal_and_zig_errors_are_findings_of_their_own(tmp_path, monkeypatch, sample):
    """A graph the compiler crashes on is an `internal_error`, one whose generated Zig does not
    compile a `zig_error`, one it refuses with a `ZantError` a `compile_error`: three findings,
    counted apart (the summary names each), the other graphs of the batch unharmed."""
    from dataclasses import replace

    from zant.errors import ZantError
    from zant.tools import batch

    compile_zig = batch.compile_zig

    def broken_compiler(model, name, out_dir, **options):
        if name == "c0000":
            raise KeyError("no such value")
        if name == "c0002":
            raise ZantError("cannot infer a static shape")
        compiled = compile_zig(model, name, out_dir, **options)
        if name == "c0001":
            source = out_dir / f"{name}.zig"
            source.write_text(source.read_text() + "\nconst broken: u8 = no_such_value;\ncomptime { _ = broken; }\n")
        return compiled

    monkeypatch.setattr(batch, "compile_zig", broken_compiler)
    graphs = [replace(g, index=i) for i, g in enumerate(sample[:4])]
    records = rg.run_graphs(graphs, tmp_path)
    assert [records[i]["status"] for i in range(4)] == ["internal_error", "zig_error", "compile_error", "pass"]
    assert records[0]["reason"] == "internal error: KeyError: 'no such value'"
    assert records[1]["reason"].startswith("Zig compile error: c0001.zig:")
    assert "use of undeclared identifier 'no_such_value'" in records[1]["reason"]
    assert records[2]["reason"] == "compile error: cannot infer a static shape"
    assert {"internal_error", "zig_error", "compile_error"} <= set(rg.FINDINGS)


def _drawn(graphs) -> dict[str, dict[str, set[str]]]:
    summary = rg.coverage_summary([{"coverage": rg.coverage(g)} for g in graphs])
    return {op: {name: set(values) for name, values in names.items()} for op, names in summary.items()}


def test_generator_draws_every_enum_value():
    """Issue 32's bugs sat in attribute values the generator never drew: every value of every
    enum attribute of Resize, the pools and ConvTranspose, extents of 1, fractional scales,
    constant rows and tiny epsilons now come up in a few hundred graphs."""
    drawn = _drawn(rg.generate(SEED, i) for i in range(600))
    resize = drawn["Resize"]
    assert resize["coordinate_transformation_mode"] == set(rg.COORDINATE_MODES)
    assert resize["mode"] == {"nearest", "linear", "cubic"} and resize["nearest_mode"] == set(rg.NEAREST_MODES)
    assert resize["keep_aspect_ratio_policy"] == {"stretch", "not_larger", "not_smaller"}
    assert resize["exclude_outside"] == {"0", "1"} and resize["input"] == {"scales", "sizes"}
    assert resize["extent 1"] == {"True", "False"} and resize["scale"] == {"whole", "fractional"}
    for pool in ("MaxPool", "AveragePool"):
        assert drawn[pool]["auto_pad"] == {"NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"}
        assert drawn[pool]["ceil_mode"] == {"0", "1"}
    assert "True" in drawn["MaxPool"]["ceil window dropped"] | drawn["AveragePool"]["ceil window dropped"]
    assert drawn["AveragePool"]["count_include_pad"] == {"0", "1"}
    assert drawn["ConvTranspose"]["auto_pad"] == {"NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"}
    assert drawn["ConvTranspose"]["output_padding"] == {"zero", "nonzero"}
    assert drawn["LayerNormalization"]["epsilon"] == {f"{e:g}" for e in rg.EPSILONS}
    assert drawn["LayerNormalization"]["groups"] == {"constant", "varying"}


def test_reference_runs_resize_through_onnxruntime():
    """align_corners with 6 x 0.8 = 4.8: onnx.reference divides by 4.8 - 1, the definition and
    onnxruntime by 4 - 1; the generator's reference is onnxruntime's."""
    pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper, numpy_helper
    from onnx.reference import ReferenceEvaluator

    node = helper.make_node("Resize", ["x", "", "s"], ["y"], mode="linear", coordinate_transformation_mode="align_corners")
    graph = helper.make_graph([node], "r", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 1, 6])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 1, 4])],
                              initializer=[numpy_helper.from_array(np.array([1, 1, 1, 0.8], np.float32), "s")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", rg.OPSET)])
    x = np.arange(6, dtype=np.float32).reshape(1, 1, 1, 6)
    (y,) = rg.reference(model, [x])
    np.testing.assert_allclose(y.reshape(-1), [0, 5 / 3, 10 / 3, 5], rtol=1e-6)
    (plain,) = ReferenceEvaluator(model).run(None, {"x": x})
    assert not np.allclose(plain, y)


def test_coverage_is_printed_and_in_the_json_report(tmp_path, monkeypatch, capsys):
    import json

    records = [{"index": 0, "status": "pass", "coverage": [["Resize", "mode", "cubic"], ["Resize", "mode", "nearest"]]},
               {"index": 1, "status": "pass", "coverage": [["Resize", "mode", "cubic"], ["MaxPool", "ceil_mode", "1"]]}]
    monkeypatch.setattr(rg, "run", lambda *args, **kwargs: (records, 0.0))
    report = tmp_path / "report.json"
    assert rg.main(["--count", "2", "--output-json", str(report)]) == 0
    out = capsys.readouterr().out
    assert "attribute coverage" in out and "Resize: mode cubic 2, nearest 1" in out and "MaxPool: ceil_mode 1 1" in out
    assert json.loads(report.read_text())["attribute_coverage"] == {"MaxPool": {"ceil_mode": {"1": 1}},
                                                                   "Resize": {"mode": {"cubic": 2, "nearest": 1}}}
