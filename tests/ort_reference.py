"""onnxruntime as the reference where ONNX's reference evaluator ignores attributes (recurrent
activations, clip, sequence_lens) or refuses them (Scan directions)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from e2e import compile_and_run


def check_with_onnxruntime(model: onnx.ModelProto, feeds: dict[str, np.ndarray], rtol=1e-4, atol=1e-5) -> None:
    ort = pytest.importorskip("onnxruntime")
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = session.run(None, feeds)
    got = compile_and_run(model, feeds)
    for index, (g, w) in enumerate(zip(got, want, strict=True)):
        assert g.shape == w.shape, f"output {index}: shape {g.shape} != {w.shape}"
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=f"output {index}")
