"""The output folder of `zant compile` in a user's firmware build (issue 33 item 3): the commands
of docs/firmware-integration.md, read from the page's fenced blocks marked `<!-- test: NAME -->`,
run as written in a copy of the examples, with the real tools (Debian's arm-none-eabi-gcc and
newlib, CMake, make, the pinned Zig) and the images under qemu-system-arm. Each image prints the
digits model's ten probabilities for one fixed image; they must be the host build's (the same
model and image, called through `zant.runtime`) and the class their argmax."""

from __future__ import annotations

import re
import shutil
import subprocess
import zlib
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "firmware-integration.md"
MODEL = ROOT / "examples" / "digits" / "digits_cnn.onnx"

_BLOCK = re.compile(r"<!-- test: ([\w-]+) -->\n```sh\n(.*?)\n```", re.DOTALL)
_PROBABILITY = re.compile(r"^probabilities\[(\d+)\] = 0x([0-9a-f]{8})$", re.MULTILINE)
_CLASS = re.compile(r"^class (\d+)$", re.MULTILINE)


def page_blocks() -> dict[str, str]:
    """The page's tested command blocks, by name."""
    blocks = dict(_BLOCK.findall(PAGE.read_text(encoding="utf-8")))
    assert blocks, f"no <!-- test: NAME --> blocks in {PAGE}"
    return blocks


def image() -> np.ndarray:
    """The image main.c and main.zig feed the model: pixel i is (i * 7 % 17) / 16."""
    return (np.arange(64) * 7 % 17 / 16).astype(np.float32).reshape(1, 1, 8, 8)


def run_block(workspace: Path, name: str, timeout: float = 600) -> str:
    """Run the page's block `name` with bash in `workspace` (a copy of the repository's
    examples); its output, or a failure showing it."""
    script = page_blocks()[name]
    result = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", script], cwd=workspace, capture_output=True, text=True,
        timeout=timeout, stdin=subprocess.DEVNULL,
    )
    if result.returncode != 0:
        pytest.fail(f"block '{name}' failed ({result.returncode}):\n{script}\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}")
    return result.stdout


def printed(output: str) -> tuple[np.ndarray, int]:
    """The probabilities (from their bits) and the class an image printed."""
    found = {int(i): int(bits, 16) for i, bits in _PROBABILITY.findall(output)}
    assert sorted(found) == list(range(10)), f"not ten probabilities in:\n{output}"
    values = np.array([found[i] for i in range(10)], dtype=np.uint32).view(np.float32)
    classes = _CLASS.findall(output)
    assert len(classes) == 1, f"no class line in:\n{output}"
    return values, int(classes[0])


