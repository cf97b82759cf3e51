"""Every pass's output parses back: for each bench model, each pass of both default pipelines is
run one at a time, and after each the module is printed (with its dialect resources, the
weights), parsed with the same context and printed again, identically.

An op a pass creates that no registered dialect defines, or a custom format whose parser does
not read what its printer writes, fails here naming the model and the pass."""

from __future__ import annotations

import sys
from functools import cache
from io import StringIO
from pathlib import Path

import onnx
import pytest
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects.builtin import Builtin, ModuleOp
from xdsl.parser import Parser
from xdsl.passes import PassPipeline
from xdsl.printer import Printer
from xdsl.transforms import get_all_passes as xdsl_passes

from zant.driver import make_context
from zant.pipelines import DEFAULT_PIPELINE, MCU_PIPELINE
from zant.frontend.onnx_importer import import_model
from zant.plugins import all_passes

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from models import DIGITS, MODELS, QUANTIZED, GraphBuilder, quantize  # noqa: E402


def residual_block() -> onnx.ModelProto:
    """ResNet-8's layers at a tenth of its size: a stem conv, one residual block (its Add folds to
    an int8 add when quantized) with a strided 1×1 shortcut, pool, Gemm, Softmax."""
    g = GraphBuilder("residual_block", seed=16)
    x = g.relu(g.bn(g.conv("input", 3, 8, 3), 8))
    y = g.relu(g.bn(g.conv(x, 8, 16, 3, stride=2), 16))
    y = g.bn(g.conv(y, 16, 16, 3), 16)
    shortcut = g.conv(x, 8, 16, 1, stride=2, pads=[0, 0, 0, 0])
    x = g.relu(g.node("Add", [y, shortcut], "add"))
    x = g.node("AveragePool", [x], "avgpool", kernel_shape=[4, 4])
    x = g.node("Flatten", [x], "flatten", axis=1)
    x = g.node("Softmax", [g.gemm(x, 16, 10, gain=1.0)], "softmax", axis=1)
    return g.build([("input", [1, 3, 8, 8])], [(x, "probs", [1, 10])])


LOCAL = {"residual_block_int8": lambda: quantize(residual_block())}
"""Models of this test only: the int8 residual block stands in for resnet8_int8 in the default
run (the same QLinearAdd folding and strided shortcut, a fraction of the time)."""

FAST = ("digits", "residual_block_int8")
"""The default run: a small float CNN and the int8 residual block, whose pipelines create the
ops of the float and the quantized forms; the rest (the MLP and autoencoder, digits_int8,
resnet8_int8 among them) run under `-m slow` (CI runs the small ones: `.ci/run`)."""

ALL_MODELS = ("digits", *MODELS, *QUANTIZED, *LOCAL)


def _param(name: str):
    return pytest.param(name, id=name, marks=() if name in FAST else pytest.mark.slow)


@cache
def _model_file(name: str, folder: Path) -> Path:
    if name == "digits":
        return DIGITS
    if name in QUANTIZED or name in LOCAL:
        pytest.importorskip("onnxruntime")
    path = folder / f"{name}.onnx"
    onnx.save((MODELS | QUANTIZED | LOCAL)[name](), path)
    return path


def _print(module: ModuleOp, ctx) -> str:
    stream = StringIO()
    printer = Printer(stream=stream)
    printer.print_op(module)
    printer.print_metadata(ctx.loaded_dialects)
    return stream.getvalue()


def _parsed_back(module: ModuleOp, ctx, where: str) -> ModuleOp:
    """`module` printed and parsed back, as `zant-opt … | zant-opt` would in a new process."""
    text = _print(module, ctx)
    # The resource storage is one per process: emptied, the parser declares the same keys
    # again instead of renaming them around the original's (conv_w → conv_w_0).
    Builtin.get_interface(OpAsmDialectInterface)._blob_storage.clear()
    try:
        reparsed = Parser(ctx, text, name=where).parse_module()
        reparsed.verify()
    except Exception as error:  # noqa: BLE001 - any failure is reported with where it happened
        pytest.fail(f"{where}: the printed module does not parse back: {error}")
    again = _print(reparsed, ctx)
    if again != text:
        first = next(i for i, (a, b) in enumerate(zip(text.splitlines(), again.splitlines() + [""])) if a != b)
        pytest.fail(
            f"{where}: the reparsed module prints differently, from line {first + 1}:\n"
            f"  printed:   {text.splitlines()[first][:300]}\n  reprinted: {again.splitlines()[first][:300]}"
        )
    return reparsed


@pytest.mark.parametrize("pipeline", [MCU_PIPELINE, DEFAULT_PIPELINE], ids=["mcu", "host"])
@pytest.mark.parametrize("name", [_param(n) for n in ALL_MODELS])
def test_every_pass_output_parses_back(name, pipeline, tmp_path_factory):
    folder = tmp_path_factory.getbasetemp() / "round_trip_models"
    folder.mkdir(exist_ok=True)
    module = import_model(str(_model_file(name, folder)))
    ctx = make_context()
    ctx.get_optional_dialect("builtin")  # its resource storage holds the weights the printer writes
    module = _parsed_back(module, ctx, f"{name}: import")
    available = {**xdsl_passes(), **all_passes()}
    for spec in PassPipeline.parse_spec(available, pipeline).passes:
        spec.apply(ctx, module)
        module.verify()
        # The next pass runs on the reparsed module, as in `zant-opt -p a | zant-opt -p b`.
        module = _parsed_back(module, ctx, f"{name}: after {spec.name}")
