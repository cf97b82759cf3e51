"""The Python API: `zant.compile(model, target=..., board=...)` and the `Model` it returns.

    import numpy as np
    import zant

    model = zant.compile("examples/digits/digits_cnn.onnx", target="cortex-m4")
    image = np.zeros((1, 1, 8, 8), np.float32)
    probabilities = model.predict(image=image)["probabilities"]   # on this machine
    on_m4 = model.run_firmware(image=image)                         # the image, under QEMU
    print(on_m4.outputs["probabilities"], model.cost().describe())  # instructions, cycles, ms
    print(model.plan["arenas"], model.paths)
    print(model.profile())                                          # cycles per ONNX node

`zant compile` and `zant run` go through this module (`compile_with_options`), so the command
line and a notebook build, check and run a model the same way. Inputs are numpy arrays: one
of another element type than the model's input is refused (a float64 or uint8 image for a
float32 input) unless the model was compiled with `cast_inputs=True`; a Python number or list,
which has no element type of its own, is converted. Errors in what the caller gives are
`zant.errors.ZantError`, with one line saying what is wrong.
"""

from __future__ import annotations

import ctypes
import os
import tempfile
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from zant.backend.boards import Board, board_for, find_board
from zant.driver import CompileOptions, CompileResult, compile_model, options_pipeline, pipeline_for
from zant.ir.strings import DEFAULT_STRING_CAPACITY
from zant.errors import ZantError
from zant.signature import TensorSignature, caller_outputs, check_inputs, complete_feeds

if TYPE_CHECKING:
    import onnx

    from zant.backend.firmware import Cost
    from zant.runtime import CompiledModel
    from zant.tools.profile import Profile


@dataclass
class FirmwareRun:
    """One run of the firmware image under QEMU: the outputs it printed (by output name) and
    the stack it used (the whole image's high-water mark, and its calls of the model's)."""

    outputs: dict[str, np.ndarray]
    stack_bytes: int
    model_stack_bytes: int | None


@dataclass
class ProfileReport:
    """`Model.profile()`: `data` is `zant.tools.profile.Profile` (rows per ONNX node and per
    kernel, instructions and cycles); printing it prints `zant profile`'s tables."""

    data: Profile

    def __str__(self) -> str:
        from zant.tools.profile import format_profile

        return format_profile(self.data)

    def svg(self) -> str:
        """The per-node table as a bar chart (`zant profile --svg`)."""
        from zant.tools.profile import profile_svg

        return profile_svg(self.data)


