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
