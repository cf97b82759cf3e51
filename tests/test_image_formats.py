"""`--image-formats`: the compressed formats an ImageDecoder node decodes, chosen from the command
line (and `zant.compile(image_formats=...)`) instead of by editing the pipeline: the lowering's
`image-formats` option on the default pipeline, the other decoders' code left out, a name that is
not a format refused by the parser, and refused beside a --pipeline (which says it itself).
"""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from tests.test_cli import run_zant
from zant.driver import CompileOptions, options_pipeline, parse_pipeline
from zant.errors import ZantError
from zant.passes.onnx_to_uop.image import DECODERS
from zant.pipelines import pipeline_for
from zant.tools.cli import IMAGE_FORMATS


@pytest.fixture
def decoder_model(tmp_path) -> Path:
    node = helper.make_node("ImageDecoder", ["data"], ["rgb"], pixel_format="RGB")
    graph = helper.make_graph(
        [node], "decode", [helper.make_tensor_value_info("data", TensorProto.UINT8, [256])],
        [helper.make_tensor_value_info("rgb", TensorProto.UINT8, [4, 4, 3])],
    )
    path = tmp_path / "decode.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)]), path)
    return path


def test_the_cli_names_the_formats_the_lowering_decodes():
    assert IMAGE_FORMATS == tuple(DECODERS)


@pytest.mark.parametrize("target", ["host", "cortex-m4"])
def test_the_formats_are_the_lowering_option_of_the_default_pipeline(target):
    options = CompileOptions(target=target, image_formats=("jpeg", "png"))
    pipeline = options_pipeline(options, None)
    assert pipeline == pipeline_for(target).replace("onnx-to-uop,", "onnx-to-uop{image-formats=jpeg,png},", 1)
    lowering = next(p for p in parse_pipeline(pipeline) if p.name == "onnx-to-uop")
    assert lowering.image_formats == ("jpeg", "png")


def test_the_formats_beside_the_boards_weight_cache_option():
    pipeline = pipeline_for("cortex-m4", weight_cache=256, image_formats=("webp",))
    lowering = next(p for p in parse_pipeline(pipeline) if p.name == "onnx-to-uop")
    assert (lowering.weight_cache_bytes, lowering.image_formats) == (256, ("webp",))


def test_compile_leaves_the_other_decoders_out(tmp_path, decoder_model):
    result = run_zant("compile", decoder_model, "-o", tmp_path / "out", "--no-build", "--image-formats", "jpeg,png")
    assert result.returncode == 0, result.stderr
    zig = (tmp_path / "out" / "model.zig").read_text()
    assert "zant_jpeg_decode" in zig and "zant_png_decode" in zig
    assert "zant_webp_decode" not in zig and "zant_jp2_decode" not in zig and "zant_tiff_decode" not in zig
    every = run_zant("compile", decoder_model, "-o", tmp_path / "all", "--no-build")
    assert every.returncode == 0 and "zant_webp_decode" in (tmp_path / "all" / "model.zig").read_text()


def test_a_name_that_is_not_a_format_is_refused_by_the_parser(tmp_path, decoder_model):
    result = run_zant("compile", decoder_model, "-o", tmp_path / "out", "--image-formats", "jpeg,gif")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "--image-formats: names a comma-separated list of jpeg, png, tiff, jp2, webp; got 'jpeg,gif'" in result.stderr
    assert not (tmp_path / "out").exists()


def test_refused_beside_a_pipeline():
    options = CompileOptions(image_formats=("webp",), pipeline="onnx-to-uop,plan-arenas")
    with pytest.raises(ZantError, match=r"--image-formats .* with --pipeline, give its onnx-to-uop the option"):
        options_pipeline(options, None)