def compile(
    model: str | os.PathLike | bytes | onnx.ModelProto,
    target: str | None = None,
    board: str | os.PathLike | Board | None = None,
    *,
    name: str = "model",
    optimize: str = "ReleaseFast",
    output_dir: str | os.PathLike | None = None,
    firmware: bool | None = None,
    inputs: Mapping[str, Any] | None = None,
    cast_inputs: bool = False,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    freeze: Mapping[str, np.ndarray] | None = None,
    pipeline: str | None = None,
    plugins: Sequence[str] = (),
    constants: str | None = None,
    arena: str = "library",
    float_abi: str | None = None,
    runtime: str = "external",
    build: bool = True,
    progress: Callable[[str], None] | None = None,
    ram_budget: int | None = None,
    requant_rounding: str = "exact",
    flush_denormals: bool = False,
    string_capacity: int = DEFAULT_STRING_CAPACITY,
    sequence_capacity: int | None = None,
    image_formats: Sequence[str] = (),
) -> Model:
    """Compile an ONNX model (a path, its bytes or a `ModelProto`) as `zant compile` does.

    `target`: `host` (a shared library, the default) or an MCU core (`cortex-m4` …; default the
    core of `board`). `board`: a built-in board's name, a board file or a `Board`; for an MCU
    target the firmware image `NAME.elf` is linked too (`firmware=False`: the library only,
    the image on the first `run_firmware`), embedding `inputs` (others seeded). `output_dir`:
    where the files go (default: a temporary folder, deleted with the `Model`). The other
    options are `zant compile`'s: `optimize` (`ReleaseFast`, `ReleaseSmall`, `ReleaseSafe`,
    `Debug`), `input_shapes` (`{"x": [1, 3, 32, 32]}` for symbolic dimensions), `freeze`
    (inputs made constants), `pipeline` and `plugins` (`--pipeline`, `--load-passes`),
    `constants` (`embedded`, `staged`, `external`), `arena` (`library`: the scratch arena is the
    library's `.bss` array; `caller`: the firmware hands it one with `NAME_set_arena`, and
    `predict` does so), `float_abi` (an Arm library's: `hard`, `softfp`, `soft`; default hard
    with an FPU), `runtime` (an MCU library's memcpy, expf ...: `external`, the firmware's, listed
    in the header; `bundled`, Zig's compiler_rt in the archive), `build=False` (sources only),
    `progress` (called with each stage as it starts, e.g. `print`), `ram_budget` (the most bytes
    the scratch arena may take, `--ram-budget`: a `ZantError` names the smallest scratch reached
    and the bytes over; a firmware board's RAM is checked in any case), `requant_rounding`
    (`--requant-rounding`: `exact`, `onnxruntime`, `tflite`, `tflite-single` or `litert`, whose
    arithmetic the integer requantization reproduces; docs/int8.md), `flush_denormals`
    (`--flush-denormals`: the host's `NAME_predict` flushes subnormal floats to zero for the call;
    docs/measurements.md), `string_capacity` (`--string-capacity`: the bytes each element of a
    string graph input holds; docs/strings.md), `sequence_capacity` (`--sequence-capacity`: the most
    iterations of a Loop that builds a sequence over a run-time trip count; docs/sequences.md),
    `image_formats` (`--image-formats`: the compressed formats an ImageDecoder decodes, e.g.
    `("jpeg",)`; default all; docs/image-decoder.md).

        >>> model = zant.compile("net.onnx", target="cortex-m4", optimize="ReleaseSmall")
        >>> model.paths["library"]
        PosixPath('/tmp/zant-…/libmodel.a')
    """
    found = None if board is None else find_board(board)
    target = target or (found.target if found is not None else "host")
    if found is not None and target == "host":
        raise ZantError("a board is the board of a firmware image: give an MCU target (its core by default)")
    the_board = None if target == "host" else board_for(target, found)  # checked before compiling
    if firmware is None:
        firmware = target != "host" and build
    options = CompileOptions(
        name=name, target=target, optimize=optimize, build=build,
        input_shapes={k: list(v) for k, v in input_shapes.items()} if input_shapes else None,
        freeze=dict(freeze) if freeze else None, pipeline=pipeline, plugins=tuple(plugins),
        firmware=firmware, board=the_board if firmware else None, inputs=dict(inputs) if inputs else None,
        cast_inputs=cast_inputs, progress=progress, constants=constants, arena=arena, float_abi=float_abi,
        runtime=runtime, ram_budget=ram_budget, requant_rounding=requant_rounding,
        flush_denormals=flush_denormals, string_capacity=string_capacity, sequence_capacity=sequence_capacity,
        image_formats=tuple(image_formats),
    )
    compiled = compile_with_options(model, options, output_dir)
    compiled.board = compiled.board or the_board  # without firmware: the image is linked on the first run
    return compiled


def compile_with_options(
    model: str | os.PathLike | bytes | onnx.ModelProto,
    options: CompileOptions,
    output_dir: str | os.PathLike | None = None,
) -> Model:
    """`compile` from a `CompileOptions` (what `zant compile` and `zant run` build from their
    arguments)."""
    work = None
    if output_dir is None:
        work = tempfile.TemporaryDirectory(prefix="zant-")
        output_dir = work.name
    try:
        result = compile_model(model, output_dir, options)
    except BaseException:
        if work is not None:
            work.cleanup()
        raise
    return Model(model, result, options, Path(output_dir), work)


