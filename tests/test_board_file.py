"""A user's own board: `--board my_board.toml` (a name of a built-in board still works).

A board file with a real memory map links there; one too small for the model is the size error;
a mistake in the file is one error naming the file and the field; a file that names a QEMU
machine runs under it with `zant run --board FILE` (the core comes from the file).
"""

from __future__ import annotations

import re
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from zant.backend.boards import BOARDS, Region, board_for, find_board, load_board_file
from zant.backend.firmware import Cost, qemu_missing
from zant.errors import ZantError

ZANT = [sys.executable, "-m", "zant.tools.cli"]

STM32F411 = """\
# STM32F411CE: Cortex-M4F, 512 KB flash, 128 KB SRAM
name = "stm32f411"
core = "cortex-m4"
flash = { origin = 0x0800_0000, size = "512 KB" }
ram = { origin = 0x2000_0000, size = "128 KB" }
"""

AN386 = """\
# QEMU's mps2-an386 memory map, as a file
name = "my-an386"
core = "cortex-m4"
qemu = "mps2-an386"

[flash]
origin = 0
size = 4194304

[ram]
origin = 0x20000000
size = "4 MB"
"""


def zant(*args, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*ZANT, *map(str, args)], capture_output=True, text=True, cwd=cwd)


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    return path


def add_relu(tmp_path: Path, width: int = 3) -> Path:
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "b"], ["s"]), helper.make_node("Relu", ["s"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, width])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, width])],
        [numpy_helper.from_array(np.arange(width, dtype=np.float32), "b")],
    )
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def loaded_segments(elf: Path) -> list[int]:
    """The addresses of an ELF32 image's loadable segments, in file order."""
    data = elf.read_bytes()
    offset, = struct.unpack_from("<I", data, 0x1C)
    size, count = struct.unpack_from("<HH", data, 0x2A)
    headers = [struct.unpack_from("<8I", data, offset + i * size) for i in range(count)]
    return [vaddr for kind, _, vaddr, _, _, memsz, _, _ in headers if kind == 1 and memsz]  # PT_LOAD


def test_board_file_describes_the_memory_map(tmp_path):
    board = load_board_file(write(tmp_path, "stm32f411.toml", STM32F411))
    assert (board.name, board.target, board.machine) == ("stm32f411", "cortex-m4", None)
    assert board.flash == Region(0x0800_0000, 512 * 1024) and board.ram == Region(0x2000_0000, 128 * 1024)
    assert board.weights is None and board.fpu
    an386 = load_board_file(write(tmp_path, "an386.toml", AN386))
    builtin = BOARDS["mps2-an386"]
    assert (an386.flash, an386.ram, an386.machine) == (builtin.flash, builtin.ram, "mps2-an386")
    # The name defaults to the file's stem; a weights region is optional.
    nameless = write(tmp_path, "m55ish.toml", 'core = "cortex-m55"\n'
                     'flash = { origin = 0x1000_0000, size = "512K" }\n'
                     'ram = { origin = 0x3100_0000, size = "4M" }\n'
                     'weights = { origin = 0x1100_0000, size = "0x20_0000" }\n')
    board = load_board_file(nameless)
    assert board.name == "m55ish" and board.weights == Region(0x1100_0000, 2 * 1024 * 1024)


def test_board_names_and_paths(tmp_path, monkeypatch):
    assert find_board("microbit") is BOARDS["microbit"]
    path = write(tmp_path, "stm32f411.toml", STM32F411)
    assert find_board(str(path)).name == "stm32f411"
    monkeypatch.chdir(tmp_path)
    assert find_board("stm32f411.toml").source == Path("stm32f411.toml")
    with pytest.raises(ZantError, match="unknown board 'nrf52'.*or give a board file"):
        find_board("nrf52")
    with pytest.raises(ZantError, match="cannot read board file missing.toml"):
        find_board("missing.toml")
    with pytest.raises(ZantError, match=r"board 'stm32f411 \(stm32f411.toml\)' has a cortex-m4 core, not riscv32"):
        board_for("riscv32", "stm32f411.toml")


REGIONS = 'flash = { origin = 0, size = "256 KB" }\nram = { origin = 0x2000_0000, size = "64 KB" }\n'


