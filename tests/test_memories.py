"""A board with several memories: the scratch arena split over them, regions, plan and layout hashes.

The board file lists two RAM memories of QEMU's mps2-an386 that the image does not otherwise
use (the 16 KB FPGA block RAM at 0x01000000 and the PSRAM at 0x21000000), each given 2 KB:
less than the digits CNN's 2,560 B scratch arena, enough for it together; its RAM (`.data`,
`.bss`, the stack) ranks slowest, so it takes scratch only when they are full. The model compiles
into both, the image runs under QEMU with the reference's outputs, and the ELF has each memory's
section where the board says, NOLOAD.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from zant.backend.boards import BOARDS, load_board_file
from zant.backend.firmware import ImageModel, linker_script, run_models
from zant.driver import CompileOptions, compile_model, compile_to_module, planned_json
from zant.errors import ZantError
from zant.pipelines import pipeline_for
from zant.runtime import load_compiled, reference_outputs

ROOT = Path(__file__).resolve().parent.parent
DIGITS = ROOT / "examples" / "digits" / "digits_cnn.onnx"
ZANT = [sys.executable, "-m", "zant.tools.cli"]

TWO_MEMORIES = """\
name = "an386-two-rams"
core = "cortex-m4"
qemu = "mps2-an386"
flash = {{ origin = 0, size = "4 MB" }}
ram = {{ origin = 0x2000_0000, size = {ram}, speed = 3 }}

[[memories]]
name = "bram"          # FPGA block RAM: the fastest
origin = 0x0100_0000
size = {fast}
speed = 0

[[memories]]
name = "psram"
origin = 0x2100_0000
size = {slow}
speed = 2
"""


def board_file(
    folder: Path, fast: str = '"2 KB"', slow: str = '"2 KB"', name: str = "board.toml", ram: str = '"4 MB"'
) -> Path:
    path = folder / name
    path.write_text(TWO_MEMORIES.format(fast=fast, slow=slow, ram=ram))
    return path


def sections(elf: Path) -> dict[str, tuple[int, int, int]]:
    """An ELF32 image's sections: name → (type, address, size)."""
    data = elf.read_bytes()
    offset, = struct.unpack_from("<I", data, 0x20)
    size, count, names = struct.unpack_from("<HHH", data, 0x2E)
    headers = [struct.unpack_from("<10I", data, offset + i * size) for i in range(count)]
    strings = headers[names][4]

    def name(at: int) -> str:
        return data[strings + at : data.index(b"\0", strings + at)].decode()

    return {name(h[0]): (h[1], h[3], h[5]) for h in headers}


def plan_for(board: Path, model: Path | onnx.ModelProto = DIGITS) -> dict:
    memories = load_board_file(board).place_memories
    planned = compile_to_module(model, "cortex-m4", pipeline=pipeline_for("cortex-m4", memories=memories))
    return planned_json(planned, "digits", "cortex-m4")


def test_a_board_file_lists_its_memories(tmp_path):
    board = load_board_file(board_file(tmp_path))
    assert [m.name for m in board.memories] == ["flash", "ram", "bram", "psram"]
    assert [(m.name, m.origin, m.size, m.speed) for m in board.scratch_memories] == [
        ("bram", 0x0100_0000, 2048, 0), ("psram", 0x2100_0000, 2048, 2)]
    # The RAM last (speed 3), as `bss`: the default scratch arena, its bytes but the stack's.
    assert board.place_memories == ("bram:2048", "psram:2048", f"bss:{4 * 1024 * 1024 - 4096}")
    script = linker_script("digits", board)
    assert "bram (rw) : ORIGIN = 0x01000000, LENGTH = 0x800" in script
    assert ".zant.psram (NOLOAD) : ALIGN(16) { *(.zant.psram .zant.psram.*) } > psram" in script


