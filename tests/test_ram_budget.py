"""`zant compile --ram-budget BYTES` (docs/ram-budget.md): the scratch arena must fit the budget,
else one `ZantError` names the smallest scratch arena reached and the bytes over; a firmware
board's RAM says the same. Without a budget the output is today's, byte for byte. These tests
build nothing (`--no-build`), so they stay fast.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import zant
from zant.backend.boards import BOARDS
from zant.backend.firmware import MIN_STACK
from zant.backend.limits import SCHEDULES, check_board_memory, check_ram_budget
from zant.driver import CompileOptions, compile_model
from zant.errors import ZantError

ROOT = Path(__file__).resolve().parents[1]
DIGITS = ROOT / "examples" / "digits" / "digits_cnn.onnx"


def plan(scratch: int, bound: int, outputs=(), strategy: str = "best") -> dict:
    """A plan JSON with these scratch figures (the fields the checks read)."""
    return {
        "arenas": [
            {"role": "scratch", "size": scratch},
            {"role": "constant", "size": 0},
            {"role": "persistent", "size": 0},
        ],
        "tensors": [{"name": f"o{k}", "role": "output", "size": s} for k, s in enumerate(outputs)],
        "aligned_lower_bound_bytes": bound,
        "lower_bound_bytes": bound,
        "strategy": strategy,
    }


def test_budget_miss_names_the_smallest_scratch_and_the_excess():
    check_ram_budget(plan(16_128, 16_128), None)
    check_ram_budget(plan(16_128, 16_128), 16_128)  # exactly the budget fits
    with pytest.raises(ZantError) as error:
        check_ram_budget(plan(16_128, 16_000), 12_000)
    assert str(error.value) == (
        f"scratch arena 16,128 B (the smallest Zant reaches for this model: {SCHEDULES}; lower bound "
        "16,000 B) does not fit the RAM budget of 12,000 B: 4,128 B over"
    )


def test_a_hand_planned_miss_does_not_claim_the_smallest():
    with pytest.raises(ZantError) as error:
        check_ram_budget(plan(30_000, 16_000, strategy="naive"), 20_000)
    assert str(error.value) == (
        "scratch arena 30,000 B (plan-arenas strategy naive; 'best' places this schedule in the fewest "
        "bytes, lower bound 16,000 B) does not fit the RAM budget of 20,000 B: 10,000 B over"
    )


def test_board_ram_miss_names_the_smallest_scratch():
    # The micro:bit case of issue 28: KWS int8's 16,000 B scratch, 16 B of outputs, the stack.
    with pytest.raises(ZantError) as error:
        check_board_memory(plan(16_000, 16_000, outputs=[12]), BOARDS["microbit"], MIN_STACK)
    total = 16_000 + 16 + MIN_STACK
    assert str(error.value) == (
        f"scratch arena 16,000 B (the smallest Zant reaches for this model: {SCHEDULES}; lower bound 16,000 B) "
        f"+ outputs 16 B + stack {MIN_STACK:,} B = {total:,} B do not fit the 16 KB (16,384 B) RAM of "
        f"microbit: {total - 16_384:,} B over"
    )


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def test_compile_meets_or_refuses_the_budget(tmp_path):
    free = compile_model(DIGITS, tmp_path / "free", CompileOptions(name="digits", target="cortex-m4", build=False))
    scratch = {a["role"]: a["size"] for a in free.plan["arenas"]}["scratch"]
    assert scratch > 0
    # A budget the plan meets changes nothing: the same files, byte for byte.
    met = compile_model(
        DIGITS, tmp_path / "met", CompileOptions(name="digits", target="cortex-m4", build=False, ram_budget=scratch)
    )
    assert met.plan == free.plan
    assert _files(tmp_path / "met") == _files(tmp_path / "free")
    with pytest.raises(ZantError) as error:
        compile_model(
            DIGITS, tmp_path / "short",
            CompileOptions(name="digits", target="cortex-m4", build=False, ram_budget=scratch - 1),
        )
    assert str(error.value).startswith(f"scratch arena {scratch:,} B (the smallest Zant reaches for this model: ")
    assert str(error.value).endswith(f") does not fit the RAM budget of {scratch - 1:,} B: 1 B over")
    assert not (tmp_path / "short").exists()
    for bad in (-1, 1.5, True):
        with pytest.raises(ZantError, match="the RAM budget is a number of bytes"):
            compile_model(DIGITS, tmp_path / "bad", CompileOptions(target="cortex-m4", build=False, ram_budget=bad))


def test_api_passes_the_budget_on(tmp_path):
    with pytest.raises(ZantError, match=r"does not fit the RAM budget of 100 B: "):
        zant.compile(DIGITS, target="cortex-m4", build=False, ram_budget=100, output_dir=tmp_path / "api")


def test_cli_option(tmp_path):
    help_text = subprocess.run(
        [sys.executable, "-m", "zant.tools.cli", "compile", "--help"], capture_output=True, text=True, check=True
    ).stdout
    assert "--ram-budget BYTES" in help_text
    run = subprocess.run(
        [sys.executable, "-m", "zant.tools.cli", "compile", str(DIGITS), "-o", str(tmp_path / "o"),
         "--target", "cortex-m4", "--no-build", "--ram-budget", "100"],
        capture_output=True, text=True,
    )
    assert run.returncode == 1
    assert run.stderr.startswith("zant: error: scratch arena ") and "does not fit the RAM budget of 100 B" in run.stderr
    assert "Traceback" not in run.stderr


MLPERF_IC = Path("/work/shared/mlperf_tiny/onnx/ic_int8.onnx")


@pytest.mark.slow
@pytest.mark.skipif(not MLPERF_IC.is_file(), reason="MLPerf Tiny's ic_int8.onnx is not on this machine")
def test_in_place_reuse_changes_the_plan_not_the_outputs(tmp_path):
    """ResNet-8 int8 (its residual Adds written over their skips): the in-place plan is smaller
    than the one without overlap (plan-arenas{in-place=false}) and its outputs are the same bytes
    (host build of the Cortex-M4 pipeline; docs/ram-budget.md also ran both as firmware)."""
    import numpy as np

    from zant.pipelines import pipeline_for

    shape = {"input_1_int8": [1, 32, 32, 3]}
    x = np.random.default_rng(0).integers(-128, 128, size=shape["input_1_int8"], dtype=np.int8)
    off = pipeline_for("cortex-m4").replace("plan-arenas,", "plan-arenas{in-place=false},")
    scratch, outputs = {}, {}
    for label, pipeline in (("in-place", None), ("no-overlap", off)):
        model = zant.compile(
            MLPERF_IC, target="cortex-m4", input_shapes=shape, pipeline=pipeline, firmware=False,
            output_dir=tmp_path / label,
        )
        scratch[label] = {a["role"]: a["size"] for a in model.plan["arenas"]}["scratch"]
        outputs[label] = model.predict(input_1_int8=x)
    assert scratch["in-place"] < scratch["no-overlap"]
    assert outputs["in-place"].keys() == outputs["no-overlap"].keys()
    for name, value in outputs["in-place"].items():
        assert value.tobytes() == outputs["no-overlap"][name].tobytes(), name
