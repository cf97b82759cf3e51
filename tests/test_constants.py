"""The constant arena as a binary blob beside the generated file (`zant compile --constants`).

* embedded (default): `NAME.weights.bin`, read by `@embedFile` into read-only data;
* staged: the same read-only blob, copied into a RAM arena by `NAME_init()`;
* external: the firmware places `NAME.weights.bin` and passes its address to
  `NAME_init(constants)`; a null or misaligned address is refused.

`NAME_predict` before `NAME_init` returns `NAME_STATUS_NOT_INITIALIZED` (1). Numerics on the
host and as a Cortex-M4 firmware image under QEMU, against the ONNX reference.
"""

from __future__ import annotations

import ctypes
import re

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from zant.backend.boards import BOARDS
from zant.backend.firmware import qemu_missing, run_firmware
from zant.driver import CompileOptions, compile_model
from zant.errors import ZantError
from zant.runtime import load_compiled


def conv_model(channels: int = 8, size: int = 6, seed: int = 0) -> onnx.ModelProto:
    """Conv 3×3 → Clip(0, 6) → Conv 1×1 → Add of a constant: a few weight tensors of odd sizes."""
    rng = np.random.default_rng(seed)

    def const(name: str, *shape: int) -> onnx.TensorProto:
        return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)

    nodes = [
        helper.make_node("Conv", ["x", "w0", "b0"], ["c0"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Clip", ["c0", "low", "high"], ["r0"]),
        helper.make_node("Conv", ["r0", "w1"], ["c1"], kernel_shape=[1, 1]),
        helper.make_node("Add", ["c1", "shift"], ["y"]),
    ]
    initializers = [
        const("w0", channels, 3, 3, 3), const("b0", channels), const("w1", 5, channels, 1, 1),
        const("shift", 5, 1, 1),
        numpy_helper.from_array(np.array(0.0, np.float32), "low"),
        numpy_helper.from_array(np.array(6.0, np.float32), "high"),
    ]
    graph = helper.make_graph(
        nodes, "conv_model",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5, size, size])],
        initializers,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@pytest.fixture
def model_path(tmp_path):
    path = tmp_path / "conv.onnx"
    onnx.save(conv_model(), path)
    return path


def feeds_and_expected(path) -> tuple[np.ndarray, np.ndarray]:
    x = np.random.default_rng(1).standard_normal((1, 3, 6, 6)).astype(np.float32)
    (expected,) = ReferenceEvaluator(str(path)).run(None, {"x": x})
    return x, expected


def aligned_copy(data: bytes, alignment: int, misalign: int = 0) -> tuple[np.ndarray, int]:
    """`data` in a numpy buffer at an address `misalign` bytes past a multiple of `alignment`;
    the buffer (keep it alive) and that address."""
    buffer = np.zeros(len(data) + 2 * alignment, np.uint8)
    start = (-buffer.ctypes.data) % alignment + misalign
    buffer[start : start + len(data)] = np.frombuffer(data, np.uint8)
    return buffer, buffer.ctypes.data + start


