"""plan-arenas and verify-arena-plan on real models: every strategy, ratio to the lower bound,
hash stability, in-place reuse on an element-wise chain and on a fused residual block (also
after `vectorize`, whose overlapping tails must not be written in place), with numerics checked
end to end."""

from __future__ import annotations


import numpy as np
import onnx
import pytest
from e2e import check_compiled, check_model
from onnx import TensorProto, helper, numpy_helper
from test_fuse_loops import FUSED, UNFUSED, _compile, check_fused
from test_models import make_lenet, make_mlp

from zant.analysis.liveness import Schedule, scratch_lifetimes
from zant.backend.plan import emit_plan_json, main_function, plan_summary
from zant.driver import run_pipeline
from zant.errors import ZantError
from zant.frontend.onnx_importer import import_model
from zant.passes.plan_arenas import lower_bound, make_slots
from zant.pipelines import PRINT_PIPELINE


def make_branches() -> onnx.ModelProto:
    """Two independent branches joined by an Add, with an element-wise chain on each."""
    rng = np.random.default_rng(3)
    w = numpy_helper.from_array(rng.standard_normal((16, 16)).astype(np.float32), "w")
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["m1"]),
        helper.make_node("Relu", ["m1"], ["r1"]),
        helper.make_node("Exp", ["x"], ["e2"]),
        helper.make_node("Neg", ["e2"], ["n2"]),
        helper.make_node("Tanh", ["n2"], ["t2"]),
        helper.make_node("Add", ["r1", "t2"], ["s"]),
        helper.make_node("Sigmoid", ["s"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "branches",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 16])],
        [w],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


MODELS = {"mlp": make_mlp, "lenet": make_lenet, "branches": make_branches}


def planned(tmp_path, maker, strategy: str):
    path = tmp_path / "model.onnx"
    onnx.save(maker(), path)
    module = import_model(str(path))
    run_pipeline(module, f"onnx-to-uop,plan-arenas{{strategy={strategy}}},verify-arena-plan")
    return module


@pytest.mark.parametrize("strategy", ["naive", "greedy", "best"])
@pytest.mark.parametrize("model", sorted(MODELS))
def test_every_strategy_passes_the_checker(tmp_path, model, strategy):
    summary = plan_summary(planned(tmp_path, MODELS[model], strategy))
    assert summary["strategy"] == strategy
    assert summary["aligned_lower_bound_bytes"] <= summary["scratch_bytes"] <= summary["naive_bytes"]
    if strategy == "naive":
        assert summary["scratch_bytes"] == summary["naive_bytes"]
    else:  # every test model reaches its lower bound (all buffers are multiples of 16 bytes)
        assert summary["scratch_bytes"] == summary["aligned_lower_bound_bytes"]
        assert summary["scratch_bytes"] / summary["lower_bound_bytes"] <= 1.00


@pytest.mark.parametrize("model", sorted(MODELS))
def test_hashes_are_stable(tmp_path, model):
    first = emit_plan_json(planned(tmp_path, MODELS[model], "best"), "m")
    second = emit_plan_json(planned(tmp_path, MODELS[model], "best"), "m")
    assert first == second
    module = planned(tmp_path, MODELS[model], "naive")
    run_pipeline(module, "plan-arenas{strategy=best},plan-arenas{strategy=best},verify-arena-plan")
    replanned = emit_plan_json(module, "m")
    assert (replanned["plan_hash"], replanned["tensor_layout_hash"]) == (
        first["plan_hash"], first["tensor_layout_hash"])
    names = {t["name"] for t in first["tensors"] if t["role"] == "scratch"}
    assert {l["name"] for l in first["lifetimes"]} == names
    assert all(l["first_use"] <= l["last_use"] for l in first["lifetimes"])


