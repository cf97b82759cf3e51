"""`zant profile`: per-node instruction counts of a firmware image under QEMU (tools/profile.py),
and the provenance it rests on: each kernel of the generated Zig names its ONNX nodes."""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from zant.backend.boards import board_for
from zant.backend.firmware import measure_cost, qemu_missing
from zant.driver import CompileOptions, compile_model
from zant.errors import ZantError
from zant.ir.locations import fuse_locations, node_names
from zant.tools.profile import format_profile, profile_model, profile_svg

ROOT = Path(__file__).resolve().parents[1]
DIGITS = ROOT / "examples" / "digits" / "digits_cnn.onnx"
sys.path.insert(0, str(ROOT / "bench"))

from models import QUANTIZED  # noqa: E402


def require_qemu(target: str) -> None:
    missing = qemu_missing(board_for(target, None))
    if missing:
        pytest.skip(missing)


def kws_int8(folder: Path) -> Path:
    pytest.importorskip("onnxruntime")  # bench/models.py quantizes with it
    path = folder / "kws_int8.onnx"
    onnx.save(QUANTIZED["kws_int8"](), path)
    return path


@pytest.mark.parametrize("model", ["digits", "kws_int8"])
def test_profile_rows_add_up_to_the_image_count(tmp_path, model):
    require_qemu("cortex-m4")
    path = DIGITS if model == "digits" else kws_int8(tmp_path)
    build = tmp_path / "build"
    profile = profile_model(str(path), "cortex-m4", out_dir=build)

    # exactly one inference of the profiled image, as measure_cost measures it
    cost = measure_cost(board_for("cortex-m4", None), build / "model.elf")
    assert (profile.total, profile.total_cycles) == (cost.instructions, cost.cycles)
    assert profile.total_cycles > profile.total  # no Cortex-M4 instruction takes less than a cycle
    assert sum(r.instructions for r in profile.rows()) == profile.total
    # cycles add up too, but for the rounding of library code's cycles shared out among kernels
    assert abs(sum(r.cycles for r in profile.rows()) - profile.total_cycles) <= len(profile.rows())
    assert sum(r.instructions for r in profile.kernels) + sum(r.instructions for r in profile.outside) == profile.total
    # the kernels do nearly all the work; the entry point's own code is a few instructions
    assert sum(r.instructions for r in profile.nodes) > 0.99 * profile.total
    # every Conv node has a row of its own work
    graph = onnx.load(str(path)).graph
    convs = [n.name for n in graph.node if n.op_type == "Conv"]
    assert convs
    for conv in convs:
        rows = [r for r in profile.nodes if conv in r.label.split(", ")]
        assert rows and sum(r.instructions for r in rows) > 0, conv
    assert any("Conv" in r.op_types for r in profile.nodes)
    # the image zant compile --firmware builds runs the same kernels, perhaps inlined
    assert abs(profile.inlined_total - profile.total) < 0.05 * profile.total

    text = format_profile(profile)
    assert f"{profile.total:,} instructions, {profile.total_cycles:,} cycles per inference" in text
    for conv in convs:
        assert conv in text
    svg = ElementTree.fromstring(profile_svg(profile))
    bars = svg.findall("{http://www.w3.org/2000/svg}rect")
    assert len(bars) == len(profile.nodes) + len(profile.outside)


def test_profile_needs_an_mcu_target():
    with pytest.raises(ZantError, match="give an MCU --target"):
        profile_model(str(DIGITS), "host")


def test_each_kernel_names_its_nodes(tmp_path):
    result = compile_model(DIGITS, tmp_path, CompileOptions(name="digits", target="cortex-m4", build=False))
    kernels = result.kernels
    source = (tmp_path / "digits.zig").read_text(encoding="utf-8")
    assert all(f"// nodes: {json.dumps(nodes)}\nfn {kernel}(" in source for kernel, nodes in kernels.items())
    groups = list(kernels.values())
    # conv and relu fuse (fuse-loops), the pools and the last Gemm stay apart; the first conv's
    # padded input copy and its register-tiled parts are kernels of conv1 alone
    fused = [["conv1", "relu1"], ["pool1"], ["conv2", "relu2"], ["pool2"], ["fc1", "relu3"], ["fc2"], ["softmax"]]
    assert all(group in groups for group in fused)
    assert all(group in fused or group == ["conv1"] for group in groups), groups
    in_order = [name for group in groups for name in group]
    assert sorted(set(in_order), key=in_order.index) == [name for group in fused for name in group]


