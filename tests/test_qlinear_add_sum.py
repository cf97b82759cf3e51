"""QLinearAdd's exact form in int32 (`quant.narrow_sum_multipliers`): the narrowed sum is the
int64 one, floored the same way, for every pair of int8 inputs, and within int32 where taken."""

from __future__ import annotations

import numpy as np
import pytest

from zant.passes.onnx_to_uop.quant import common_shift_multipliers, narrow_sum_multipliers


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