@pytest.mark.parametrize("model", sorted(MODELS))
def test_the_plan_json_reads_what_plan_arenas_recorded(tmp_path, model):
    # The live steps and lower bounds the header and JSON show are the liveness analysis's on
    # the planned module, recorded by plan-arenas rather than recomputed by the backend.
    module = planned(tmp_path, MODELS[model], "best")
    function = main_function(module)
    schedule = Schedule.of(function)
    lifetimes = scratch_lifetimes(function, schedule)
    plan = emit_plan_json(module, "m")
    assert plan["lifetimes"] == [
        {"name": l.name, "first_use": schedule.step[l.first], "last_use": schedule.step[l.last]}
        for l in lifetimes
    ]
    assert plan["lower_bound_bytes"] == lower_bound(make_slots(lifetimes, schedule, 1, in_place=True))


def test_an_unplanned_module_is_refused(tmp_path):
    path = tmp_path / "model.onnx"
    onnx.save(make_mlp(), path)
    module = import_model(str(path))
    run_pipeline(module, "onnx-to-uop")
    with pytest.raises(ZantError, match="run the plan-arenas pass first"):
        emit_plan_json(module, "m")


def test_in_place_reuse_on_an_element_wise_chain(tmp_path):
    module = planned(tmp_path, make_branches, "best")
    offsets = {t["name"]: t["offset"] for t in emit_plan_json(module, "m")["tensors"]
               if t["role"] == "scratch"}
    # exp → neg → tanh: each result written over its dying input
    assert offsets["e2"] == offsets["n2"] == offsets["t2"]
    assert offsets["m1"] == offsets["r1"]
    check_model(make_branches())


