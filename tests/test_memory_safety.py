"""Hostile index values against guard pages (`zant.tools.memory_safety`): no input value makes the
generated code touch memory outside its buffers, in any build mode, on the host or as firmware."""

from __future__ import annotations

import numpy as np
import pytest

from zant.backend.boards import BOARDS
from zant.backend.build import OPTIMIZE_MODES, build_zig
from zant.backend.firmware import qemu_missing
from zant.dialects.abi import Status
from zant.tools import memory_safety
from zant.tools.memory_safety import CASES, GuardedBuffers, call_guarded

pytest.importorskip("onnxruntime")  # the valid calls' reference

OVERRUN = """
export fn bad_predict(input: [*]const u8, output: [*]u8) i32 {
    output[0] = input[1]; // the input holds one byte
    return 0;
}
export fn wide_predict(input: [*]const u8, output: [*]u8) i32 {
    output[1] = input[0]; // the output holds one byte
    return 0;
}
export fn under_predict(input: [*]const u8, output: [*]u8) i32 {
    const before: [*]const u8 = @ptrFromInt(@intFromPtr(input) - 1);
    output[0] = before[0];
    return 0;
}
export fn good_predict(input: [*]const u8, output: [*]u8) i32 {
    output[0] = input[0] + 1;
    return 0;
}
"""


@pytest.fixture(scope="module")
def overrun_library(tmp_path_factory):
    folder = tmp_path_factory.mktemp("overrun")
    source = folder / "overrun.zig"
    source.write_text(OVERRUN)
    return build_zig(source, folder / "liboverrun.so", "host", "ReleaseFast", "shared")


@pytest.mark.parametrize(
    "name, placement, crash",
    [
        ("bad", "end", "SIGSEGV"),  # one byte past the input: the guard page after it
        ("wide", "end", "SIGSEGV"),  # one byte past the output
        ("under", "start", "SIGSEGV"),  # one byte before the input: the guard page before it
        ("bad", "start", None),  # past the input but inside its page: not caught that way round
        ("good", "end", None),
        ("good", "start", None),
    ],
)
def test_the_guard_pages_catch_one_byte_over(overrun_library, name, placement, crash):
    """The harness itself: an access one byte outside a buffer faults on the side it is placed."""
    outcome = call_guarded(overrun_library, name, [np.array([41], np.uint8)], [1], placement)
    assert outcome.crash == crash
    if name == "good":
        assert outcome.status == 0 and outcome.outputs == [bytes([42])]


def test_guarded_buffers_sit_against_a_page():
    import mmap

    for placement in ("start", "end"):
        address, view = GuardedBuffers(placement).place(b"abc")
        assert bytes(view) == b"abc"
        edge = address if placement == "start" else address + 3
        assert edge % mmap.PAGESIZE == 0


def test_every_case_on_the_host():
    """Every op whose addresses come from the data, valid and hostile indices, ReleaseFast (the
    default mode), each call with its buffers against guard pages on both sides."""
    calls, failures = memory_safety.run(list(CASES), ["ReleaseFast"], ["host"], random=4, seed=1)
    assert calls > 200 and not failures, "\n".join(f"{f.case} [{f.target} {f.mode}]: {f.what}" for f in failures)


def test_hostile_values_are_out_of_range():
    rng = np.random.default_rng(0)
    for case in CASES.values():
        if case.encoded is not None:  # hostile bytes, not indices (test_corrupt_jpegs_...)
            continue
        low = -case.extent if case.negative else 0
        values = memory_safety.hostile_values(case, 20, rng)
        assert values and all(not low <= v < case.extent for v in values)
        assert np.iinfo(case.dtype).max in values and np.iinfo(case.dtype).min in values


def test_a_hostile_gather_as_cortex_m4_firmware():
    """The issue's Gather: an index of 4 and one of 2^63 - 1 as firmware return the status; no fault."""
    missing = qemu_missing(BOARDS["mps2-an386"])
    if missing:
        pytest.skip(missing)
    calls, failures = memory_safety.run(["Gather axis 0"], ["ReleaseFast"], ["cortex-m4"], random=0, seed=2)
    assert calls == 3 and not failures, failures


def test_corrupt_jpegs_are_refused_or_decoded_as_the_reference():
    """ImageDecoder's JPEG case: the hostile streams are refused (truncated, lengths past the end,
    an oversized Huffman table, 4 components ...) and randomly corrupted ones refused or decoded
    as image_reference.decode_jpeg does; both kinds occur."""
    made = memory_safety.jpeg_trials(np.random.default_rng(5), 40)
    assert {t.status for t in made[1:9]} == {Status.OUTPUT_SIZE}
    assert {t.status for t in made[9:]} == {0, Status.OUTPUT_SIZE}
    calls, failures = memory_safety.run(["ImageDecoder JPEG"], ["ReleaseSafe"], ["host"], random=40, seed=5)
    assert calls == 2 * len(made) and not failures, failures


