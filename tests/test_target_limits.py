"""What a target and a board can hold, checked before any Zig is printed.

A tensor, arena or loop index beyond the target's `isize` (2^31 − 1 on the 32-bit
microcontrollers) is a compile error naming it; a firmware image whose arenas, embedded inputs
and outputs and minimum stack exceed the board's RAM or flash is one too, with the figures. Both
stop the compile before Zig runs, so these tests build nothing.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from zant.backend.boards import BOARDS, Board, Region
from zant.backend.firmware import MIN_STACK
from zant.backend.limits import HOST_BITS, check_board_memory, largest_object
from zant.driver import CompileOptions, compile_model
from zant.errors import ZantError
from zant.targets import RECORDS

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from models import MODELS  # noqa: E402

M4_LIMIT = "2,147,483,647"


def save(tmp_path: Path, nodes, inputs, outputs, initializers=()) -> Path:
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def relu_model(tmp_path: Path, shape: list[int]) -> Path:
    return save(
        tmp_path,
        [helper.make_node("Relu", ["x"], ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
    )


def compile_error(model: Path, out: Path, **options) -> str:
    with pytest.raises(ZantError) as error:
        compile_model(model, out, CompileOptions(**{"build": False, **options}))
    assert not out.exists() or not any(out.iterdir()), "a failed compile wrote into OUTDIR"
    return str(error.value)


def test_largest_object_is_isize():
    assert largest_object("cortex-m0plus") == largest_object("riscv32") == 2**31 - 1
    assert largest_object("host") == 2 ** (HOST_BITS - 1) - 1
    # The limits are derived from the target records' address width, for every target.
    for name, record in RECORDS.items():
        assert largest_object(name) == 2 ** (record.address_bits - 1) - 1
    assert HOST_BITS == RECORDS["host"].address_bits


def test_input_of_2_pow_50_elements_is_refused_on_cortex_m4(tmp_path):
    model = relu_model(tmp_path, [2**25, 2**25])
    message = compile_error(model, tmp_path / "out", target="cortex-m4")
    assert f"input tensor 'x' needs {4 * 2**50:,} B" in message
    assert "cortex-m4 is a 32-bit target" in message and M4_LIMIT in message
    # The 64-bit host can address it (the header says so honestly).
    compile_model(model, tmp_path / "host", CompileOptions(build=False))


@pytest.mark.skipif(HOST_BITS != 64, reason="the host limit of a 64-bit machine")
def test_tensor_beyond_the_host_limit_is_refused(tmp_path):
    message = compile_error(relu_model(tmp_path, [2**31, 2**31]), tmp_path / "out")
    assert f"input tensor 'x' needs {4 * 2**62:,} B" in message and f"{2**63 - 1:,}" in message


def test_cli_reports_the_limit_in_one_line_and_writes_nothing(tmp_path):
    model = relu_model(tmp_path, [2**25, 2**25])
    result = subprocess.run(
        [sys.executable, "-m", "zant.tools.cli", "compile", str(model), "-o", str(tmp_path / "out"),
         "--target", "riscv32"],
        capture_output=True, text=True,
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [
        f"zant: error: input tensor 'x' needs {4 * 2**50:,} B; riscv32 is a 32-bit target, "
        f"where no object exceeds {M4_LIMIT} B"
    ]
    assert not (tmp_path / "out").exists()


def test_intermediate_buffer_is_named(tmp_path):
    # A 65,536 × 65,536 outer product (16 GiB), summed: small inputs and output, a huge scratch tensor.
    n = 2**16
    model = save(
        tmp_path,
        [
            helper.make_node("Reshape", ["x", "column"], ["xc"]),
            helper.make_node("Mul", ["xc", "x"], ["outer"]),
            helper.make_node("Exp", ["outer"], ["grown"]),
            helper.make_node("ReduceSum", ["grown"], ["y"], keepdims=0),
        ],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])],
        [numpy_helper.from_array(np.array([n, 1], np.int64), "column")],
    )
    message = compile_error(model, tmp_path / "out", target="cortex-m7")
    assert f"needs {4 * n * n:,} B" in message and "scratch tensor" in message and M4_LIMIT in message


def test_loop_over_a_broadcast_beyond_isize_is_refused(tmp_path):
    # Expand is a stride-0 view: no buffer is large, but the reduction counts to 2^33.
    model = save(
        tmp_path,
        [helper.make_node("Expand", ["x", "shape"], ["e"]), helper.make_node("ReduceSum", ["e"], ["y"], keepdims=0)],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])],
        [numpy_helper.from_array(np.array([2**33], np.int64), "shape")],
    )
    message = compile_error(model, tmp_path / "out", target="cortex-m33")
    assert f"a loop counts to {2**33:,}" in message and M4_LIMIT in message
    compile_model(model, tmp_path / "host", CompileOptions(build=False))


# -- the board's memory ----------------------------------------------------------------------------


def plan(scratch=0, constant=0, inputs=(), outputs=()) -> dict:
    """A plan JSON with the given arena and graph tensor sizes."""
    return {
        "arenas": [
            {"role": "scratch", "size": scratch},
            {"role": "constant", "size": constant},
            {"role": "persistent", "size": 0},
        ],
        "tensors": [{"name": f"i{k}", "role": "input", "size": s} for k, s in enumerate(inputs)]
        + [{"name": f"o{k}", "role": "output", "size": s} for k, s in enumerate(outputs)],
    }


def test_ram_shortfall_names_every_part_and_the_excess():
    with pytest.raises(ZantError) as error:
        check_board_memory(plan(scratch=200_000, outputs=[40]), BOARDS["microbit"], MIN_STACK)
    total = 200_000 + 48 + MIN_STACK  # each embedded output is 16-byte aligned
    assert str(error.value) == (
        f"scratch arena 200,000 B + outputs 48 B + stack {MIN_STACK:,} B = {total:,} B do not fit "
        f"the 16 KB (16,384 B) RAM of microbit: {total - 16_384:,} B over"
    )


def test_flash_and_weights_region():
    check_board_memory(plan(constant=200 * 1024, inputs=[1000]), BOARDS["microbit"], MIN_STACK)
    with pytest.raises(ZantError, match=r"weights 300,000 B \+ inputs 1,008 B = 301,008 B do not fit the 256 KB "
                       r"\(262,144 B\) flash of microbit even without the code: 38,864 B over"):
        check_board_memory(plan(constant=300_000, inputs=[1000]), BOARDS["microbit"], MIN_STACK)
    # The M55's weights go to their own 2 MB region, not its 512 KB ITCM.
    check_board_memory(plan(constant=1024 * 1024), BOARDS["mps3-an547"], MIN_STACK)
    with pytest.raises(ZantError) as error:
        check_board_memory(plan(constant=3 * 1024 * 1024), BOARDS["mps3-an547"], MIN_STACK)
    assert str(error.value) == (
        "weights 3,145,728 B = 3,145,728 B do not fit the 2 MB (2,097,152 B) weights region of mps3-an547: "
        "1,048,576 B over"
    )


def test_both_memories_short_in_one_message():
    tiny = Board("tiny", "cortex-m4", Region(0, 1024), Region(0x2000_0000, 8192), source=Path("tiny.toml"))
    with pytest.raises(ZantError) as error:
        check_board_memory(plan(scratch=8192, constant=2048), tiny, MIN_STACK)
    message = str(error.value)
    assert "8 KB (8,192 B) RAM of tiny (tiny.toml)" in message and "1 KB (1,024 B) flash of tiny" in message
    assert len(message.splitlines()) == 1


def test_kws_does_not_fit_the_microbit(tmp_path):
    from zant.pipelines import pipeline_for, with_ram_schedules

    onnx.save(MODELS["kws"](), tmp_path / "kws.onnx")
    # The float KWS does not fit even below the layer bound: the error names the smaller plan,
    # schedule-in-place's (docs/ram-budget.md).
    scheduled = with_ram_schedules(pipeline_for("cortex-m0plus"))
    planned = compile_model(
        tmp_path / "kws.onnx", tmp_path / "plan", CompileOptions(target="cortex-m0plus", build=False, pipeline=scheduled)
    )
    default = compile_model(tmp_path / "kws.onnx", tmp_path / "free", CompileOptions(target="cortex-m0plus", build=False))
    scratch_of = lambda plan: {a["role"]: a["size"] for a in plan["arenas"]}["scratch"]  # noqa: E731
    assert scratch_of(planned.plan) < scratch_of(default.plan)
    scratch = {a["role"]: a["size"] for a in planned.plan["arenas"]}["scratch"]
    outputs = sum(-(-t["size"] // 16) * 16 for t in planned.plan["tensors"] if t["role"] == "output")
    total = scratch + outputs + MIN_STACK
    message = compile_error(
        tmp_path / "kws.onnx", tmp_path / "out", target="cortex-m0plus", firmware=True, build=True
    )
    assert message.startswith(f"scratch arena {scratch:,} B (the smallest Zant reaches for this model: ")
    assert message.endswith(
        f") + outputs {outputs:,} B + stack {MIN_STACK:,} B = {total:,} B do not "
        f"fit the 16 KB (16,384 B) RAM of microbit: {total - 16_384:,} B over"
    )