@pytest.mark.parametrize("mode", ["embedded", "staged", "external"])
def test_constants_on_the_host(tmp_path, model_path, mode):
    result = compile_model(model_path, tmp_path / mode, CompileOptions(name="m", constants=mode))
    blob = (tmp_path / mode / "m.weights.bin").read_bytes()
    zig = result.zig_path.read_text()
    header = result.header_path.read_text()
    assert len(blob) == result.plan["arenas"][1]["size"] > 4 * (8 * 27 + 8 + 40 + 5)
    assert "m.weights.bin" in result.plan["files"] and result.plan["constants"] == mode
    assert not re.search(r"0x[0-9a-f]{2}, 0x[0-9a-f]{2}", zig)  # no bytes as Zig literals
    model = load_compiled(result)
    x, expected = feeds_and_expected(model_path)
    library = model._library
    if mode == "embedded":
        assert '@embedFile("m.weights.bin")' in zig and "m_init" not in header
    else:
        assert "#define m_STATUS_NOT_INITIALIZED 1" in header
        out = np.zeros(expected.shape, np.float32)
        assert library.m_predict(ctypes.c_void_p(x.ctypes.data), ctypes.c_void_p(out.ctypes.data)) == 1
        assert not out.any()  # nothing ran
    if mode == "staged":
        assert "int32_t m_init(void);" in header and '@embedFile("m.weights.bin")' in zig
        assert library.m_init() == 0
    if mode == "external":
        assert "int32_t m_init(const void *constants);" in header and "@embedFile" not in zig
        alignment = result.plan["arenas"][1]["alignment"]
        keep, misaligned = aligned_copy(blob, alignment, misalign=4)
        assert library.m_init(ctypes.c_void_p(misaligned)) == 2
        assert library.m_init(ctypes.c_void_p(None)) == 2
        keep, address = aligned_copy(blob, alignment)
        assert library.m_init(ctypes.c_void_p(address)) == 0
    (got,) = model(x)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    if mode == "external":  # the model reads the blob where the caller put it
        keep[:] = 0
        (zeros,) = model(x)
        assert not np.allclose(zeros, expected)


@pytest.mark.parametrize("mode", ["embedded", "staged", "external"])
def test_constants_in_a_firmware_image(tmp_path, model_path, mode):
    missing = qemu_missing(BOARDS["mps2-an386"])
    if missing:
        pytest.skip(missing)
    x, expected = feeds_and_expected(model_path)
    result = compile_model(
        model_path, tmp_path,
        CompileOptions(name="m", target="cortex-m4", constants=mode, firmware=True, inputs={"x": x}),
    )
    run = run_firmware(result.firmware_path, result.board, result.outputs)
    np.testing.assert_allclose(run.outputs[0], expected, rtol=1e-5, atol=1e-5)
    root = (tmp_path / "m.firmware.zig").read_text()
    assert ("m_init(" in root) == (mode != "embedded")


def test_emitted_zig_of_a_10_megabyte_model_is_small(tmp_path):
    # Two Gemms with 2.6 M float weights (10.5 MB): the weights go to the blob, not the text.
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((1024, 2048)).astype(np.float32)
    w1 = rng.standard_normal((2048, 256)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w0"], ["h"]), helper.make_node("MatMul", ["h", "w1"], ["y"])],
        "big",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1024])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 256])],
        [numpy_helper.from_array(w0, "w0"), numpy_helper.from_array(w1, "w1")],
    )
    path = tmp_path / "big.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    # The Cortex-M4 keeps the weights as given (the host repacks a constant MatMul B into tiles).
    result = compile_model(path, tmp_path / "out", CompileOptions(name="big", target="cortex-m4", build=False))
    blob = (tmp_path / "out" / "big.weights.bin").read_bytes()
    assert len(blob) >= w0.nbytes + w1.nbytes >= 10 * 2**20
    assert result.zig_path.stat().st_size < 2**20
    offsets = {t["name"]: t["offset"] for t in result.plan["tensors"] if t["role"] == "constant"}
    assert blob[offsets["w0"] : offsets["w0"] + w0.nbytes] == w0.tobytes()  # little-endian, as laid out


def test_unknown_constants_mode_is_a_user_error(tmp_path, model_path):
    with pytest.raises(ZantError, match="unknown constants mode 'flash'"):
        compile_model(model_path, tmp_path, CompileOptions(constants="flash", build=False))


def test_cli_constants_flag(tmp_path, model_path, capsys):
    from zant.tools import cli

    out = tmp_path / "out"
    assert cli.main(["compile", str(model_path), "-o", str(out), "--name", "m", "--constants", "external", "--no-build"]) == 0
    assert "int32_t m_init(const void *constants);" in (out / "m.h").read_text()
    assert sorted(p.name for p in out.iterdir()) == ["m.h", "m.plan.json", "m.weights.bin", "m.zig"]
    with pytest.raises(SystemExit):
        cli.main(["compile", str(model_path), "-o", str(out), "--constants", "rom"])
    assert "invalid choice: 'rom'" in capsys.readouterr().err