def test_duplicate_constants_are_stored_once(tmp_path):
    value = np.arange(8, dtype=np.float32)
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "a"], ["t"]), helper.make_node("Mul", ["t", "b"], ["y"])],
        "dup",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8])],
        [numpy_helper.from_array(value, "a"), numpy_helper.from_array(value.copy(), "b")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path / "dup.onnx"
    onnx.save(model, path)
    module = import_model(str(path))
    run_pipeline(module, "onnx-to-uop,plan-arenas{link_section=\".rodata.zant\"},verify-arena-plan")
    plan = emit_plan_json(module, "m")
    assert plan["arenas"][1] == {
        "role": "constant", "size": 32, "alignment": 16, "memory": "flash", "source_memory": "flash",
    }
    assert plan["constant_link_section"] == ".rodata.zant"
    check_model(model)


def test_constants_in_a_link_section_build(tmp_path):
    from zant.driver import CompileOptions, compile_model

    onnx.save(make_mlp(), tmp_path / "mlp.onnx")
    pipeline = f'onnx-to-uop,plan-arenas{{link_section=".rodata.zant"}},verify-arena-plan,{PRINT_PIPELINE}'
    result = compile_model(tmp_path / "mlp.onnx", tmp_path / "out", CompileOptions(name="m", pipeline=pipeline))
    assert 'linksection(".rodata.zant")' in result.zig_path.read_text()
    assert result.sizes is not None


def make_residual_block(channels: int = 12) -> onnx.ModelProto:
    """Relu → Conv → Relu → Conv → Add(shortcut) → Relu → GlobalAveragePool: with fusion the last
    Conv nest (an 8- and a 4-channel block, so many stores) computes Add and Relu at its stores,
    reading the shortcut at each output element, and may write its result over the shortcut."""
    rng = np.random.default_rng(8)
    weights = {
        name: numpy_helper.from_array(rng.standard_normal((channels, channels, 3, 3)).astype(np.float32) * 0.2, name)
        for name in ("w1", "w2")
    }
    nodes = [
        helper.make_node("Relu", ["x"], ["s"]),
        helper.make_node("Conv", ["s", "w1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c2", "s"], ["a"]),
        helper.make_node("Relu", ["a"], ["r2"]),
        helper.make_node("GlobalAveragePool", ["r2"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "residual",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, channels, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, channels, 1, 1])],
        list(weights.values()),
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_fused_residual_block_plans_below_the_unfused_lower_bound(tmp_path):
    model = make_residual_block()
    fused = check_fused(model)  # ReleaseSafe, against the reference evaluator
    unfused = _compile(model, tmp_path, UNFUSED, build=False).plan
    scratch = {t["name"]: t["offset"] for t in fused["tensors"] if t["role"] == "scratch"}
    assert scratch["r2"] == scratch["s"]  # the residual output took the shortcut's bytes
    fused_size = next(a["size"] for a in fused["arenas"] if a["role"] == "scratch")
    assert fused_size == fused["lower_bound_bytes"] < unfused["lower_bound_bytes"]
    assert _compile(model, tmp_path, FUSED, build=False).plan["plan_hash"] == fused["plan_hash"]


VECTORIZED = f"fold-constants,onnx-to-uop,vectorize,plan-arenas,verify-arena-plan,{PRINT_PIPELINE}"


def check_planned(model: onnx.ModelProto, pipeline: str) -> dict[str, int]:
    """Compile through `pipeline` in ReleaseSafe, compare with the reference; scratch offsets."""
    result, _ = check_compiled(model, pipeline=pipeline)
    return {t["name"]: t["offset"] for t in result.plan["tensors"] if t["role"] == "scratch"}


def make_vector_chains() -> onnx.ModelProto:
    """Two element-wise chains: 64 elements (whole vectors) and 12 (a vector of 8, then an
    overlapping tail over the last 8)."""
    nodes = [
        helper.make_node("Exp", ["x"], ["e"]),
        helper.make_node("Neg", ["e"], ["n"]),
        helper.make_node("Tanh", ["n"], ["y"]),
        helper.make_node("Exp", ["x2"], ["e2"]),
        helper.make_node("Neg", ["e2"], ["n2"]),
        helper.make_node("Abs", ["n2"], ["y2"]),
    ]
    value = helper.make_tensor_value_info
    graph = helper.make_graph(
        nodes, "chains",
        [value("x", TensorProto.FLOAT, [4, 16]), value("x2", TensorProto.FLOAT, [12])],
        [value("y", TensorProto.FLOAT, [4, 16]), value("y2", TensorProto.FLOAT, [12])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_in_place_reuse_through_vector_loads_and_stores():
    offsets = check_planned(make_vector_chains(), VECTORIZED)
    assert offsets["n"] == offsets["e"]  # vload e, vstore n at the same lanes
    # the tail re-reads e2[4..7] after the vector loop stored n2 there: not in place
    assert offsets["n2"] != offsets["e2"]


def make_conv_bn_clip() -> onnx.ModelProto:
    """Conv → BatchNormalization → Clip(0, 6) → GlobalAveragePool (MobileNet's block, unfolded):
    the batch-norm and clip loops over 8 channels of 16×16 pixels become vector loops."""
    rng = np.random.default_rng(11)
    weights = {
        "w": rng.standard_normal((8, 3, 3, 3)).astype(np.float32) * 0.3,
        "scale": rng.uniform(0.5, 1.5, 8).astype(np.float32),
        "bias": rng.standard_normal(8).astype(np.float32),
        "mean": rng.standard_normal(8).astype(np.float32) * 0.1,
        "var": rng.uniform(0.5, 1.5, 8).astype(np.float32),
        "lo": np.array(0, np.float32),
        "hi": np.array(6, np.float32),
    }
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"], ["bn"]),
        helper.make_node("Clip", ["bn", "lo", "hi"], ["relu6"]),
        helper.make_node("GlobalAveragePool", ["relu6"], ["y"]),
    ]
    value = helper.make_tensor_value_info
    graph = helper.make_graph(
        nodes, "conv_bn_clip",
        [value("x", TensorProto.FLOAT, [1, 3, 16, 16])],
        [value("y", TensorProto.FLOAT, [1, 8, 1, 1])],
        [numpy_helper.from_array(v, k) for k, v in weights.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_vectorized_batch_norm_and_clip_write_in_place():
    offsets = check_planned(make_conv_bn_clip(), VECTORIZED)
    assert offsets["relu6"] == offsets["bn"] == offsets["c"]