@pytest.mark.skipif(shutil.which("qemu-system-arm") is None, reason="qemu-system-arm not installed")
def test_two_small_memories_hold_the_scratch_and_the_image_runs(tmp_path):
    board = board_file(tmp_path)
    feeds = {"image": np.random.default_rng(0).standard_normal((1, 1, 8, 8)).astype(np.float32)}
    result = compile_model(DIGITS, tmp_path / "out", CompileOptions(
        name="digits", target="cortex-m4", firmware=True, board=str(board), inputs=dict(feeds)))
    plan = result.plan

    scratch = [a for a in plan["arenas"] if a["role"] == "scratch"]
    assert {a["memory"]: a["size"] for a in scratch} == {"bram": 1536, "psram": 2048}
    in_memory = {t["name"]: t["memory"] for t in plan["tensors"] if t["role"] == "scratch"}
    assert in_memory["relu1_out"] == "psram"  # 2,048 B, read once per output: the least dense
    assert set(in_memory.values()) == {"bram", "psram"}
    regions = {r["name"]: r for r in plan["regions"]}
    assert regions["scratch.bram"]["memory"] == "bram" and regions["scratch.psram"]["size"] == 2048
    for t in plan["tensors"]:
        if t["role"] == "scratch":
            assert t["region"] == regions[f"scratch.{t['memory']}"]["id"]

    header = result.header_path.read_text()
    assert f"#define digits_PLAN_HASH 0x{plan['plan_hash']}ULL" in header
    assert f"#define digits_LAYOUT_HASH 0x{plan['layout_hash']}ULL" in header
    assert f"#define digits_REGION_SCRATCH_BRAM 0x{regions['scratch.bram']['id']:08x}u" in header
    zig = result.zig_path.read_text()
    assert 'var digits_scratch_bram: [1536]u8 align(16) linksection(".zant.bram") = undefined;' in zig
    assert "digits_scratch:" not in zig  # no scratch left in .bss

    elf = result.firmware_path
    found = sections(elf)
    nobits = 8
    assert found[".zant.bram"] == (nobits, 0x0100_0000, 1536)
    assert found[".zant.psram"] == (nobits, 0x2100_0000, 2048)

    run = run_models(elf, result.board, [ImageModel("digits", result.inputs, result.outputs)])
    assert run.errors == {}
    got = run.outputs["digits"][0]
    np.testing.assert_allclose(got, reference_outputs(DIGITS, feeds)[0], rtol=1e-4, atol=1e-5)
    host = compile_model(DIGITS, tmp_path / "host", CompileOptions(name="digits"))
    np.testing.assert_allclose(got, load_compiled(host)(feeds["image"])[0], rtol=1e-4, atol=1e-5)
    # The same image on the board's plain RAM computes the same bits: only addresses differ.
    plain = compile_model(DIGITS, tmp_path / "plain", CompileOptions(
        name="digits", target="cortex-m4", firmware=True, inputs=dict(feeds)))
    assert [a.get("memory") for a in plain.plan["arenas"] if a["role"] == "scratch"] == [None]
    assert plain.firmware_path is not None and plain.board is not None
    same = run_models(plain.firmware_path, plain.board, [ImageModel("digits", plain.inputs, plain.outputs)])
    assert same.outputs["digits"][0].tobytes() == got.tobytes()


def test_memories_too_small_are_one_line_naming_the_buffer(tmp_path):
    board = board_file(tmp_path, fast='"1 KB"', slow='"1 KB"', ram='"5 KB"')
    result = subprocess.run(
        [*ZANT, "compile", str(DIGITS), "-o", str(tmp_path / "out"), "--firmware", "--board", str(board)],
        capture_output=True, text=True,
    )
    assert result.returncode != 0
    message = result.stderr.strip()
    assert "\n" not in message and "Traceback" not in message
    assert "scratch buffer 'relu1_out' (2,048 B) fits in no memory of the board" in message
    assert "bram 1,024 B, psram 1,024 B, .bss 1,024 B" in message


def relu_model(width: int) -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Neg", ["r"], ["n"]),
         helper.make_node("Relu", ["n"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, width])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, width])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_hashes_are_stable_and_follow_regions_placements_and_the_abi(tmp_path):
    board = board_file(tmp_path)
    first, again = plan_for(board), plan_for(board)
    assert (first["plan_hash"], first["layout_hash"], first["regions"]) == (
        again["plan_hash"], again["layout_hash"], again["regions"])
    # Other memories for the same model: the plan changes, the ABI does not.
    roomy = plan_for(board_file(tmp_path, fast='"4 KB"', name="roomy.toml"))
    assert {a.get("memory") for a in roomy["arenas"] if a["role"] == "scratch"} == {"bram"}
    assert roomy["plan_hash"] != first["plan_hash"] and roomy["layout_hash"] == first["layout_hash"]
    # The region ids come from what each region is: the same region keeps its id.
    assert {r["name"]: r["id"] for r in roomy["regions"]}["constant"] == {
        r["name"]: r["id"] for r in first["regions"]}["constant"]
    # Another input shape: both change.
    small, wide = plan_for(board, relu_model(8)), plan_for(board, relu_model(16))
    assert small["plan_hash"] != wide["plan_hash"] and small["layout_hash"] != wide["layout_hash"]


