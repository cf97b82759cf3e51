"""Model-local functions (`ModelProto.functions`): imported as `onnx.function` instances called by
`onnx.call` (one instance per calling node's input types and attribute values, bodies converted
from the function's own opset), inlined by `inline-functions`, lowered and interpreted (the uop
interpreter, no Zig build) against the function written in NumPy (ONNX's reference evaluator
does not apply a function's attribute defaults) and onnxruntime; every pass, the inlining too, is
checked against the module before it (the ONNX reference interprets `onnx.call`)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from zant.dialects.onnx import CallOp, FunctionOp
from zant.driver import make_context
from zant.errors import ZantError
from zant.frontend.onnx_importer import import_model_bytes
from zant.interpreter import PassChecker
from zant.passes import pass_class

F = TensorProto.FLOAT
STAGES = ("inline-functions", "fold-constants", "dce", "onnx-to-uop", "fuse-loops", "dce")


def _model(opset: int):
    """custom.ScaleAdd(x, b; alpha, beta=0.25) = custom.Act(x·alpha + b − mean(·, last axis)) + beta,
    Act = Relu; called three times (alpha 2, then 0.5 twice: two instances), beta set once."""
    act = helper.make_function("custom", "Act", ["x"], ["y"], [helper.make_node("Relu", ["x"], ["y"])],
                               [helper.make_opsetid("", opset)])
    alpha = helper.make_node("Constant", [], ["a"], value_float=0.0)
    alpha.attribute[0].ClearField("f")
    alpha.attribute[0].ref_attr_name = "alpha"
    beta = helper.make_node("Constant", [], ["c"], value_float=0.0)
    beta.attribute[0].ClearField("f")
    beta.attribute[0].ref_attr_name = "beta"
    if opset >= 18:
        mean = [helper.make_node("Constant", [], ["ax"], value_ints=[-1]),
                helper.make_node("ReduceMean", ["u", "ax"], ["m"], keepdims=1)]
    else:
        mean = [helper.make_node("ReduceMean", ["u"], ["m"], axes=[-1], keepdims=1)]
    body = [alpha, beta, helper.make_node("Mul", ["x", "a"], ["t"]), helper.make_node("Add", ["t", "b"], ["u"]), *mean,
            helper.make_node("Sub", ["u", "m"], ["v"]), helper.make_node("Act", ["v"], ["w"], domain="custom"),
            helper.make_node("Add", ["w", "c"], ["y"])]
    scale_add = helper.make_function(
        "custom", "ScaleAdd", ["x", "b"], ["y"], body, [helper.make_opsetid("", opset), helper.make_opsetid("custom", 1)],
        attributes=["alpha"], attribute_protos=[helper.make_attribute("beta", 0.25)],
    )
    graph = helper.make_graph(
        [helper.make_node("ScaleAdd", ["x", "b"], ["y1"], domain="custom", alpha=2.0, name="sa1"),
         helper.make_node("ScaleAdd", ["y1", "b"], ["y2"], domain="custom", alpha=0.5, name="sa2"),
         helper.make_node("ScaleAdd", ["y2", "b"], ["y3"], domain="custom", alpha=0.5, beta=-1.0, name="sa3")],
        "g", [helper.make_tensor_value_info("x", F, [2, 4]), helper.make_tensor_value_info("b", F, [4])],
        [helper.make_tensor_value_info("y3", F, [2, 4])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset), helper.make_opsetid("custom", 1)],
                             functions=[act, scale_add])


@pytest.mark.parametrize("opset", [13, 18, 21])
def test_local_functions_import_as_calls_and_compute_as_the_reference(opset):
    model = _model(opset)
    module = import_model_bytes(model.SerializeToString(), ".", {})
    functions = [op for op in module.ops if isinstance(op, FunctionOp)]
    # Act once (same input type everywhere); ScaleAdd per (alpha, beta): (2, 0.25), (0.5, 0.25), (0.5, -1).
    assert sorted(f.sym_name.data for f in functions) == ["custom.Act", "custom.ScaleAdd", "custom.ScaleAdd_1", "custom.ScaleAdd_2"]
    calls = [op for op in module.walk() if isinstance(op, CallOp)]
    assert [c.callee.string_value() for c in calls if c.parent_op().name == "func.func"] == [
        "custom.ScaleAdd", "custom.ScaleAdd_1", "custom.ScaleAdd_2"
    ]
    rng = np.random.default_rng(0)
    feeds = {"x": rng.normal(size=(2, 4)).astype(np.float32), "b": rng.normal(size=4).astype(np.float32)}
    ctx = make_context()
    # The ONNX reference interprets the calls, so the inlining itself is checked too.
    checker = PassChecker(module, inputs=[feeds["x"].reshape(-1), feeds["b"].reshape(-1)])
    for stage in STAGES:
        pass_class(stage)().apply(ctx, module)
        module.verify()
        checker.after(stage)
        if stage == "inline-functions":
            assert not any(isinstance(op, FunctionOp | CallOp) for op in module.walk())
    assert checker.level == "uop"
    def scale_add(x, b, alpha, beta=0.25):
        u = x * np.float32(alpha) + b
        return np.maximum(u - u.mean(axis=-1, keepdims=True), 0) + np.float32(beta)

    want = scale_add(scale_add(scale_add(feeds["x"], feeds["b"], 2.0), feeds["b"], 0.5), feeds["b"], 0.5, -1.0)
    got = checker.outputs()[0]
    np.testing.assert_allclose(got, want.reshape(-1), rtol=1e-5, atol=1e-6)
    onnxruntime = pytest.importorskip("onnxruntime")
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(got, session.run(None, feeds)[0].reshape(-1), rtol=1e-6, atol=1e-6)


def test_an_overloaded_function_is_refused():
    model = _model(21)
    twin = model.functions.add()
    twin.CopyFrom(model.functions[1])
    twin.overload = "other"
    with pytest.raises(ZantError, match="model-local function 'custom.ScaleAdd' is overloaded"):
        import_model_bytes(model.SerializeToString(), ".", {})
