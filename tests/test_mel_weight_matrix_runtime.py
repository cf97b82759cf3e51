"""MelWeightMatrix with its inputs read at run time (as ONNX's test_melweightmatrix writes them):
the table is computed when `m_predict` runs, num_mel_bins and dft_length checked against the
declared [dft_length // 2 + 1, num_mel_bins] (host, ReleaseSafe)."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

from tests.test_runtime_parameters import Compiled, _model, _tensor

NAMES = ("num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz", "upper_edge_hertz")


def _inputs(bins: int, dft_length: int, rate: int, low: float, high: float) -> list[np.ndarray]:
    return [np.array(v, np.int32) for v in (bins, dft_length, rate)] + [np.array(v, np.float32) for v in (low, high)]


def test_mel_weight_matrix_of_run_time_inputs(tmp_path):
    node = helper.make_node("MelWeightMatrix", list(NAMES), ["output"])
    types = [TensorProto.INT32] * 3 + [TensorProto.FLOAT] * 2
    model = _model(
        [node],
        [_tensor(name, elem, []) for name, elem in zip(NAMES, types)],
        [_tensor("output", TensorProto.FLOAT, [9, 8])],
    )
    compiled = Compiled(model, tmp_path)
    # ONNX's test case, an odd dft_length of the same row count, other rates and edges.
    for values in ((8, 16, 8192, 0, 4096), (8, 17, 8192, 0, 4096), (8, 16, 16000, 100, 8000), (8, 16, 44100, 300, 3000)):
        compiled.check(*_inputs(*values))
    for values in (
        (7, 16, 8192, 0, 4096),  # another column count
        (8, 18, 8192, 0, 4096),  # 10 rows
        (8, 16, 0, 0, 4096),  # no sample rate
        (8, 16, 8192, 0, 8192),  # edges past the spectrogram's last bin
        (8, 16, 8192, -1000, 4096),  # below -700 Hz: no mel value (NaN)
    ):
        compiled.refuses(*_inputs(*values))