class Model:
    """A compiled model: its artifacts (`paths`), its plan (`plan`), and ways to run it —
    `predict` on this machine, `run_firmware` under QEMU, `cost` of one inference there,
    `profile` per ONNX node."""

    def __init__(
        self, source, result: CompileResult, options: CompileOptions, output_dir: Path,
        work: tempfile.TemporaryDirectory | None = None,
    ):
        self.source = source
        self.result = result
        self.options = options
        self.output_dir = output_dir
        self.target = options.target
        self.name = result.zig_path.stem
        self.board: Board | None = result.board
        self.inputs: list[TensorSignature] = list(result.inputs)
        self.outputs: list[TensorSignature] = caller_outputs(result.outputs)
        self.firmware_path: Path | None = result.firmware_path
        self._work = work
        self._host: tuple[CompiledModel, np.ndarray | None] | None = None
        self._host_work: tempfile.TemporaryDirectory | None = None
        if work is not None:  # the temporary folder goes with the object
            weakref.finalize(self, work.cleanup)

    def __repr__(self) -> str:
        board = f", board={self.board.name!r}" if self.board is not None else ""
        return f"<zant.Model {self.name!r} target={self.target!r}{board} in {self.output_dir}>"

    # -- what was written ---------------------------------------------------------------------

    @property
    def plan(self) -> dict:
        """The plan JSON (`NAME.plan.json`) as a dict: `arenas`, `regions`, `tensors`, `inputs`…"""
        return self.result.plan

    @property
    def paths(self) -> dict[str, Path]:
        """The artifacts by kind: `zig`, `header`, `plan`, and where written `weights`,
        `library` (`libNAME.so` for the host, `libNAME.a` for an MCU) and `firmware` (`NAME.elf`)."""
        found = {"zig": self.result.zig_path, "header": self.result.header_path, "plan": self.result.plan_path}
        weights = self.output_dir / f"{self.name}.weights.bin"
        if weights.exists():
            found["weights"] = weights
        if self.result.library_path is not None:
            found["library"] = self.result.library_path
        if self.firmware_path is not None:
            found["firmware"] = self.firmware_path
        return found

    # -- on this machine ----------------------------------------------------------------------

    def predict(self, feeds: Mapping[str, Any] | None = None, /, **inputs: Any) -> dict[str, np.ndarray]:
        """Run the model on this machine: every input by name (keywords, or a mapping for names
        that are not Python identifiers), numpy arrays of the inputs' shapes and element types;
        returns the outputs by name (a bounded output cut to its valid extent).

        For an MCU target this runs a host build of the module that target ships (its pipeline,
        built for this machine on the first call), so the numbers are the firmware's up to the
        two compilers' floating-point contraction."""
        arrays = self._checked(feeds, inputs)
        compiled, _ = self._host_model()
        results = compiled.call(*(arrays[s.name] for s in compiled.inputs))
        return {signature.name: array for signature, array in results}

    def _checked(self, feeds: Mapping[str, Any] | None, inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
        given = {**(feeds or {}), **inputs}
        checked = check_inputs(
            self.inputs, given, cast=self.options.cast_inputs, option="input", cast_hint="compile with cast_inputs=True"
        )
        missing = [s.name for s in self.inputs if s.name not in checked]
        if missing:
            raise ZantError(f"missing inputs: {', '.join(missing)} (the model takes {', '.join(s.name for s in self.inputs)})")
        return checked

    def _host_model(self) -> tuple[CompiledModel, np.ndarray | None]:
        """The callable host build (and the constant blob it reads, kept alive with it)."""
        if self._host is not None:
            return self._host
        from zant.runtime import load_compiled

        result = self.result
        if self.target != "host":
            result = self._host_build()
        if result.library_path is None:
            raise ZantError("the model was compiled without a build (build=False, --no-build)")
        model = load_compiled(result)
        self._host = (model, init_constants(model, result))
        return self._host

    def _host_build(self) -> CompileResult:
        """The MCU target's module, built for this machine (in a folder of its own)."""
        options = self.options
        pipeline = options_pipeline(options, None)  # the MCU's, its rounding stage included
        # The RAM budget is the part's: the host build takes the default plan (a budgeted one's
        # schedules change where bytes live, never the outputs: docs/ram-budget.md).
        host = replace(
            options, target="host", pipeline=pipeline or pipeline_for(options.target), firmware=False,
            board=None, inputs=None, build=True, float_abi=None, runtime="external",
            requant_rounding="exact", flush_denormals=False, ram_budget=None,
        )
        self._host_work = tempfile.TemporaryDirectory(prefix="zant-host-")
        weakref.finalize(self, self._host_work.cleanup)
        return compile_model(self.source, self._host_work.name, host)

    # -- under QEMU ---------------------------------------------------------------------------

    def run_firmware(self, feeds: Mapping[str, Any] | None = None, /, **inputs: Any) -> FirmwareRun:
        """Run the firmware image once under QEMU (an MCU target; the board's QEMU machine) and
        return its outputs by name. Without inputs it runs the image as built (the inputs given
        to `compile`, others seeded); with inputs (all of them), the image is linked again with
        those embedded first."""
        from zant.backend.firmware import run_firmware

        board = self._firmware_board()
        if feeds or inputs or self.firmware_path is None:
            self._link_image(self._checked(feeds, inputs) if (feeds or inputs) else None)
        assert self.firmware_path is not None
        run = run_firmware(self.firmware_path, board, self.result.outputs)
        outputs = dict(zip(run.names or [s.name for s in self.outputs], run.outputs))
        return FirmwareRun(outputs, run.stack_bytes, run.model_stack_bytes)

    def cost(self) -> Cost:
        """Instructions and cycles (the core's timing model, `zant.backend.timing`) of one
        inference of the firmware image, and milliseconds at the board's clock: `.instructions`,
        `.cycles`, `.milliseconds`, `.describe()`."""
        from zant.backend.firmware import measure_cost

        board = self._firmware_board()
        if self.firmware_path is None:
            self._link_image(None)
        assert self.firmware_path is not None
        return measure_cost(board, self.firmware_path)

    def _firmware_board(self) -> Board:
        from zant.backend.firmware import qemu_missing

        if self.target == "host":
            raise ZantError("compiled for the host: compile with an MCU target (or a board) to run firmware")
        if self.result.library_path is None:
            raise ZantError("the model was compiled without a build (build=False, --no-build)")
        self.board = self.board or board_for(self.target, None)
        missing = qemu_missing(self.board)
        if missing:
            raise ZantError(missing)
        return self.board

    def _link_image(self, feeds: dict[str, np.ndarray] | None) -> None:
        """(Re)link `NAME.elf` with `feeds` embedded (None: those of the last image, or seeded)."""
        from zant.driver import build_image, caller_arena, image_sizes

        assert self.board is not None
        if feeds is None:
            feeds = self.result.feeds
        if feeds is None:  # the inputs given to compile, others seeded
            feeds, _ = complete_feeds(self.inputs, self.options.inputs or {})
        current = self.result.feeds
        if (
            self.firmware_path is not None and current is not None
            and all(np.array_equal(feeds[k], current[k]) for k in feeds)
        ):
            return
        elf = build_image(
            self.output_dir, self.name, self.inputs, self.result.outputs, feeds, self.board,
            self.options.optimize, self.plan["constants"], caller_arena(self.plan, self.options.arena),
        )
        self.firmware_path = elf
        self.result = replace(
            self.result, firmware_path=elf, board=self.board, firmware_sizes=image_sizes(elf), feeds=dict(feeds)
        )

    # -- analysis -----------------------------------------------------------------------------

    def profile(self) -> ProfileReport:
        """Instructions and cycles per ONNX node and per kernel of one inference of the firmware
        image under QEMU (`zant profile`; it builds its own image, every kernel a function of its
        own). `print(model.profile())` prints its tables."""
        from zant.tools.profile import profile_model

        board = self._firmware_board()
        options = self.options
        if not isinstance(self.source, (str, os.PathLike)):
            raise ZantError("profile() reads the model's node types from its file: compile it from a path")
        extra = {
            "inputs": self.result.feeds or options.inputs, "input_shapes": options.input_shapes,
            "freeze": options.freeze, "pipeline": options.pipeline, "plugins": options.plugins,
            "constants": options.constants, "cast_inputs": options.cast_inputs,
        }
        return ProfileReport(
            profile_model(str(self.source), self.target, board, options.optimize, extra, None, options.progress)
        )


def init_constants(model: CompiledModel, result: CompileResult) -> np.ndarray | None:
    """Call `NAME_init` of a host build whose constants are staged (no argument) or external
    (the address of its blob, read into an aligned buffer, which the caller keeps alive while
    the model runs); returns that buffer."""
    mode = result.plan["constants"]
    if mode == "embedded":
        return None
    init = getattr(model._library, f"{result.zig_path.stem}_init")
    init.restype = ctypes.c_int32
    blob = None
    if mode == "external":
        data = (result.zig_path.parent / f"{result.zig_path.stem}.weights.bin").read_bytes()
        alignment = next(a["alignment"] for a in result.plan["arenas"] if a["role"] == "constant")
        buffer = np.zeros(len(data) + alignment, np.uint8)
        start = (-buffer.ctypes.data) % alignment
        buffer[start : start + len(data)] = np.frombuffer(data, np.uint8)
        blob = buffer
        status = init(ctypes.c_void_p(buffer.ctypes.data + start))
    else:
        status = init()
    if status != 0:
        raise ZantError(f"{result.zig_path.stem}_init returned {status}")
    return blob