def test_corrupt_pngs_are_refused_or_decoded_as_the_reference():
    """ImageDecoder's PNG case: truncations, a length past the end, a bad CRC, a stored block longer
    than the rows and a back reference before the first byte are refused; zlib data corrupted
    under a right CRC give what image_reference.decode_png (Python's zlib) gives."""
    made = memory_safety.png_trials(np.random.default_rng(6), 30)
    assert {t.status for t in made[1:8]} == {Status.OUTPUT_SIZE}
    calls, failures = memory_safety.run(["ImageDecoder PNG"], ["ReleaseSafe"], ["host"], random=30, seed=6)
    assert calls == 2 * len(made) and not failures, failures


def test_corrupt_tiffs_are_refused_or_read_as_the_reference():
    """ImageDecoder's TIFF case: a truncated header, a short strip, an IFD or strip past the end,
    65,535 entries, a strip count of 2^32 - 1 are refused; corrupted headers give what image_reference.decode_tiff
    gives."""
    made = memory_safety.tiff_trials(np.random.default_rng(7), 30)
    assert {t.status for t in made[1:7]} == {Status.OUTPUT_SIZE}
    calls, failures = memory_safety.run(["ImageDecoder TIFF"], ["ReleaseSafe"], ["host"], random=30, seed=7)
    assert calls == 2 * len(made) and not failures, failures


def test_corrupt_jp2s_are_refused_or_decoded_as_the_reference():
    """ImageDecoder's JPEG 2000 case: cuts (box header, main header, packet header, code block, end
    marker), a box, a segment and a tile-part longer than the bytes, one-pixel tiles, an absurd
    first packet header and 0xFF bytes are refused; randomly corrupted files are refused or decoded
    as image_reference.decode_jp2 does; both kinds occur."""
    made = memory_safety.jp2_trials(np.random.default_rng(8), 30)
    assert {t.status for t in made[1:12]} == {Status.OUTPUT_SIZE}
    assert {t.status for t in made[12:]} == {0, Status.OUTPUT_SIZE}
    calls, failures = memory_safety.run(["ImageDecoder JPEG 2000"], ["ReleaseSafe"], ["host"], random=30, seed=8)
    assert calls == 2 * len(made) and not failures, failures


def test_corrupt_webps_are_refused_or_decoded_as_the_reference():
    """ImageDecoder's WebP case: cuts (RIFF header, frame header, first partition, tokens, with the
    sizes rewritten), RIFF, chunk and first-partition sizes past the end, a token partition of
    0xFF bytes and 0xFF bytes after the frame header are refused; randomly corrupted files are
    refused or decoded as image_reference.decode_webp does; both kinds occur."""
    made = memory_safety.webp_trials(np.random.default_rng(9), 30)
    assert {t.status for t in made[1:10]} == {Status.OUTPUT_SIZE}
    assert {t.status for t in made[10:]} == {0, Status.OUTPUT_SIZE}
    calls, failures = memory_safety.run(["ImageDecoder WebP"], ["ReleaseSafe"], ["host"], random=30, seed=9)
    assert calls == 2 * len(made) and not failures, failures


def test_a_truncated_jpeg_as_cortex_m4_firmware():
    """Three truncated JPEGs as guarded Cortex-M4 firmware return STATUS_OUTPUT_SIZE; no fault."""
    missing = qemu_missing(BOARDS["mps2-an386"])
    if missing:
        pytest.skip(missing)
    calls, failures = memory_safety.run(["ImageDecoder JPEG"], ["ReleaseSafe"], ["cortex-m4"], random=0, seed=2)
    assert calls == 3 and not failures, failures


@pytest.mark.slow
def test_every_case_every_mode_host_and_firmware():
    """The full sweep: every case in every build mode, on the host (guard pages) and as Cortex-M4
    firmware under QEMU."""
    calls, failures = memory_safety.run(list(CASES), list(OPTIMIZE_MODES), ["host", "cortex-m4"], random=16, seed=3)
    assert not failures, "\n".join(f"{f.case} [{f.target} {f.mode}]: {f.what}" for f in failures)


# -- the C API ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def add_library(tmp_path_factory):
    import onnx
    from onnx import TensorProto, helper

    from zant.driver import CompileOptions, compile_model

    folder = tmp_path_factory.mktemp("capi")
    value = helper.make_tensor_value_info
    graph = helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["y"])], "add",
        [value("a", TensorProto.FLOAT, [2, 3]), value("b", TensorProto.FLOAT, [2, 3])], [value("y", TensorProto.FLOAT, [2, 3])],
    )
    onnx.save(helper.make_model(graph), folder / "add.onnx")
    result = compile_model(folder / "add.onnx", folder, CompileOptions(name="add"))
    assert "int32_t add_predict_sized(const float *input_a, size_t input_a_bytes" in result.header_path.read_text()
    return result.library_path