@pytest.mark.parametrize("mode", ["staged", "external"])
def test_a_model_without_constants_needs_init_all_the_same(tmp_path, mode):
    graph = helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["y"])], "add",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [3]) for n in "ab"],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])],
    )
    path = tmp_path / "add.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    result = compile_model(path, tmp_path / "out", CompileOptions(name="m", constants=mode))
    # An external arena's (empty) blob is written all the same, for the firmware to place.
    assert ("m.weights.bin" in result.plan["files"]) == (mode == "external")
    assert (tmp_path / "out" / "m.weights.bin").exists() == (mode == "external")
    model = load_compiled(result)
    library = model._library
    assert (library.m_init(ctypes.c_void_p(None)) if mode == "external" else library.m_init()) == 0
    a = np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(model(a, a)[0], 2 * a)


def matmul_model(path, rows: int = 64, columns: int = 80) -> None:
    """y = x @ w with `rows * columns` float weights (64 × 80: 20,480 B)."""
    w = np.random.default_rng(0).standard_normal((rows, columns)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])], "matmul",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, rows])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, columns])],
        [numpy_helper.from_array(w, "w")],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)


@pytest.mark.parametrize(
    "mode, memory, source", [("embedded", "flash", "flash"), ("staged", "ram", "flash"), ("external", "external", "external")]
)
def test_the_plan_records_where_the_constants_live(tmp_path, model_path, mode, memory, source):
    # The mode is plan-arenas' decision on the IR; the plan JSON, header and RAM count read it.
    result = compile_model(model_path, tmp_path, CompileOptions(name="m", constants=mode, build=False))
    plan = result.plan
    (region,) = [r for r in plan["regions"] if r["role"] == "constant"]
    (arena,) = [a for a in plan["arenas"] if a["role"] == "constant"]
    assert (region["memory"], region["source_memory"]) == (arena["memory"], arena["source_memory"]) == (memory, source)
    assert plan["constants"] == mode
    assert {t["memory"] for t in plan["tensors"] if t["role"] == "constant"} == {memory}
    scratch = sum(a["size"] for a in plan["arenas"] if a["role"] == "scratch")
    assert plan["ram_arena_bytes"] == scratch + (arena["size"] if mode == "staged" else 0)
    header = result.header_path.read_text()
    assert f"/* constant in {memory}{' from flash' if mode == 'staged' else ''}: {arena['size']} B" in header


def test_the_plan_hash_tells_the_modes_apart(tmp_path, model_path):
    hashes = {
        mode: compile_model(model_path, tmp_path / mode, CompileOptions(constants=mode, build=False)).plan["plan_hash"]
        for mode in ("embedded", "staged", "external")
    }
    assert len(set(hashes.values())) == 3


def test_a_given_pipeline_must_plan_the_mode_asked_for(tmp_path, model_path):
    from zant.pipelines import pipeline_for

    staged = pipeline_for("host", constants="staged")
    assert "plan-arenas{constants=staged}" in staged
    result = compile_model(model_path, tmp_path / "a", CompileOptions(pipeline=staged, build=False))
    assert result.plan["constants"] == "staged"  # no --constants: as the pipeline planned it
    with pytest.raises(ZantError, match=r"^--constants external, but the pipeline placed the constant arena "
                       r"staged: give its plan-arenas constants=external$"):
        compile_model(model_path, tmp_path / "b", CompileOptions(pipeline=staged, constants="external", build=False))


