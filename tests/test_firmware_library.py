"""The static library a firmware links as it is (issue 33 item 2): no unwind tables, members `ar x`
unpacks, the float ABI and runtime symbols stated in the header, linked by Debian's
arm-none-eabi-gcc with newlib and with -nostdlib; and the caller's scratch arena (`--arena
caller`, `NAME_set_arena`), bit-identical to the library's own `.bss` arena.

The link tests skip without arm-none-eabi-gcc (Debian: `apt install gcc-arm-none-eabi
libnewlib-arm-none-eabi`); the rest need only Zig.
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import zant
from zant.backend.archive import plain_name, read_members, write_archive
from zant.backend.c_abi import (
    check_float_abi,
    default_float_abi,
    gcc_flags,
    runtime_symbols,
    zig_target_flags,
)
from zant.dialects.abi import Status
from zant.driver import CompileOptions, compile_model
from zant.errors import ZantError
from zant.runtime import load_compiled

ROOT = Path(__file__).resolve().parents[1]
DIGITS = ROOT / "examples" / "digits" / "digits_cnn.onnx"
GCC = "arm-none-eabi-gcc"
M4_HARD = ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"]
M4_SOFTFP = ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=softfp", "-mfpu=fpv4-sp-d16"]


def require(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        pytest.skip(f"{tool} is not installed (Debian: apt install gcc-arm-none-eabi libnewlib-arm-none-eabi binutils)")
    return path


@pytest.fixture(scope="module")
def m4(tmp_path_factory) -> dict[str, Path]:
    """digits for the Cortex-M4 (ReleaseSmall): the default library (hard float, .bss arena), a
    softfp one with the caller's arena and one with Zig's compiler_rt bundled, each in its folder."""
    root = tmp_path_factory.mktemp("m4")
    built = {}
    for key, options in {
        "hard": CompileOptions(name="digits", target="cortex-m4", optimize="ReleaseSmall"),
        "softfp": CompileOptions(
            name="digits", target="cortex-m4", optimize="ReleaseSmall", float_abi="softfp", arena="caller"
        ),
        "bundled": CompileOptions(name="digits", target="cortex-m4", optimize="ReleaseSmall", runtime="bundled"),
    }.items():
        result = compile_model(DIGITS, root / key, options)
        assert result.library_path is not None
        built[key] = result.library_path.parent
    return built


MAIN = """\
#include "digits.h"
static float image[digits_INPUT_0_SIZE];
static float probabilities[digits_OUTPUT_0_SIZE];
{arena}
int main(void) {{
    {set_arena}
    return digits_predict(image, probabilities);
}}
"""


def main_c(folder: Path, caller_arena: bool = False) -> Path:
    arena = "static unsigned char arena[digits_ARENA_SIZE] __attribute__((aligned(digits_ARENA_ALIGN)));"
    source = MAIN.format(
        arena=arena if caller_arena else "",
        set_arena="if (digits_set_arena(arena, sizeof arena) != 0) return 1;" if caller_arena else "",
    )
    path = folder / "main.c"
    path.write_text(source)
    return path


def gcc(*arguments: str | Path, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([require(GCC), *map(str, arguments)], cwd=cwd, capture_output=True, text=True)


def test_archive_members_have_plain_names_and_ar_unpacks_them(m4, tmp_path):
    ar = require("arm-none-eabi-ar")
    library = m4["hard"] / "libdigits.a"
    names = [name for name, _ in read_members(library.read_bytes())]
    assert names and all("/" not in n and n.startswith("digits") and n.endswith(".o") for n in names), names
    listed = subprocess.run([ar, "t", library], capture_output=True, text=True, check=True).stdout.split()
    assert listed == names
    unpacked = tmp_path / "x"
    unpacked.mkdir()
    done = subprocess.run([ar, "x", library], cwd=unpacked, capture_output=True, text=True)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert sorted(p.name for p in unpacked.iterdir()) == sorted(names)


def test_no_unwind_personality_and_the_header_lists_what_nm_finds(m4):
    nm = require("arm-none-eabi-nm")
    library = m4["hard"] / "libdigits.a"
    undefined = subprocess.run([nm, "-u", library], capture_output=True, text=True, check=True).stdout
    assert "__aeabi_unwind_cpp_pr" not in undefined
    sections = subprocess.run([require("arm-none-eabi-objdump"), "-h", library], capture_output=True, text=True).stdout
    assert ".ARM.extab" not in sections
    # nm -u per member, less what another member defines: what c_abi.runtime_symbols reads
    defined = subprocess.run([nm, "--defined-only", "-g", library], capture_output=True, text=True).stdout
    ours = {line.split()[-1] for line in defined.splitlines() if line.count(" ") >= 2}
    needed = {line.split()[-1] for line in undefined.splitlines() if line.strip().startswith("U ")} - ours
    symbols = runtime_symbols(library)
    assert set(symbols) == needed and symbols, symbols
    header = (m4["hard"] / "digits.h").read_text()
    for symbol in symbols:
        assert symbol in header
    assert " ".join(M4_HARD) in header
    assert "float ABI hard" in header and "#define digits_ARENA_SIZE 2560u" in header
    assert "#define digits_ARENA_ALIGN 16u" in header and "#define digits_ARENA_CALLER 0" in header
    assert "digits_set_arena" not in header


def test_links_with_newlib_and_with_nostdlib(m4, tmp_path):
    folder = m4["hard"]
    main = main_c(tmp_path)
    linked = gcc(*M4_HARD, f"-I{folder}", main, folder / "libdigits.a", "--specs=nosys.specs", "-lm", "-o", "a.elf",
                 cwd=tmp_path)
    assert linked.returncode == 0, linked.stderr
    # -nostdlib: the listed symbols are all the firmware must provide (here as empty stubs)
    stubs = tmp_path / "runtime.c"
    stubs.write_text("".join(f"void {s}(void) {{}}\n" for s in [*runtime_symbols(folder / "libdigits.a"), "_start"]))
    bare = gcc(*M4_HARD, "-fno-builtin", f"-I{folder}", "-nostdlib", main, stubs, folder / "libdigits.a", "-o", "b.elf",
               cwd=tmp_path)
    assert bare.returncode == 0, bare.stderr
    missing = gcc(*M4_HARD, f"-I{folder}", "-nostdlib", main, folder / "libdigits.a", "-o", "c.elf", cwd=tmp_path)
    assert missing.returncode != 0 and "undefined reference to `expf'" in missing.stderr


def test_a_bundled_runtime_needs_nothing_from_the_firmware(m4, tmp_path):
    folder = m4["bundled"]
    library = folder / "libdigits.a"
    assert [name for name, _ in read_members(library.read_bytes())][-1] == "compiler_rt.o"
    assert runtime_symbols(library) == []
    assert "Zig's compiler_rt is in the archive" in (folder / "digits.h").read_text()
    (tmp_path / "start.c").write_text("int main(void);\nvoid _start(void) { main(); for (;;) {} }\n")
    bare = gcc(*M4_HARD, f"-I{folder}", "-nostdlib", main_c(tmp_path), "start.c", library, "-Wl,--gc-sections",
               "-o", "b.elf", cwd=tmp_path)
    assert bare.returncode == 0, bare.stderr
    # newlib's definitions and the bundled (weak) ones link together
    both = gcc(*M4_HARD, f"-I{folder}", main_c(tmp_path), library, "--specs=nosys.specs", "-lm", "-o", "n.elf",
               cwd=tmp_path)
    assert both.returncode == 0, both.stderr


def test_float_abis_link_only_with_their_own(m4, tmp_path):
    softfp = m4["softfp"]
    linked = gcc(*M4_SOFTFP, f"-I{softfp}", main_c(tmp_path, caller_arena=True), softfp / "libdigits.a",
                 "--specs=nosys.specs", "-lm", "-o", "s.elf", cwd=tmp_path)
    assert linked.returncode == 0, linked.stderr
    header = (softfp / "digits.h").read_text()
    assert " ".join(M4_SOFTFP) in header and "int32_t digits_set_arena(void *arena, size_t arena_bytes);" in header
    # the header stops a caller of another float ABI at compile time ...
    refused = gcc(*M4_SOFTFP, "-c", f"-I{m4['hard']}", main_c(tmp_path), "-o", "m.o", cwd=tmp_path)
    assert refused.returncode != 0 and "uses the hard float ABI" in refused.stderr
    # ... where the linker would refuse the objects
    (tmp_path / "bare.c").write_text("int digits_predict(const float *, float *);\n"
                                     "static float x[64], y[10];\nint main(void) { return digits_predict(x, y); }\n")
    mixed = gcc(*M4_SOFTFP, "bare.c", m4["hard"] / "libdigits.a", "--specs=nosys.specs", "-lm", "-o", "x.elf",
                cwd=tmp_path)
    assert mixed.returncode != 0 and "failed to merge target specific data" in mixed.stderr


def test_float_abi_options():
    assert default_float_abi("cortex-m4") == "hard" and default_float_abi("cortex-m0plus") == "soft"
    assert default_float_abi("riscv32") is None
    assert zig_target_flags("cortex-m4", "softfp") == ("-target", "thumb-freestanding-eabi", "-mcpu", "cortex_m4+vfp4d16sp+dsp")
    assert zig_target_flags("cortex-m4", "soft") == ("-target", "thumb-freestanding-eabi", "-mcpu", "cortex_m4+dsp")
    assert gcc_flags("cortex-m7") == ["-mcpu=cortex-m7", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv5-d16"]
    assert gcc_flags("cortex-m0plus") == ["-mcpu=cortex-m0plus", "-mthumb", "-mfloat-abi=soft"]
    with pytest.raises(ZantError, match="cortex-m3 has no FPU: its only float ABI is soft, not softfp"):
        check_float_abi("cortex-m3", "softfp")
    with pytest.raises(ZantError, match="--float-abi is for Arm cores"):
        check_float_abi("riscv32", "hard")


def test_archive_round_trip_with_long_names(tmp_path):
    ar = require("ar")
    library = tmp_path / "libx.a"
    members = [("short.o", b"abc"), ("a_member_name_longer_than_15.o", b"\x00\x01"), ("compiler_rt.o", b"z")]
    library.write_bytes(write_archive(members))
    assert read_members(library.read_bytes()) == members
    assert subprocess.run([ar, "t", library], capture_output=True, text=True).stdout.split() == [n for n, _ in members]
    assert plain_name(".zig-cache/tmp/0123abcd/digits_zcu.o") == "digits.o"
    assert plain_name("/tmp/x/.zig-cache/parts/digits.unit1.o") == "digits.unit1.o"


# -- the caller's arena ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    """digits for the host: with its own arena, and twice with the caller's (two names: two
    models sharing one arena)."""
    root = tmp_path_factory.mktemp("host")
    own = load_compiled(compile_model(DIGITS, root / "own", CompileOptions(name="digits")))
    callers = [compile_model(DIGITS, root / name, CompileOptions(name=name, arena="caller")) for name in ("first", "second")]
    header = callers[0].header_path.read_text()
    return own, [load_compiled(result) for result in callers], header


def images(count: int) -> np.ndarray:
    data = np.load(ROOT / "examples" / "digits" / "digits_heldout.npz")["images"][:count]
    return data.astype(np.float32).reshape(count, 1, 1, 8, 8)


def hasattr_symbol(library: ctypes.CDLL, name: str) -> bool:
    try:
        getattr(library, name)
    except AttributeError:
        return False
    return True


def test_caller_arena_is_bit_identical_and_shared(host):
    own, (first, second), header = host
    size = ctypes.c_size_t.in_dll(first._library, "first_arena_size").value
    assert size > 0 and f"#define first_ARENA_SIZE {size}u" in header and "#define first_ARENA_CALLER 1" in header
    assert not hasattr_symbol(first._library, "first_scratch")  # no .bss arena of its own
    align = ctypes.c_size_t.in_dll(first._library, "first_arena_align").value  # the target's: 64 on the host
    shared = np.zeros(size + align, np.uint8)
    start = (-shared.ctypes.data) % align
    arena = shared[start : start + size]
    assert first.set_arena(arena) == 0 and second.set_arena(arena) == 0
    for image in images(8):  # the two models run in turn over the same bytes
        expected = own(image)[0].tobytes()
        assert first(image)[0].tobytes() == expected
        assert second(image)[0].tobytes() == expected


def test_a_bad_arena_is_refused_with_its_status(host):
    _, (first, _), _ = host
    library = first._library
    predict = library.first_predict
    predict.restype = ctypes.c_int32
    size = ctypes.c_size_t.in_dll(library, "first_arena_size").value
    align = ctypes.c_size_t.in_dll(library, "first_arena_align").value
    buffer = np.zeros(size + align, np.uint8)
    start = (-buffer.ctypes.data) % align
    image, out = images(1)[0], np.full(10, 7.0, np.float32)

    def call() -> int:
        return predict(ctypes.c_void_p(image.ctypes.data), ctypes.c_void_p(out.ctypes.data))

    assert first.set_arena(buffer[start : start + size - 1]) == Status.BAD_ARENA  # one byte short
    assert call() == Status.BAD_ARENA and (out == 7.0).all()  # nothing written
    assert first.set_arena(buffer[start + 4 : start + 4 + size]) == Status.BAD_ARENA  # misaligned
    assert first.set_arena(None) == Status.BAD_ARENA
    assert call() == Status.BAD_ARENA
    assert first.set_arena(buffer[start : start + size]) == 0
    assert call() == 0 and not (out == 7.0).all()


def test_caller_arena_with_split_scratch_is_refused():
    with pytest.raises(ZantError, match="cannot be split over a board's memories"):
        zant.compile(DIGITS, board="mps3-an547", arena="caller")


def test_the_flags_table_of_the_docs_is_the_targets():
    """docs/c-abi-and-linking.md's table of flags and float ABIs, row by row, against c_abi."""
    import re

    from zant.backend.c_abi import FLOAT_ABIS, is_arm
    from zant.targets import RECORDS

    page = (ROOT / "docs" / "c-abi-and-linking.md").read_text()
    rows = dict(re.findall(r"^\| `([\w-]+)` \| `([^`]+)` \| [^|]+ \|$", page, re.M))
    mcus = [t for t in RECORDS if t != "host"]
    assert sorted(rows) == sorted(mcus)
    for target in mcus:
        assert rows[target] == " ".join(gcc_flags(target)), target
        abis = re.search(rf"^\| `{target}` \| `[^`]+` \| ([^|]+) \|$", page, re.M).group(1)
        allowed = [a for a in FLOAT_ABIS if is_arm(target) and (a == "soft" or default_float_abi(target) == "hard")]
        assert abis.strip() == (", ".join(allowed) if allowed else "its one ABI (single-float, `ilp32f`)"), target


def test_caller_arena_firmware_under_qemu_is_bit_identical(tmp_path):
    """The M4 image zant builds hands a caller's-arena model its one arena (`zant_arena`): the
    probabilities are those of the image with the library's own arena."""
    from zant.backend.boards import BOARDS
    from zant.backend.firmware import qemu_missing

    missing = qemu_missing(BOARDS["mps2-an386"])
    if missing:
        pytest.skip(missing)
    image = images(1)[0]
    runs = {}
    for arena in ("library", "caller"):
        model = zant.compile(DIGITS, target="cortex-m4", name="digits", optimize="ReleaseSmall", arena=arena,
                             inputs={"image": image}, output_dir=tmp_path / arena)
        runs[arena] = model.run_firmware().outputs["probabilities"]
    assert "digits_set_arena(&zant_arena" in (tmp_path / "caller" / "digits.firmware.zig").read_text()
    assert "digits_set_arena" not in (tmp_path / "library" / "digits.firmware.zig").read_text()
    assert runs["caller"].tobytes() == runs["library"].tobytes()
