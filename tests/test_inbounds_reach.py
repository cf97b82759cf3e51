"""verify-arena-plan's check of the `inbounds` geps (the addresses the Zig printer leaves
unchecked) on the bench and MLPerf Tiny models, through the default pipelines: their last stage,
`verify-arena-plan{reach-only=true}` (every pipeline's, `pipelines.REACH_STAGE`), bounds every
one, whichever pass marked it (`mark-inbounds`, or the DSP passes that make their own: arm-dsp-dot,
arm-dsp-requant, arm-dsp-depthwise-rows …), and proves it inside its buffer, which the plan
JSON's `inbounds_reach` counts. The check's failures, one element past a graph input, a
constant, a kernel's argument, are the lit cases `passes/verify-arena-plan-inbounds*.mlir`."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from zant.driver import CompileOptions, compile_model
from zant.pipelines import REACH_STAGE, pipeline_for
from zant.targets import RECORDS

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from models import resolve_model  # noqa: E402

MLPERF = ROOT.parent / "shared" / "mlperf_tiny" / "onnx"
MLPERF_SHAPES = {"kws": [1, 49, 10, 1], "vww": [1, 96, 96, 3], "ic": [1, 32, 32, 3], "ad": [1, 640]}


@pytest.mark.parametrize("target", sorted(RECORDS))
def test_every_pipeline_ends_with_the_check(target):
    """No pipeline prints an `inbounds` gep the check has not seen: it is every one's last stage."""
    assert pipeline_for(target).split(",")[-1] == REACH_STAGE


def _slow(*cases: tuple[str, str]) -> list:
    return [pytest.param(*case, marks=pytest.mark.slow) for case in cases]


@pytest.mark.parametrize(
    ("target", "model"),
    [
        ("host", "kws_int8"), ("cortex-m4", "kws_int8"), ("cortex-m55", "kws_int8"), ("cortex-m4", "autoencoder_int8"),
        *_slow(("host", "mobilenet"), ("host", "resnet8_int8"), ("cortex-m4", "mobilenet_int8"),
               ("cortex-m4", "resnet8_int8"), ("cortex-m55", "mobilenet_int8"), ("cortex-m55", "kws_int4"),
               ("cortex-m0plus", "kws_int8"), ("riscv32", "mobilenet"),
               ("host", "mlperf_vww_int8"), ("cortex-m4", "mlperf_kws_int8"), ("cortex-m4", "mlperf_vww_int8"),
               ("cortex-m4", "mlperf_ic_int8"), ("cortex-m4", "mlperf_ad_int8"), ("cortex-m55", "mlperf_vww_int8")),
    ],
)
def test_models_bound_every_inbounds_gep(tmp_path, target, model):
    shapes = None
    if model.startswith("mlperf_"):
        path = MLPERF / f"{model.removeprefix('mlperf_')}.onnx"
        if not path.is_file():
            pytest.skip(f"MLPerf Tiny's {path.name} is not on this machine")
        import onnx

        shapes = {onnx.load(path, load_external_data=False).graph.input[0].name: MLPERF_SHAPES[model.split("_")[1]]}
    else:
        _, path = resolve_model(model, tmp_path)
    options = CompileOptions(name=model, target=target, build=False, input_shapes=shapes)
    counted = compile_model(path, tmp_path / "out", options).plan.get("inbounds_reach")
    assert counted is not None and counted["checked"] > 0 and counted["unresolved"] == 0, counted
