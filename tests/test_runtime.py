"""`zant.runtime.reference_outputs`: the reference `zant run` prints beside the compiled model."""

import numpy as np
import onnx
from onnx import helper, numpy_helper

from zant.runtime import reference_outputs


def test_opset13_batchnorm_reference_uses_the_running_statistics(tmp_path):
    # onnx's evaluator misreads BatchNormalization-9..13 as training mode (batch statistics);
    # an opset-13 model exported by PyTorch has one after every conv.
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 4, 3, 2)).astype(np.float32)
    scale, bias = np.float32([1, 2, 3, 4]), np.float32([0, 1, 0, 1])
    mean, var = np.float32([0.1, 0.2, 0.3, 0.4]), np.float32([1, 2, 0.5, 0.25])
    node = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], epsilon=1e-3)
    constants = [numpy_helper.from_array(a, n) for a, n in ((scale, "s"), (bias, "b"), (mean, "m"), (var, "v"))]
    graph = helper.make_graph(
        [node], "bn", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, x.shape)], constants,
    )
    path = tmp_path / "bn13.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)

    (got,) = reference_outputs(path, {"x": x})

    c = (slice(None), None, None)
    want = (x - mean[c]) / np.sqrt(var[c] + 1e-3) * scale[c] + bias[c]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
