"""`zant plan` and `zant report` plan the module `zant compile` ships: under `--ram-budget` or a
board's RAM that is `fit_ram`'s choice (docs/ram-budget.md), not the default pipeline's plan.
Nothing is built here."""

from __future__ import annotations

import json

import onnx

from tests.test_cli import run_zant
from tests.test_ram_budget import kws_shaped_int8
from zant.driver import CompileOptions, compile_model
from zant.plan_report import plan_model


def _scratch(plan: dict) -> int:
    return {a["role"]: a["size"] for a in plan["arenas"]}["scratch"]


def test_zant_plan_shows_the_budgeted_plan_compile_ships(tmp_path):
    path = tmp_path / "kws_shaped.onnx"
    onnx.save(kws_shaped_int8(), path)
    shipped = compile_model(path, tmp_path / "fit", CompileOptions(target="cortex-m4", build=False, ram_budget=1_200))
    free = plan_model(str(path), target="cortex-m4")
    budgeted = plan_model(str(path), target="cortex-m4", options=CompileOptions(ram_budget=1_200))
    assert _scratch(budgeted) == _scratch(shipped.plan) <= 1_200 < _scratch(free)
    assert budgeted["schedules"] == shipped.plan["schedules"]

    run = run_zant("plan", path, "--target", "cortex-m4", "--ram-budget", "1200", "--json")
    assert run.returncode == 0, run.stderr
    assert _scratch(json.loads(run.stdout)) == _scratch(shipped.plan)
    # A budget below every plan is the compile's error, naming the smallest scratch reached.
    short = run_zant("plan", path, "--target", "cortex-m4", "--ram-budget", "100")
    assert short.returncode == 1
    assert short.stderr.startswith("zant: error: scratch arena ") and "RAM budget of 100 B" in short.stderr


def test_zant_report_shows_the_budgeted_plan(tmp_path):
    from zant.tools.report import build_report

    path = tmp_path / "kws_shaped.onnx"
    onnx.save(kws_shaped_int8(), path)
    report = build_report(path, "host", ram_budget=1_200)
    shipped = compile_model(path, tmp_path / "fit", CompileOptions(build=False, ram_budget=1_200))
    assert _scratch(report.plan) == _scratch(shipped.plan) <= 1_200
    assert report.plan["schedules"] == shipped.plan["schedules"]
    assert "--ram-budget BYTES" in run_zant("report", "--help").stdout


def test_a_budgeted_mcu_model_predicts_on_the_host(tmp_path):
    """`Model.predict` of a Cortex-M4 model compiled under a RAM budget runs the host build of
    its pipeline (it refused the budget before: the host rebuild names its pipeline, so no
    schedule could meet it) and gives the unbudgeted model's outputs."""
    import numpy as np

    import zant

    path = tmp_path / "kws_shaped.onnx"
    onnx.save(kws_shaped_int8(), path)
    budgeted = zant.compile(path, target="cortex-m4", firmware=False, ram_budget=1_200)
    free = zant.compile(path, target="cortex-m4", firmware=False)
    assert _scratch(budgeted.plan) <= 1_200 < _scratch(free.plan)
    name, shape = budgeted.inputs[0].name, budgeted.inputs[0].shape
    x = np.random.default_rng(0).integers(-128, 128, shape).astype(np.int8)
    got, want = budgeted.predict({name: x}), free.predict({name: x})
    assert all(np.array_equal(g, w) for g, w in zip(got.values(), want.values(), strict=True))
