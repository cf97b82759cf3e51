"""What the vector passes (`coalesce-loops`, `split-index-sets`, `vectorize`) need to know about
uop loops: the lane width the lowering shaped the code for."""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.utils.exceptions import PassFailedException

CONV_LANES_ATTR = "uop.conv_lanes"
"""Module attribute `onnx-to-uop{conv-lanes=L}` sets to L: its Convs are register tiles of L-lane
vectors, so the vector passes must use width L too."""


def check_lanes(module: ModuleOp, width: int, pass_name: str) -> None:
    """Refuse a vector width other than the one the Convs were lowered for."""
    lanes = module.attributes.get(CONV_LANES_ATTR)
    if isinstance(lanes, IntegerAttr) and lanes.value.data != width:
        raise PassFailedException(
            f"{pass_name}{{width={width}}} after onnx-to-uop{{conv-lanes={lanes.value.data}}}: the Convs "
            f"were tiled for {lanes.value.data} lanes; give both the same width "
            "(zant.pipelines.pipeline_for builds them from one number)"
        )
