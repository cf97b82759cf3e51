"""QLinearAdd's exact form in int32 (`quant.narrow_sum_multipliers`, `quant.split_sum_multipliers`):
the narrowed sum, and the sum of the multipliers' split halves, is the int64 one, floored the
same way, for every pair of int8 inputs, and within int32 where taken."""

from __future__ import annotations

import numpy as np
import pytest

from zant.passes.onnx_to_uop.quant import SPLIT_BITS, common_shift_multipliers, narrow_sum_multipliers, split_sum_multipliers


def _sums(multipliers, shift, x, y):
    m_a, m_b = multipliers
    return (x * m_a + y * m_b + ((1 << shift) >> 1)) >> shift


@pytest.mark.parametrize("seed", range(4))
def test_the_narrowed_sum_is_the_wide_one(seed):
    rng = np.random.default_rng(seed)
    x, y = (v.astype(np.int64) for v in np.meshgrid(np.arange(-255, 256), np.arange(-255, 256)))
    taken = 0
    for _ in range(200):
        scales = rng.uniform(0.001, 0.2, 3).astype(np.float32)
        if rng.random() < 0.5:  # powers of two and their small multiples: many trailing zeros
            scales = (2.0 ** rng.integers(-8, -2, 3) * rng.integers(1, 4, 3)).astype(np.float32)
        sign = -1.0 if rng.random() < 0.2 else 1.0  # a Sub: B's scale negated
        ratios = [float(scales[0] / scales[2]), sign * float(scales[1] / scales[2])]
        multipliers, shift = common_shift_multipliers(ratios)
        narrow = narrow_sum_multipliers(multipliers, shift, [255, 255])
        if narrow is None:
            continue
        taken += 1
        (m_a, m_b), s = narrow
        inner = x * m_a + y * m_b + ((1 << s) >> 1)
        assert np.abs(inner).max() < 2**31
        np.testing.assert_array_equal(_sums((m_a, m_b), s, x, y), _sums(multipliers, shift, x, y))
    assert taken > 20


def test_a_sum_past_int32_is_refused():
    # 255 · (2^24 + 1) passes 2^31: nothing to drop (an odd multiplier), no narrowing.
    assert narrow_sum_multipliers([2**24 + 1, 3], 30, [255, 255]) is None
    # All of a power of two's zero bits but the rounding half's.
    assert narrow_sum_multipliers([2**28, 2**27], 29, [255, 255]) == ([2, 1], 2)


@pytest.mark.parametrize("seed", range(4))
def test_the_split_sum_is_the_wide_one(seed):
    """Where the narrowed sum passes int32 (ResNet-8's second and third residual Adds), the
    multipliers split at bit 16: H = x·h_a + y·h_b and L = x·l_a + y·l_b + 2^(s-1) within
    int32, (H + (L >> 16)) >> (s - 16) the int64 sum's value, for every pair of inputs."""
    rng = np.random.default_rng(seed)
    x, y = (v.astype(np.int64) for v in np.meshgrid(np.arange(-255, 256), np.arange(-255, 256)))
    taken = 0
    for _ in range(200):
        scales = rng.uniform(0.001, 0.2, 3).astype(np.float32)
        sign = -1.0 if rng.random() < 0.2 else 1.0  # a Sub: B's scale negated
        ratios = [float(scales[0] / scales[2]), sign * float(scales[1] / scales[2])]
        multipliers, shift = common_shift_multipliers(ratios)
        split = split_sum_multipliers(multipliers, shift, [255, 255])
        if split is None:
            assert shift < SPLIT_BITS or shift > 31
            continue
        taken += 1
        (h_a, h_b), (l_a, l_b) = split
        assert all(0 <= low < 1 << SPLIT_BITS for low in (l_a, l_b))
        upper = x * h_a + y * h_b
        lower = x * l_a + y * l_b + ((1 << shift) >> 1)
        total = upper + (lower >> SPLIT_BITS)
        assert max(np.abs(upper).max(), np.abs(lower).max(), np.abs(total).max()) < 2**31
        np.testing.assert_array_equal(total >> (shift - SPLIT_BITS), _sums(multipliers, shift, x, y))
    assert taken > 20


def test_a_split_needs_the_rounding_half_within_int32():
    assert split_sum_multipliers([3 << 20, 5 << 20], 32, [255, 255]) is None  # 2^31 alone passes int32
    assert split_sum_multipliers([3, 5], 15, [255, 255]) is None  # a shift below the split


def test_split_add_equals_the_wide_sum_on_every_input_pair(tmp_path):
    """A QLinearAdd taking the split form (the scales of the FileCheck's @wide_sum), compiled
    through the Cortex-M4 pipeline (built for the host): every pair of int8 codes gives the
    int64 sum's requantized value."""
    import onnx
    from onnx import TensorProto, helper

    from zant.driver import CompileOptions, compile_model
    from zant.pipelines import pipeline_for
    from zant.runtime import load_compiled

    scales, zero_points = (np.float32(0.05), np.float32(0.09), np.float32(0.07)), (3, -7, -128)
    consts = []
    for name, scale, zp in zip("abc", scales, zero_points):
        consts += [helper.make_tensor(f"{name}_s", TensorProto.FLOAT, [], [float(scale)]), helper.make_tensor(f"{name}_z", TensorProto.INT8, [], [zp])]
    node = helper.make_node("QLinearAdd", ["a", "a_s", "a_z", "b", "b_s", "b_z", "c_s", "c_z"], ["c"], domain="com.microsoft")
    graph = helper.make_graph(
        [node], "split_add",
        [helper.make_tensor_value_info(n, TensorProto.INT8, [256, 256]) for n in "ab"],
        [helper.make_tensor_value_info("c", TensorProto.INT8, [256, 256])], consts,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    path = tmp_path / "split_add.onnx"
    onnx.save(model, path)
    result = compile_model(path, tmp_path / "out", CompileOptions(name="net", optimize="ReleaseSafe", pipeline=pipeline_for("cortex-m4")))
    assert "i64" not in (tmp_path / "out" / "net.zig").read_text().split("fn kernel_", 1)[1]
    codes = np.arange(-128, 128, dtype=np.int8)
    a, b = np.meshgrid(codes, codes)
    got = load_compiled(result)(a, b)[0]
    ratios = [float(scales[0] / scales[2]), float(scales[1] / scales[2])]
    (m_a, m_b), shift = common_shift_multipliers(ratios)
    x, y = a.astype(np.int64) - zero_points[0], b.astype(np.int64) - zero_points[1]
    want = np.clip(_sums((m_a, m_b), shift, x, y) + zero_points[2], -128, 127)
    np.testing.assert_array_equal(got, want)