def test_a_staged_arena_counts_in_the_boards_ram(tmp_path):
    # 20 KB of weights fit the micro:bit's 256 KB flash read in place, but their staged copy does
    # not fit its 16 KB of RAM: one line naming the arena and the sizes, before any build.
    from zant.backend.boards import MIN_STACK
    from zant.backend.limits import check_board_memory

    path = tmp_path / "matmul.onnx"
    matmul_model(path)
    embedded = compile_model(path, tmp_path / "e", CompileOptions(target="cortex-m0plus", build=False))
    check_board_memory(embedded.plan, BOARDS["microbit"], MIN_STACK)
    with pytest.raises(ZantError) as error:
        compile_model(
            path, tmp_path / "s",
            CompileOptions(target="cortex-m0plus", constants="staged", firmware=True, inputs={}),
        )
    message = str(error.value)
    assert len(message.splitlines()) == 1 and "scratch arena" not in message  # no scratch here
    assert message.startswith("staged constant arena 20,480 B + outputs 320 B + stack ")
    assert message.endswith("do not fit the 16 KB (16,384 B) RAM of microbit: " f"{20_480 + 320 + MIN_STACK - 16_384:,} B over")
    assert not (tmp_path / "s").exists() or not any((tmp_path / "s").glob("*.zig"))


def test_compile_summary_counts_the_staged_copy(tmp_path, capsys):
    from zant.tools import cli

    path = tmp_path / "matmul.onnx"
    matmul_model(path)
    assert cli.main(["compile", str(path), "-o", str(tmp_path / "out"), "--constants", "staged", "--no-build"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^constant arena +20,480 bytes \(staged\)$", out, re.M)
    assert re.search(r"^arenas in RAM +20,480 bytes$", out, re.M)  # no scratch: the copy only


def test_zant_run_with_external_constants(tmp_path, model_path, capsys):
    # zant run hands the blob's address to model_init before it runs the model.
    from zant.tools import cli

    assert cli.main(["run", str(model_path), "--constants", "external"]) == 0
    errors = [float(e) for e in re.findall(r"max abs error (\S+)", capsys.readouterr().out)]
    assert len(errors) == 1 and errors[0] < 1e-5


PERSISTENT = """
builtin.module {
  func.func @main() {
    abi.arena "scratch" size 0 align 16 lower_bound 0 strategy "best" steps 6 unaligned_lower_bound 0
    abi.arena "constant" size 0 align 16 memory "flash"
    abi.arena "persistent" size 32 align 16
    %x = uop.define_global "input" 0 "x" : !uop.buffer<3xf32>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<3xf32>
    uop.range %i = 0 to 3 {
      %p = uop.gep %x[%i] : !uop.buffer<3xf32>
      %a = uop.load %p : f32
      %o = uop.gep %y[%i] : !uop.buffer<3xf32>
      uop.store %a, %o : f32
    }
    func.return
  }
}
"""


def test_a_persistent_arena_is_zeroed_by_init(tmp_path):
    # No ONNX inference op keeps state between calls, so the plan is written by hand: the
    # persistent arena is in the plan JSON's RAM, NAME_init exists to zero it (embedded constants
    # notwithstanding; the @memset: tests/filecheck/targets/zig-persistent.mlir) and NAME_predict
    # refuses to run before it.
    from xdsl.parser import Parser

    from zant.backend.build import build_zig
    from zant.backend.plan import emit_header, emit_plan_json
    from zant.backend.zig_printer import print_zig
    from zant.driver import make_context, run_pipeline

    module = Parser(make_context(), PERSISTENT).parse_module()
    run_pipeline(module, "verify-arena-plan,linearize-geps")
    header = emit_header(module, "m")
    assert "#define m_PERSISTENT_BYTES 32u" in header and "int32_t m_init(void);" in header
    plan = emit_plan_json(module, "m")
    assert {"role": "persistent", "size": 32, "alignment": 16} in plan["arenas"]
    assert plan["ram_arena_bytes"] == 32
    (tmp_path / "m.zig").write_text(print_zig(module, "m"))
    library = ctypes.CDLL(str(build_zig(tmp_path / "m.zig", tmp_path / "libm.so", "host", "ReleaseSafe", "shared")))
    x, y = np.arange(3, dtype=np.float32), np.zeros(3, np.float32)
    assert library.m_predict(ctypes.c_void_p(x.ctypes.data), ctypes.c_void_p(y.ctypes.data)) == 1
    assert not y.any()
    assert library.m_init() == 0
    assert library.m_predict(ctypes.c_void_p(x.ctypes.data), ctypes.c_void_p(y.ctypes.data)) == 0
    np.testing.assert_array_equal(y, x)