@pytest.mark.parametrize(
    "text, field, problem",
    [
        ('core = "cortex-m9"\n' + REGIONS, "core", "unknown core 'cortex-m9' (choose from cortex-m0plus"),
        ('core = "host"\n' + REGIONS, "core", "unknown core 'host'"),
        (REGIONS, "core", "missing"),
        ('core = "cortex-m4"\nflash = { origin = 0, size = "256 KB" }\n', "ram", "missing region"),
        ('core = "cortex-m4"\nflash = { origin = 0, size = "256 KB" }\nram = { origin = 0x2000_0000 }\n',
         "ram.size", "missing"),
        ('core = "cortex-m4"\nflash = { origin = 0, size = "256 KB" }\nram = { origin = 0x2000_0000, size = "64 KiloB" }\n',
         "ram.size", "'64 KiloB' is not a byte count"),
        ('core = "cortex-m4"\nflash = { origin = -4, size = "256 KB" }\nram = { origin = 0x2000_0000, size = 1024 }\n',
         "flash.origin", "-4 is negative"),
        ('core = "cortex-m4"\nflash = { origin = 0, size = 0 }\nram = { origin = 0x2000_0000, size = 1024 }\n',
         "flash.size", "must be more than 0"),
        ('core = "cortex-m4"\nflash = { origin = 0, size = 1001 }\nram = { origin = 0x2000_0000, size = 1024 }\n',
         "flash.size", "not a multiple of 8"),
        ('core = "cortex-m4"\nflash = { origin = 0xFFFF_0000, size = "1 MB" }\nram = { origin = 0x2000_0000, size = 1024 }\n',
         "flash", "beyond the 32-bit address space"),
        ('core = "cortex-m4"\nflash = { origin = 0, size = "1 MB" }\nram = { origin = 0x8_0000, size = "1 MB" }\n',
         "ram", "overlaps flash"),
        ('core = "cortex-m4"\nrom = 1\n' + REGIONS, "rom", "unknown key (expected name, core, qemu, clock_hz, flash"),
        ('core = "cortex-m4"\n' + REGIONS + 'weights = { origin = 0x9000_0000, size = 64, speed = 2 }\n',
         "weights.speed", "unknown key (expected origin, size)"),
        ('core = "cortex-m4"\nflash = "256 KB"\nram = { origin = 0x2000_0000, size = 1024 }\n',
         "flash", "expected a table with origin and size"),
        ('name = "my board"\ncore = "cortex-m4"\n' + REGIONS, "name", "'my board' is not a board name"),
        ('core = "cortex-m4"\nqemu = 3\n' + REGIONS, "qemu", "3 is not a QEMU machine name"),
    ],
)
def test_board_file_mistakes_name_the_file_and_field(tmp_path, text, field, problem):
    path = write(tmp_path, "bad.toml", text)
    with pytest.raises(ZantError) as error:
        load_board_file(path)
    message = str(error.value)
    assert message.startswith(f"board file {path}: {field}: "), message
    assert problem in message, message


def test_board_file_that_is_not_toml(tmp_path):
    path = write(tmp_path, "bad.toml", "core = cortex-m4\n")
    with pytest.raises(ZantError, match=f"board file {path}: not valid TOML"):
        load_board_file(path)


def test_cli_board_file_mistake_is_one_line(tmp_path):
    path = write(tmp_path, "bad.toml", 'core = "cortex-m9"\n' + REGIONS)
    result = zant("compile", add_relu(tmp_path), "-o", tmp_path / "out", "--firmware", "--board", path)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [
        f"zant: error: board file {path}: core: unknown core 'cortex-m9' (choose from cortex-m0plus, cortex-m3, "
        "cortex-m4, cortex-m7, cortex-m33, cortex-m55, riscv32)"
    ]
    assert not (tmp_path / "out").exists()


def test_board_file_too_small_is_the_size_error(tmp_path):
    small = write(tmp_path, "small.toml", 'core = "cortex-m4"\nflash = { origin = 0, size = "64 KB" }\n'
                  'ram = { origin = 0x2000_0000, size = "4 KB" }\n')
    result = zant("compile", add_relu(tmp_path, width=100), "-o", tmp_path / "out", "--firmware", "--board", small)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    # 2 × 100 floats of output (800 B) and the 4 KB minimum stack leave no room in 4 KB.
    assert "outputs 800 B + stack 4,096 B = 4,896 B do not fit the 4 KB (4,096 B) RAM of small" in result.stderr
    assert f"({small}): 800 B over" in result.stderr
    assert not (tmp_path / "out").exists()


