"""verify-arena-plan's check of the vector loads and stores (their lanes, not only the element
their gep addresses) on the bench models, through the default pipelines: the host's (`vectorize`)
and the Cortex-M55's (the Helium forms, checked again by the pipeline's last stage,
`verify-arena-plan{reach-only=true}`) bound every one and prove it inside its buffer, which the
plan JSON's `vector_reach` counts; the Cortex-M4's has none. The check's failures, one lane
past a buffer, are the lit cases `passes/verify-arena-plan-vector*.mlir`."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from zant.driver import CompileOptions, compile_model

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from models import resolve_model  # noqa: E402


def _slow(*cases: tuple[str, str]) -> list:
    return [pytest.param(*case, marks=pytest.mark.slow) for case in cases]


@pytest.mark.parametrize(
    ("target", "model"),
    [
        ("host", "kws"), ("host", "kws_int8"), ("cortex-m55", "kws_int8"), ("cortex-m55", "autoencoder_int8"),
        ("cortex-m4", "kws_int8"),
        *_slow(("host", "mobilenet"), ("host", "resnet8_int8"), ("cortex-m55", "mobilenet_int8"),
               ("cortex-m55", "resnet8_int8"), ("cortex-m55", "kws_int4")),
    ],
)
def test_bench_models_bound_every_vector_access(tmp_path, target, model):
    _, path = resolve_model(model, tmp_path)
    plan = compile_model(path, tmp_path / "out", CompileOptions(name=model, target=target, build=False)).plan
    counted = plan.get("vector_reach")
    if target == "cortex-m4":  # no vector unit: nothing to count
        assert counted is None, counted
        return
    assert counted is not None and counted["checked"] > 0 and counted["unresolved"] == 0, counted