def test_node_comments_quote_hostile_names(tmp_path):
    name = 'relu "0"\n*/ \\ \x07é'
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name=name), helper.make_node("Exp", ["y"], ["z"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [4])],
    )
    model = tmp_path / "hostile.onnx"
    onnx.save(helper.make_model(graph), model)
    pipeline = "onnx-to-uop,dce,plan-arenas,linearize-geps,outline-kernels"  # no fuse-loops: two kernels
    result = compile_model(model, tmp_path, CompileOptions(name="m", build=False, pipeline=pipeline))
    source = (tmp_path / "m.zig").read_text(encoding="utf-8")
    comments = [line for line in source.splitlines() if line.startswith("// nodes:")]
    assert len(comments) == 2 and all(line.isascii() and line.isprintable() for line in comments)
    # the unnamed node is named after its op type and position
    assert list(result.kernels.values()) == [[name], ["Exp_1"]]
    assert [json.loads(line.removeprefix("// nodes: ")) for line in comments] == [[name], ["Exp_1"]]


def test_zant_profile_command(tmp_path, capsys):
    require_qemu("cortex-m4")
    from zant.tools.cli import main

    svg = tmp_path / "digits.svg"
    assert main(["profile", str(DIGITS), "--target", "cortex-m4", "--svg", str(svg), "-o", str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    cost = measure_cost(board_for("cortex-m4", None), tmp_path / "b" / "model.elf")
    assert f"): {cost.instructions:,} instructions, {cost.cycles:,} cycles per inference" in out
    assert f"({cost.milliseconds:.2f} ms at 25 MHz)" in out
    assert "conv2, relu2" in out and "kernel_relu2_out" in out
    assert ElementTree.parse(svg).getroot().tag == "{http://www.w3.org/2000/svg}svg"


def test_zant_profile_ram_budget_profiles_the_budgeted_plan(tmp_path, capsys):
    """`--ram-budget` profiles the image `zant compile --ram-budget` ships: digits' default plan
    takes 2,560 B of scratch, the budgeted one 2,448 B; a budget no plan meets is one error."""
    require_qemu("cortex-m4")
    from zant.tools.cli import main

    assert main(["profile", str(DIGITS), "--ram-budget", "2500", "-o", str(tmp_path / "b")]) == 0
    assert "cycles per inference" in capsys.readouterr().out
    plan = json.loads((tmp_path / "b" / "model.plan.json").read_text())
    assert plan["float_scratch_bytes"] == 2448
    assert main(["profile", str(DIGITS), "--ram-budget", "2000"]) != 0
    assert "does not fit the RAM budget of 2,000 B" in capsys.readouterr().err


@pytest.mark.parametrize("target", ["host", "cortex-m4", "cortex-m55"])
@pytest.mark.parametrize("model", ["digits", "kws_int8"])
def test_every_pass_keeps_the_node_locations(tmp_path, model, target):
    from xdsl.dialects.builtin import UnknownLoc

    from zant.dialects import uop
    from zant.driver import compile_to_module

    path = DIGITS if model == "digits" else kws_int8(tmp_path)
    module = compile_to_module(path, target).module
    loops = [op for op in module.walk() if isinstance(op, uop.RangeOp)]
    assert loops
    lost = [op.name for loop in loops for op in loop.walk() if isinstance(op.location, UnknownLoc)]
    assert not lost, lost[:10]
    names = {n.name for n in onnx.load(str(path)).graph.node}
    assert {n for loop in loops for n in node_names(loop.location)} <= names


def test_fused_locations_flatten_and_drop_repeats():
    from xdsl.dialects.builtin import NameLoc, NoneAttr, StringAttr, UnknownLoc

    def loc(name: str) -> NameLoc:
        return NameLoc(StringAttr(name), NoneAttr())

    ab = fuse_locations(loc("a"), UnknownLoc(), loc("b"))
    assert node_names(ab) == ["a", "b"]
    assert node_names(fuse_locations(ab, loc("b"), loc("c"))) == ["a", "b", "c"]
    assert fuse_locations(UnknownLoc(), loc("a")) == loc("a")
    assert isinstance(fuse_locations(UnknownLoc()), UnknownLoc)


def test_function_ranges_merge_aliases_and_clip_overlaps():
    from zant.backend.elf import Symbol
    from zant.tools.profile import _ranges

    symbols = [
        Symbol("__aeabi_memcpy", 0x100, 0x20), Symbol("memcpy", 0x100, 0x20),
        Symbol("model.kernel_a", 0x120, 0x40), Symbol("inner", 0x150, 0x30), Symbol("model_predict", 0x200, 8),
    ]
    ranges, names = _ranges(symbols)
    assert ranges == [(0x100, 0x120), (0x120, 0x160), (0x160, 0x180), (0x200, 0x208)]
    assert names == [["__aeabi_memcpy", "memcpy"], ["model.kernel_a"], ["inner"], ["model_predict"]]