def _entry(library, name, sized: bool):
    import ctypes

    function = getattr(ctypes.CDLL(str(library)), name)
    function.restype = ctypes.c_int32
    pointer, size = ctypes.c_void_p, ctypes.c_size_t
    function.argtypes = [pointer, size] * 3 if sized else [pointer] * 3
    return function


def test_null_pointers_return_a_status(add_library):
    """`NAME_predict(NULL, …)` returns NAME_STATUS_BAD_BUFFER (7) and writes nothing (it crashed)."""
    predict = _entry(add_library, "add_predict", sized=False)
    a = np.ones((2, 3), np.float32)
    y = np.full((2, 3), 7.5, np.float32)
    for arguments in [(None, a.ctypes.data, y.ctypes.data), (a.ctypes.data, a.ctypes.data, None)]:
        assert predict(*arguments) == 7
    assert (y == 7.5).all()
    assert predict(a.ctypes.data, a.ctypes.data, y.ctypes.data) == 0 and (y == 2).all()


def _sized_call(library: str, sizes: list[int], placement: str, queue):
    """In a child: three buffers of `sizes` bytes against guard pages, through NAME_predict_sized."""
    buffers = GuardedBuffers(placement)
    placed = [buffers.place(bytes(size)) for size in sizes]
    sized = _entry(library, "add_predict_sized", sized=True)
    arguments = [x for (address, _), size in zip(placed, sizes) for x in (address, size)]
    queue.put(sized(*arguments))


@pytest.mark.parametrize("sizes, status", [([24, 24, 24], 0), ([20, 24, 24], 7), ([24, 24, 16], 7), ([24, 24, 28], 7)])
def test_sized_entry_refuses_a_short_buffer(add_library, sizes, status):
    """A short input or output against a protected page: the sized entry point refuses it (status 7)
    where the unsized one would read or write past it."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_sized_call, args=(str(add_library), sizes, "end", queue))
    child.start()
    child.join(60)
    assert child.exitcode == 0
    assert queue.get(timeout=5) == status


# -- guarded firmware images ------------------------------------------------------------------------

OVERRUN_MODEL = """
var model_scratch: [64]u8 align(16) = undefined;
const model_constants: [64]u8 align(16) = @splat(1);
export fn model_predict(input: [*]const u8, output: [*]u8) callconv(.c) i32 {
    const at: usize = input[1]; // 0, read at run time: Zig refuses a constant index out of bounds
    switch (input[0]) {
        0 => output[0] = input[32 + at], // one byte past the input
        1 => output[4 + at] = 1, // past the output
        2 => @as(*volatile u8, &model_scratch[64 + at]).* = 1, // past the scratch arena
        3 => output[0] = @as(*const volatile u8, &model_constants[64 + at]).*, // past the constants
        4 => output[0] = @as(*const volatile u8, @ptrFromInt(@intFromPtr(input) - 1 - at)).*, // before the input
        else => { // inside every buffer
            @as(*volatile u8, &model_scratch[63 - at]).* = 1;
            output[3] = model_constants[63 - at] + input[31];
        },
    }
    return 0;
}
"""


@pytest.mark.parametrize("board_name", ["mps2-an386", "mps3-an547", "mps2-an505"])
@pytest.mark.parametrize("case, fault", [(0, True), (1, True), (2, True), (3, True), (4, True), (5, False)])
def test_the_mpu_guards_a_firmware_image(tmp_path, case, fault, board_name):
    """A guarded Cortex-M4 (PMSAv7), M55 or M33 (PMSAv8) image: one byte past (or before) an input,
    an output, the scratch or the constant arena is a MemManage fault; accesses inside them are
    not."""
    from dataclasses import dataclass

    from zant.backend.firmware import ImageModel, build_firmware, run_models, write_image

    board = BOARDS[board_name]
    missing = qemu_missing(board)
    if missing:
        pytest.skip(missing)

    @dataclass
    class Tensor:
        name: str
        shape: list
        dtype: str

    (tmp_path / "model.zig").write_text(OVERRUN_MODEL)
    image = ImageModel("model", [Tensor("x", [32], "uint8")], [Tensor("y", [4], "uint8")],
                       [np.array([case] + [0] * 31, np.uint8)])
    root = write_image(tmp_path, "image", [image], board, guard=True)
    elf = build_firmware(root, "image", board, "ReleaseFast", guard=True)
    assert not memory_safety._unguarded(elf)
    run = run_models(elf, board, [image])
    assert (run.errors.get("model") == "fault") == fault, run.stdout
    if not fault:
        assert run.outputs["model"][0].tolist() == [0, 0, 0, 1]