def test_real_memory_map_links_there(tmp_path):
    # An absolute path; the core (cortex-m4) comes from the file.
    board = write(tmp_path, "stm32f411.toml", STM32F411)
    out = tmp_path / "out"
    result = zant("compile", add_relu(tmp_path), "-o", out, "--name", "net", "--firmware", "--board", board.resolve())
    assert result.returncode == 0, result.stderr
    assert "(stm32f411" in result.stdout and "cortex-m4" in result.stdout
    assert "FLASH (rx) : ORIGIN = 0x08000000, LENGTH = 0x80000" in (out / "net.ld").read_text()
    segments = loaded_segments(out / "net.elf")
    assert segments[0] == 0x0800_0000  # the vector table at the start of the flash
    assert all(0x0800_0000 <= a < 0x0808_0000 or 0x2000_0000 <= a < 0x2002_0000 for a in segments), segments
    # Without a QEMU machine the image can be built but not run.
    ran = zant("run", add_relu(tmp_path), "--board", board)
    assert ran.returncode == 1 and "names no QEMU machine" in ran.stderr and "Traceback" not in ran.stderr


def test_run_board_file_under_its_qemu_machine(tmp_path):
    missing = qemu_missing(BOARDS["mps2-an386"])
    if missing:
        pytest.skip(missing)
    write(tmp_path, "an386.toml", AN386)
    np.save(tmp_path / "x.npy", np.array([[-1, 0, 1], [2, -3, 4]], np.float32))
    # A relative path, from the working folder. ReleaseSafe: images fault at start in
    # ReleaseFast until the firmware start-up code is fixed.
    result = zant("run", add_relu(tmp_path), "--board", "an386.toml", "--safe", "--input", "x=x.npy", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "my-an386  [0. 1. 3. 2. 0. 6.]" in result.stdout and "max abs error 0\n" in result.stdout
    assert "building ReleaseSafe for cortex-m4 on my-an386 (an386.toml) under QEMU" in result.stderr
    assert "zant: run on mps2-an386 under QEMU" in result.stderr


def test_clock_and_flash_timing_keys(tmp_path):
    board = load_board_file(write(tmp_path, "l4.toml", """\
core = "cortex-m4"
qemu = "mps2-an386"
clock_hz = 80_000_000
flash = { origin = 0, size = "1 MB", wait_states = 4, icache_lines = 32, dcache_lines = 8, prefetch = true }
ram = { origin = 0x2000_0000, size = "320 KB" }
"""))
    assert board.clock_hz == 80_000_000 and Cost(0, 80_000, board.clock_hz).milliseconds == 1.0
    assert (board.flash_timing.wait_states, board.flash_timing.icache_lines, board.flash_timing.prefetch) == (4, 32, True)
    for text, message in [
        ("clock_hz = 0", "clock_hz: 0 is not a clock in Hz"),
        ('clock_hz = "fast"', "clock_hz: 'fast' is not a clock in Hz"),
    ]:
        with pytest.raises(ZantError, match=message):
            load_board_file(write(tmp_path, "bad.toml", 'core = "cortex-m4"\n' + text + "\n" + REGIONS))
    bad_flash = 'core = "cortex-m4"\nflash = { origin = 0, size = "256 KB", wait_states = 99 }\nram = { origin = 0x2000_0000, size = "64 KB" }\n'
    with pytest.raises(ZantError, match=r"flash.wait_states: 99 is not a count from 0 to 64"):
        load_board_file(write(tmp_path, "bad.toml", bad_flash))


def test_run_on_the_mlperf_tiny_reference_board(tmp_path):
    """The STM32L4R5 board: cycles with its flash wait states, milliseconds at its 120 MHz."""
    board = BOARDS["nucleo-l4r5zi"]
    assert (board.clock_hz, board.flash_timing.wait_states, board.ram.size) == (120_000_000, 5, 640 * 1024)
    missing = qemu_missing(board)
    if missing:
        pytest.skip(missing)
    result = zant("run", add_relu(tmp_path), "--board", "nucleo-l4r5zi")
    assert result.returncode == 0, result.stderr
    assert "max abs error 0\n" in result.stdout
    found = re.search(r"one inference   ([\d,]+) instructions, ([\d,]+) cycles, ([\d.]+) ms at 120 MHz", result.stdout)
    assert found, result.stdout
    instructions, cycles = (int(found[i].replace(",", "")) for i in (1, 2))
    assert cycles > instructions and abs(float(found[3]) - cycles / 120_000) < 0.01