def test_board_file_memories_are_validated(tmp_path):
    def load(extra: str) -> None:
        path = tmp_path / "b.toml"
        path.write_text('core = "cortex-m4"\nflash = { origin = 0, size = "1 MB" }\n'
                        'ram = { origin = 0x2000_0000, size = "1 MB" }\n' + extra)
        load_board_file(path)

    cases = [
        ('[[memories]]\nname = "dtcm"\norigin = 0x3000_0000\n', r"memories\[0\].size: missing"),
        ('[[memories]]\nname = "2x"\norigin = 0x3000_0000\nsize = 64\n', r"'2x' is not a memory name"),
        ('[[memories]]\nname = "RAM"\norigin = 0x3000_0000\nsize = 64\n', r"'RAM' is reserved"),
        ('[[memories]]\nname = "d"\norigin = 0x2000_0100\nsize = 64\n', r"memories.d: overlaps ram"),
        ('[[memories]]\nname = "d"\norigin = 0x3000_0000\nsize = 64\nspeed = -1\n', r"memories.d.speed: -1 is not a speed rank"),
        ('[[memories]]\nname = "d"\norigin = 0x3000_0000\nsize = 64\nkind = "rom"\n', r"memories.d.kind: 'rom' is not a memory kind"),
        ('[[memories]]\nname = "d"\norigin = 0x3000_0000\nsize = 64\nfast = true\n', r"memories\[0\].fast: unknown key"),
        ('[[memories]]\nname = "d"\norigin = 0x3000_0000\nsize = 64\n'
         '[[memories]]\nname = "d"\norigin = 0x3100_0000\nsize = 64\n', r"memories.d: listed twice"),
        ('memories = 3\n', r"memories: expected an array of tables"),
    ]
    for extra, message in cases:
        with pytest.raises(ZantError, match=message):
            load(extra)


def test_check_plan_compares_the_callers_hash(tmp_path):
    # NAME_check_plan and the exported hashes, through the host library's C ABI.
    import ctypes

    path = tmp_path / "relu.onnx"
    onnx.save(relu_model(8), path)
    result = compile_model(path, tmp_path / "out", CompileOptions(name="relu"))
    library = ctypes.CDLL(str(result.library_path.resolve()))
    check = library.relu_check_plan
    check.restype, check.argtypes = ctypes.c_int32, [ctypes.c_uint64]
    plan_hash = int(result.plan["plan_hash"], 16)
    assert check(plan_hash) == 0
    assert check(plan_hash ^ 1) == 3  # relu_STATUS_PLAN_MISMATCH
    assert ctypes.c_uint64.in_dll(library, "relu_plan_hash").value == plan_hash
    assert ctypes.c_uint64.in_dll(library, "relu_layout_hash").value == int(result.plan["layout_hash"], 16)
    assert "#define relu_STATUS_PLAN_MISMATCH 3" in result.header_path.read_text()


def test_zant_plan_shows_the_memories_of_a_board(tmp_path):
    board = board_file(tmp_path)
    result = subprocess.run([*ZANT, "plan", str(DIGITS), "--board", str(board), "--svg", str(tmp_path / "p.svg")],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    rows = {line.split()[0]: line.split() for line in result.stdout.splitlines() if line.strip()}
    assert rows["scratch.bram"][2:5] == ["scratch", "bram", "1,536"]
    assert rows["relu1_out"][1] == "psram" and rows["logits"][1] == "bram"
    svg = (tmp_path / "p.svg").read_text()
    assert ">bram 1,536 B</text>" in svg and ">psram 2,048 B</text>" in svg


def test_built_in_boards_name_their_memories():
    an547 = BOARDS["mps3-an547"]
    assert [(m.name, m.kind, m.speed) for m in an547.memories] == [
        ("itcm", "flash", 1), ("isram", "ram", 1), ("sram", "flash", 1), ("dtcm", "ram", 0)]
    # The M55's DTCM first, then its SRAM's .bss (less the minimum stack).
    assert an547.place_memories == (f"dtcm:{512 * 1024}", f"bss:{4 * 1024 * 1024 - 4096}")
    an386 = BOARDS["mps2-an386"]
    assert [m.name for m in an386.memories] == ["ssram1", "ssram23"] and an386.place_memories == ()
    assert "place-memories" not in pipeline_for("cortex-m4", memories=an386.place_memories)