def needs(*tools: str) -> None:
    missing = [tool for tool in tools if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed (Debian: gcc-arm-none-eabi, cmake, make, qemu-system-arm)")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    """A folder laid out as the repository's root for the page's commands: the examples it uses
    copied in, and the Cortex-M4 model compiled into build/digits by the page's first block."""
    root = tmp_path_factory.mktemp("firmware")
    for example in ("firmware-c", "firmware-zig"):
        shutil.copytree(ROOT / "examples" / example, root / "examples" / example,
                        ignore=shutil.ignore_patterns("zig-out", ".zig-cache", "build"))
    (root / "examples" / "digits").mkdir()
    shutil.copy(MODEL, root / "examples" / "digits")
    run_block(root, "compile")
    return root


@pytest.fixture(scope="module")
def host_outputs(tmp_path_factory) -> np.ndarray:
    """The host build's probabilities for the fixed image."""
    from zant.driver import CompileOptions, compile_model
    from zant.runtime import load_compiled

    result = compile_model(MODEL, tmp_path_factory.mktemp("host"), CompileOptions(name="digits"))
    (probabilities,) = load_compiled(result)(image())
    return probabilities.reshape(-1)


def check_image(output: str, host: np.ndarray) -> None:
    values, best = printed(output)
    np.testing.assert_allclose(values, host, rtol=1e-5, atol=1e-7)
    assert best == int(np.argmax(host)) == int(np.argmax(values))


def test_page_blocks_are_the_examples_commands():
    blocks = page_blocks()
    assert {"compile", "cmake", "subdirectory", "make", "zig", "softfp", "arena", "host"} <= set(blocks)
    for name in ("cmake", "subdirectory", "make", "zig", "softfp", "arena"):
        assert "qemu-system-arm -M mps2-an386" in blocks[name], name


def test_package_files_state_the_headers_flags(workspace):
    """The CMake config, the make fragment and the Zig package carry the options the header
    states for its callers, and the Zig package's fingerprint is one Zig accepts."""
    folder = workspace / "build" / "digits"
    header = (folder / "digits.h").read_text()
    flags = re.search(r"Compile the callers with: (.*)", header).group(1).strip()
    assert flags.startswith("-mcpu=cortex-m4 -mthumb -mfloat-abi=hard")
    assert f"digits_CFLAGS := {flags} -I$(digits_DIR)" in (folder / "digits.mk").read_text()
    config = (folder / "digitsConfig.cmake").read_text()
    assert f'INTERFACE_LINK_OPTIONS "{flags.replace(" ", ";")}"' in config
    assert "add_library(zant::digits STATIC IMPORTED" in config
    zon = (folder / "build.zig.zon").read_text()
    fingerprint = int(re.search(r"\.fingerprint = 0x([0-9a-f]{16})", zon).group(1), 16)
    assert fingerprint >> 32 == zlib.crc32(b"digits")
    assert '"digits.zig"' in zon and '"digits.weights.bin"' in zon


def test_cmake_find_package(workspace, host_outputs):
    needs("arm-none-eabi-gcc", "cmake", "qemu-system-arm")
    check_image(run_block(workspace, "cmake"), host_outputs)


def test_cmake_add_subdirectory(workspace, host_outputs):
    needs("arm-none-eabi-gcc", "cmake", "qemu-system-arm")
    check_image(run_block(workspace, "subdirectory"), host_outputs)


def test_make(workspace, host_outputs):
    needs("arm-none-eabi-gcc", "make", "qemu-system-arm")
    check_image(run_block(workspace, "make"), host_outputs)


def test_cmake_softfp(workspace, host_outputs):
    needs("arm-none-eabi-gcc", "cmake", "qemu-system-arm")
    output = run_block(workspace, "softfp")
    header = (workspace / "build" / "digits-softfp" / "digits.h").read_text()
    assert "-mfloat-abi=softfp" in header
    check_image(output, host_outputs)


def test_cmake_callers_arena(workspace, host_outputs):
    needs("arm-none-eabi-gcc", "cmake", "qemu-system-arm")
    output = run_block(workspace, "arena")
    header = (workspace / "build" / "digits-arena" / "digits.h").read_text()
    size = int(re.search(r"#define digits_ARENA_SIZE (\d+)u", header).group(1))
    assert size > 0 and "#define digits_ARENA_CALLER 1" in header
    assert f"arena: {size} bytes of the firmware's" in output  # main.c took the #if branch
    check_image(output, host_outputs)


def test_host_cmake(workspace, host_outputs):
    needs("cmake", "cc")
    script = page_blocks()["host"]
    *build, run = script.splitlines()
    subprocess.run(["bash", "-e", "-c", "\n".join(build)], cwd=workspace, check=True, capture_output=True)
    result = subprocess.run(run.split(), cwd=workspace, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    check_image(result.stdout, host_outputs)


@pytest.mark.slow  # with an empty Zig cache: ~3 min of CPU (the build runner, compiler_rt for the core); warm: 13 s
def test_zig_package(workspace, host_outputs):
    needs("qemu-system-arm")
    check_image(run_block(workspace, "zig", timeout=1200), host_outputs)
