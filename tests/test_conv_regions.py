"""Conv's split of the output box into border regions (checked loads) and one interior region
(plain loads): the regions tile the outputs exactly, the interior never reads padding, and the
numerics of Convs whose windows have every kind of border match the ONNX reference evaluator."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from e2e import check_model, compile_and_run, random_inputs
from test_lowering_numerics_conv2 import Case, _conv_transpose_numpy, batched_model, y
from zant.passes.onnx_to_uop.windows import Window, interior, window_regions


def _window(in_size, kernel, stride, dilation, pad_begin, pad_end) -> Window:
    out = (in_size + pad_begin + pad_end - (kernel - 1) * dilation - 1) // stride + 1
    return Window(in_size, out, kernel, stride, dilation, pad_begin, pad_end)


WINDOWS = [
    w
    for args in itertools.product(range(1, 7), range(1, 4), (1, 2, 3), (1, 2), range(3), range(3))
    if (w := _window(*args)).out_size > 0
]


def test_interior_is_exactly_the_unpadded_outputs():
    for w in WINDOWS:
        lo, hi = interior(w)
        reads_inside = [
            all(0 <= o * w.stride + k * w.dilation - w.pad_begin < w.in_size for k in range(w.kernel))
            for o in range(w.out_size)
        ]
        assert [lo <= o < hi for o in range(w.out_size)] == reads_inside, w


@pytest.mark.parametrize(
    "dims", [(WINDOWS[5],), (WINDOWS[40], WINDOWS[77]), (WINDOWS[3], WINDOWS[100], WINDOWS[200])]
)
def test_regions_tile_the_output_box(dims):
    covered = np.zeros([w.out_size for w in dims], dtype=int)
    for region in window_regions(dims):
        covered[tuple(slice(start, end) for start, end in region.bounds)] += 1
        for w, (start, end) in zip(region.windows, region.bounds):
            # A region's windows span its loops, so their bounds decide its checks soundly.
            assert w.first_out <= start and end <= w.out_size
    assert (covered == 1).all()


def test_unpadded_and_pointwise_windows_have_only_the_interior():
    pointwise = [Window(7, 7, 1), Window(5, 5, 1)]
    strided = [Window(9, 4, 3, stride=2), Window(9, 3, 3, dilation=3)]
    for dims in (pointwise, strided):
        (region,) = window_regions(dims)
        assert region.bounds == tuple((0, w.out_size) for w in dims)


def conv(x, w, out, **attributes) -> Case:
    return Case("Conv", {"x": x, "w": w, "b": [w[0]]}, y(*out), attributes)


# Every kind of border: both sides, one side, wider than the kernel's reach, no interior at all
# (input smaller than the window), strides and dilations, 1-D to 3-D, groups and depthwise.
CONVS = {
    "pad-both": conv([1, 2, 5, 6], [3, 2, 3, 3], [1, 3, 5, 6], pads=[1, 1, 1, 1]),
    "kws-first-layer": conv(
        [1, 1, 13, 10], [4, 1, 10, 4], [1, 4, 7, 5], strides=[2, 2], pads=[4, 1, 5, 1]
    ),
    "same-lower-dilated": conv(
        [1, 2, 7, 5], [2, 2, 3, 2], [1, 2, 7, 5], auto_pad="SAME_LOWER", dilations=[2, 3]
    ),
    "no-interior": conv([1, 1, 2, 3], [2, 1, 3, 4], [1, 2, 3, 3], pads=[2, 2, 1, 1]),
    "wide-pads-stride-3": conv([1, 1, 8, 8], [1, 1, 2, 3], [1, 1, 5, 3], strides=[3, 3], pads=[4, 0, 3, 3]),
    "1d": conv([2, 3, 9], [4, 3, 4], [2, 4, 9], pads=[2, 1]),
    "3d": conv([1, 2, 4, 5, 3], [2, 2, 3, 3, 2], [1, 2, 4, 5, 4], pads=[1, 1, 1, 1, 1, 1]),
    "groups": conv([1, 4, 6, 6], [6, 2, 3, 3], [1, 6, 3, 3], group=2, strides=[2, 2], pads=[1, 1, 1, 1]),
    "depthwise": conv([1, 3, 5, 5], [3, 1, 3, 3], [1, 3, 5, 5], group=3, pads=[1, 1, 1, 1]),
    "pointwise": conv([1, 8, 3, 4], [5, 8, 1, 1], [1, 5, 3, 4]),
    # Interior columns in blocks of 4 (channels that do not block), with a remainder.
    "depthwise-pixel-blocks": conv([1, 3, 5, 11], [3, 1, 3, 3], [1, 3, 5, 11], group=3, pads=[1, 1, 1, 1]),
    "pixel-blocks-strided-dilated": conv(
        [1, 2, 7, 20], [2, 1, 2, 3], [1, 2, 6, 8], group=2, strides=[1, 2], dilations=[1, 2]
    ),
    # Output channels in blocks of 8 and of 4 (within each of 2 groups), one accumulator each.
    "channel-block-8": conv([2, 3, 4, 4], [16, 3, 3, 3], [2, 16, 4, 4], pads=[1, 1, 1, 1]),
    "channel-block-4-groups": conv([1, 4, 5, 5], [8, 2, 1, 1], [1, 8, 5, 5], group=2),
    # (onnx.reference's ConvTranspose mishandles groups: test_lowering_numerics_conv2 has them.)
    "transpose-channel-block-4": Case(
        "ConvTranspose",
        {"x": [1, 4, 3, 3], "w": [4, 4, 3, 3], "b": [4]},
        y(1, 4, 5, 5),
        {"strides": [2, 2], "pads": [1, 1, 1, 1]},
    ),
    "deform-channel-block-4": Case(
        "DeformConv",
        {"x": [1, 2, 4, 4], "w": [4, 2, 2, 2], "offset": [1, 8, 3, 3], "b": [4]},
        y(1, 4, 3, 3),
    ),
}


def test_conv_regions_numerics():
    check_model(batched_model(CONVS), rtol=1e-4, atol=1e-5)


def test_conv_transpose_channel_blocks_within_groups():
    """Two groups of 4 output channels, one block each (checked against the definition: the
    reference evaluator mishandles grouped ConvTranspose)."""
    case = Case("ConvTranspose", {"x": [1, 4, 3], "w": [4, 4, 2], "b": [8]}, y(1, 8, 6), {"group": 2, "strides": [2]})
    model = batched_model({"g": case})
    feeds = random_inputs(model)
    (got,) = compile_and_run(model, feeds)
    expected = _conv_transpose_numpy(feeds["c0_x"], feeds["c0_w"], feeds["c0_b"], 2, 2)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
