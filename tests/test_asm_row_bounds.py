"""The inline-asm row kernels of the Cortex-M4 and M55 stay inside their buffers at the edges of
the shapes their passes take (the project rule: no input makes generated code read or write
outside its buffers, in any build mode).

Their pointer arithmetic lives in assembly, outside Zig's safety checks. Audit (each op's asm
against its `reference` in `zant.dialects.arm_dsp` / `arm_mve`, `ASM_REACH` below): every asm
block touches exactly the bytes its `reference` reads and writes (word loads only where all 4
bytes are taps; loops end on a pointer compared for equality with an end its pass count reaches
exactly), and an offset past a Thumb-2 immediate fails to assemble (a build error, never a wrong
address: LLVM's "invalid operand for instruction"). So the uop interpreter, which checks every
element a `reference` touches against its own buffer (each scratch buffer apart, not the
arena), proves a compiled module in bounds for the shapes it runs; nothing here reads an index
from the data (these ops take only static shapes and constant offsets).

Statically, for every shape: each such op declares its reach (`reach()`, bytes per pointer
operand, `zant.ir.target_ops.Reach`), which `verify-arena-plan` checks against the buffer each
pointer addresses (the pipelines' last stage, `pipelines.REACH_STAGE`). Below: the declared
reach is exactly the hull of what `reference` touches (every op of the edge models, and the
ops of verify-arena-plan-reach.mlir under random properties), and the MLPerf and bench int8
models verify clean on both cores, every pointer bounded.

Default run: each edge model through the M4's and the M55's pipelines, the expected asm ops in
the module, interpreted (a trap is an access outside a buffer) and equal to the ONNX reference.
Slow (`.ci/run`): the same as ReleaseFast firmware under QEMU, guarded by the MPU on both
cores (`memory_safety.guarded_firmware`: the M4's PMSAv7, the M55's PMSAv8), compared with the
reference."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import pytest
from int8_layers import QConv, int8_feeds, qlinear_conv_model
from onnx import TensorProto
from onnx.reference import ReferenceEvaluator

ASM_REACH = {
    # op: the bytes each pointer operand reaches, offsets from the pointer (all attributes in
    # bytes unless said otherwise; [a, b] inclusive)
    "arm_dsp.depthwise_step": "px: r·x_row + [0, 3·stride + 2] for r < rows (stride 1: words at 0 and 2; stride 2: "
    "words at 0, 4 and the byte 8); pw: [0, 8·rows) (LDRD per row)",
    "arm_dsp.depthwise_row": "px: 4·stride·s + depthwise_step's for s < steps (the loop ends at px + 4·stride·steps); "
    "pw: [0, 8·rows); py: (4s + j)·y_step, j < 4 (STRB), y_step <= 1023 (ADD of 4·y_step)",
    "arm_dsp.depthwise_short_row": "px: r·x_row + [0, 5] (words at 2 and 0); pw: [0, 8·rows)",
    "arm_dsp.depthwise_short_rows": "px: i·x_next + depthwise_short_row's, i < count; pw: [0, 8·rows); "
    "py: i·y_next + j·y_step, j < 6",
    "arm_dsp.smlad_tile_row": "pa: s·a_step + {0, a_next} + [0, 3], s < steps; pb: q·b_pair + s·b_step + "
    "{0, b_next} + [0, 3], q < pairs (two tiles or three pixels a pass only where pairs divides exactly); "
    "py: q·y_pair + {0, y_next} + {0, y_pixel}",
    "arm_dsp.smlad_block": "pa (words): j·a_next + s, j < 2, s < steps; pb (words): i·b_next + s, i < 4 "
    "(unroll divides steps; the loop ends at pb + 4·steps bytes)",
    "arm_dsp.smlad_block_row": "pa (words): q·a_pair + smlad_block's, q < pairs; pb: smlad_block's; "
    "py: q·y_pair + i·y_next + j·y_pixel, i < 4, j < 2",
    "arm_dsp.smlad_quad_row": "pa (words): k·a_next + s, k < 2, s < steps (pa put back after each quad); pb (words): "
    "q·b_quad + r·b_next + s, q < quads, r < 4 (the loop ends at pb + 4·b_quad·quads bytes); py: q·y_quad + r·y_pixel + "
    "k·y_next",
    "arm_dsp.smlad_rows": "pa (int16): [0, 4·steps); pb: [0, 4·rows·(steps + 1)) (biases, then per step a word a row; "
    "the loop's span 4·rows·(steps - rest), the rest after it)",
    "arm_dsp.smlad_layer": "pa (int16): smlad_rows'; pb: [0, 20·(steps + 1)·blocks) (5-row blocks; pb runs on from "
    "block to block, the layer's end reached exactly); py: [0, 5·blocks)",
    "arm_mve.vldrb_gather / vldrh_gather": "ptr + offsets[k] (elements), one lane each",
    "arm_mve.vstrb_scatter": "ptr + offsets[k], one byte each",
    "arm_mve.vmov_lane(s), vmlava, vmulh, vrshr": "registers only",
}
"""The reach of each asm op (the audit's record; the tests below check it through `reference`)."""


def reference_reach(op) -> dict[str, "Reach"]:
    """The hull of the bytes `op`'s `reference` reads and writes through each pointer operand
    (by operand name, as `reach()` names them), run on zeros."""
    from zant.dialects import uop
    from zant.ir.target_ops import Reach, declared_reach
    from zant.ir.types import element_bits

    names = {getattr(op, name): name for name in declared_reach(op) or {}}
    written = {getattr(op, name) for name in getattr(op, "WRITES", ())}
    touched: dict[str, Reach] = {}

    def recorder(value):
        bits = element_bits(value.type.element_type)

        def access(offsets, values=None):
            offsets = list(offsets)
            if offsets:
                lo = min(o * bits // 8 for o in offsets)
                hi = max(((o + 1) * bits + 7) // 8 for o in offsets)
                old = touched.get(names[value], Reach(lo, hi))
                touched[names[value]] = Reach(min(old.lo, lo), max(old.hi, hi))
            return None if values is not None or value in written else np.zeros(len(offsets), np.int64)

        return access

    arguments = []
    for value in op.operands:
        if isinstance(value.type, uop.PtrType):
            arguments.append(recorder(value))
        elif hasattr(value.type, "get_shape"):
            arguments.append(np.zeros(value.type.get_shape(), np.int64))
        else:
            arguments.append(0)
    op.reference(*arguments)
    return touched


def _depthwise(cases) -> onnx.ModelProto:
    layers = (QConv(n, c, c, h, w, (3, 3), s, p, group=c, x_zero=-9, y_zero=4) for n, c, h, w, s, p in cases)
    return qlinear_conv_model("depthwise_edges", layers, seed=7)


def _first(cases) -> onnx.ModelProto:
    import test_first_convs

    return test_first_convs._model(cases)


def _tiles(channels: int, out_channels: int, h: int, w: int) -> Callable[[], onnx.ModelProto]:
    def build() -> onnx.ModelProto:
        import test_tile_rows

        return test_tile_rows._model(channels, out_channels, h, w)

    return build


def _fully_connected(cases, per_tensor: bool = False) -> onnx.ModelProto:
    import test_fully_connected

    return test_fully_connected._model(cases, per_tensor)


def _pointwise_wide(h: int, w: int) -> Callable[[], onnx.ModelProto]:
    def build() -> onnx.ModelProto:
        from int8_layers import depthwise_pointwise_model

        return depthwise_pointwise_model(64, 8, h, w, 3, 0.002 * (1 + np.arange(8)))

    return build


def _kws_shaped_64() -> onnx.ModelProto:
    from test_ram_budget import kws_shaped_int8

    return kws_shaped_int8(channels=64, height=5, width=7)


def _budget_3776(pipeline: str) -> str:
    """The pipeline `fit_ram` takes for `_kws_shaped_64` under 3,776 B: its pointwise Convs
    written over their inputs in the widened form's pair form (`conv_columns.quad_block`)."""
    from zant.pipelines import with_in_place_layouts, with_layer_bound

    return with_layer_bound(with_in_place_layouts(pipeline, 3_776), 3_776)


def _roomy(pipeline: str) -> str:
    from test_pointwise_wide import roomy

    return roomy(pipeline)


@dataclass(frozen=True)
class Edge:
    build: Callable[[], onnx.ModelProto]
    ops: dict[str, set[str]]  # target: the asm ops the module must hold
    pipeline: Callable[[str], str] | None = None


DEPTHWISE = [
    # (name, channels, H, W, strides, pads)
    ("w1", 3, 5, 1, (1, 1), (1, 1, 1, 1)),  # 1-pixel rows
    ("h1", 2, 1, 9, (1, 1), (1, 1, 1, 1)),  # one row: only border rows of taps
    ("w2s2", 2, 6, 2, (2, 2), (0, 0, 1, 1)),
    ("odd_s2", 5, 7, 9, (2, 2), (1, 1, 1, 1)),  # stride-2 ends, channels not a multiple of 4
    ("w5_nopad", 2, 3, 5, (1, 1), (0, 0, 0, 0)),
    ("w6", 5, 6, 6, (1, 1), (1, 1, 1, 1)),  # the 6-wide short rows
    ("w6_tall", 3, 9, 6, (1, 1), (1, 1, 1, 1)),
    ("w13", 3, 4, 13, (1, 1), (1, 1, 1, 1)),  # 3 asm steps and a tail
    ("w16", 3, 4, 16, (1, 1), (1, 1, 1, 1)),  # the asm row's last step ends at the row's end
    ("w17s2", 2, 5, 17, (2, 2), (1, 1, 1, 1)),
    ("w20s2", 3, 6, 20, (2, 2), (0, 0, 1, 1)),  # stride 2, SAME: the last tap is the pad
    ("w21s2", 1 + 2, 5, 21, (2, 2), (0, 0, 1, 1)),  # odd width at stride 2, SAME
    ("w2045", 2, 3, 2045, (1, 1), (1, 1, 1, 1)),  # rows' reach 2·2045 + 5 = DEPTHWISE_REACH
    ("w2046", 2, 3, 2046, (1, 1), (1, 1, 1, 1)),  # one past it: no depthwise_step
    ("w2100", 2, 3, 2100, (1, 1), (1, 1, 1, 1)),  # an LDR immediate past 4095
]

FIRST = [
    # (name, in channels, out channels, H, W, kernel, strides, pads): the first convs' forms
    ("rgb_odd", 3, 8, 11, 9, [3, 3], [2, 2], [0, 0, 1, 1]),  # the last pair overlapping
    ("rgb_w4", 3, 6, 5, 4, [3, 3], [2, 2], [0, 0, 1, 1]),  # one pixel pair a row
    ("one_2x1", 1, 3, 8, 7, [3, 3], [2, 1], [1, 0, 1, 2]),  # an odd width's last pair: a lone smlad_block
    ("two_px1", 2, 4, 3, 3, [3, 3], [1, 1], [0, 0, 0, 0]),  # one output pixel
    ("one_row", 3, 5, 3, 10, [3, 3], [1, 1], [0, 0, 0, 0]),  # one output row
    ("w1_out", 3, 4, 13, 2, [3, 3], [2, 2], [0, 0, 1, 1]),  # outputs one pixel wide (window columns)
]

FULLY_CONNECTED = [
    ("k1_m1", 1, 1, TensorProto.INT8),  # one input, one output: a word padded
    ("k5_m4", 5, 4, TensorProto.INT8),
    ("k4_m7", 4, 7, TensorProto.INT8),  # a last block of the 2 rows left
    ("k9_m2", 9, 2, TensorProto.INT8),
    ("k1027_m5", 1027, 5, TensorProto.INT8),  # 5 rows (the loop's end on the stack): 4 steps a pass and 3 after the loop
]

LAYERS = [  # whole layers of 5-row blocks (arm_dsp.smlad_layer): one step, 2 and a rest, 4 and 3 after the loop
    ("k1_m5", 1, 5, TensorProto.INT8),
    ("k22_m10", 22, 10, TensorProto.INT8),
    ("k1027_m5", 1027, 5, TensorProto.INT8),
    ("k6_m15", 6, 15, TensorProto.INT8),
]

EDGES = {
    "depthwise": Edge(
        lambda: _depthwise(DEPTHWISE),
        {"cortex-m4": {"arm_dsp.depthwise_row", "arm_dsp.depthwise_short_rows"}, "cortex-m55": {"arm_mve.vldrb_gather"}},
    ),
    "first": Edge(
        lambda: _first(FIRST),
        {"cortex-m4": {"arm_dsp.smlad_block_row", "arm_dsp.smlad_block"}, "cortex-m55": {"arm_mve.vmlava"}},
        _roomy,
    ),
    "tile_one_pair": Edge(_tiles(8, 2, 1, 2), {"cortex-m4": {"arm_dsp.smlad_tile_row"}, "cortex-m55": {"arm_mve.vmlava"}}),
    "tile_8_steps": Edge(_tiles(32, 6, 2, 3), {"cortex-m4": {"arm_dsp.smlad_tile_row"}, "cortex-m55": {"arm_mve.vmlava"}}),
    "tile_triples": Edge(_tiles(12, 4, 2, 3), {"cortex-m4": {"arm_dsp.smlad_tile_row"}, "cortex-m55": {"arm_mve.vmlava"}}),
    "tile_7_steps": Edge(_tiles(28, 2, 1, 4), {"cortex-m4": {"arm_dsp.smlad_tile_row"}, "cortex-m55": {"arm_mve.vmlava"}}),
    "tile_odd_pixels": Edge(_tiles(16, 4, 3, 5), {"cortex-m4": set(), "cortex-m55": {"arm_mve.vmlava"}}),
    # the widened pointwise form (64 channels: 32 steps, a loop of 8 a pass), the whole image
    # widened at once: 35 and 9 pixels (odd: the last pair overlapping the one before)
    "wide_35": Edge(_pointwise_wide(5, 7), {"cortex-m4": {"arm_dsp.smlad_block"}, "cortex-m55": {"arm_mve.vmlava"}}, _roomy),
    "wide_9": Edge(_pointwise_wide(3, 3), {"cortex-m4": {"arm_dsp.smlad_block"}, "cortex-m55": {"arm_mve.vmlava"}}, _roomy),
    # the widened form written over its input under a budget, in pairs of output channels by
    # quads of pixels (blocks of 12 of 35 pixels: 3 quads, then 2 and one over the pixels before)
    "wide_quads": Edge(_kws_shaped_64, {"cortex-m4": {"arm_dsp.smlad_quad_row"}, "cortex-m55": {"arm_mve.vmlava"}}, _budget_3776),
    "fully_connected": Edge(
        lambda: _fully_connected(FULLY_CONNECTED), {"cortex-m4": {"arm_dsp.smlad_rows"}, "cortex-m55": {"arm_mve.vmlava"}}
    ),
    "fully_connected_layer": Edge(  # one multiplier a layer: whole layers of 5-row blocks
        lambda: _fully_connected(LAYERS, per_tensor=True),
        {"cortex-m4": {"arm_dsp.smlad_layer"}, "cortex-m55": {"arm_mve.vmlava"}},
    ),
}


def _lowered(model: onnx.ModelProto, target: str, pipeline: str, shapes: dict | None = None):
    from xdsl.passes import PassPipeline
    from xdsl.transforms import get_all_passes

    from zant.driver import make_context
    from zant.frontend.onnx_importer import import_model
    from zant.plugins import all_passes

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "model.onnx"
        onnx.save(model, path)
        module = import_model(str(path), shapes)
    ctx = make_context()
    for p in PassPipeline.parse_spec({**get_all_passes(), **all_passes()}, pipeline).passes:
        p.apply(ctx, module)
    module.verify()
    return module


ASM_OPS = (
    "arm_dsp.depthwise_step", "arm_dsp.depthwise_row", "arm_dsp.depthwise_short_row", "arm_dsp.depthwise_short_rows",
    "arm_dsp.smlad_tile_row", "arm_dsp.smlad_block", "arm_dsp.smlad_block_row", "arm_dsp.smlad_quad_row", "arm_dsp.smlad_rows",
    "arm_dsp.smlad_layer", "arm_mve.vldrb_gather", "arm_mve.vldrh_gather", "arm_mve.vstrb_scatter",
)
"""The ops whose addresses are the assembly's (or a vector of offsets the core adds)."""


def _loaded_index(pointer) -> str | None:
    """The first `uop.load` an asm op's pointer's indices are computed from (a data-dependent
    address), or None: its gep's indices come from loop indices and constants only."""
    from xdsl.ir import OpResult

    from zant.dialects import uop

    gep = pointer.owner
    assert isinstance(gep, uop.GepOp), gep
    stack, seen = list(gep.indices), set()
    while stack:
        value = stack.pop()
        if value in seen or not isinstance(value, OpResult):
            continue  # a block argument: a loop's index
        seen.add(value)
        if isinstance(value.owner, uop.LoadOp):
            return str(value.owner)
        stack.extend(value.owner.operands)
    return None


def _pipeline(edge: Edge, target: str) -> str:
    from zant.pipelines import pipeline_for

    pipeline = pipeline_for(target)
    return edge.pipeline(pipeline) if edge.pipeline else pipeline


def _expect_reference(model: onnx.ModelProto, feeds: dict, outputs) -> None:
    want = ReferenceEvaluator(model).run(None, feeds)
    for output, got, expected in zip(model.graph.output, outputs, want, strict=True):
        got = np.asarray(got).reshape(expected.shape)
        assert np.array_equal(got, expected), (output.name, np.argwhere(got != expected)[:4].tolist())


@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m55"])
@pytest.mark.parametrize("name", list(EDGES))
def test_row_kernels_stay_in_their_buffers(name, target):
    """The edge model through `target`'s pipeline holds the asm ops its shapes are for, verifies
    (each op's reach limits), addresses them from loop indices and constants only (no index
    loaded from memory), and the uop interpreter, which traps on an element outside the
    buffer an op's `reference` reads or writes, gives the ONNX reference's outputs."""
    from zant.interpreter.run import run_module

    edge = EDGES[name]
    model = edge.build()
    module = _lowered(model, target, _pipeline(edge, target))
    present = {op.name for op in module.walk()}
    assert edge.ops[target] <= present, edge.ops[target] - present
    from zant.dialects import uop

    from zant.ir.target_ops import declared_reach

    for op in module.walk():
        if op.name in ASM_OPS:
            for pointer in (v for v in op.operands if isinstance(v.type, uop.PtrType)):
                assert _loaded_index(pointer) is None, (op.name, _loaded_index(pointer))
        if declared_reach(op):
            assert declared_reach(op) == reference_reach(op), op
    counted = module.attributes.get("zant.asm_reach")  # the pipeline's last check: none unbounded
    assert counted is None or counted.data["unresolved"].value.data == 0, counted  # type: ignore[attr-defined]
    feeds = int8_feeds(model, 1)
    _expect_reference(model, feeds, run_module(module, [feeds[i.name] for i in model.graph.input]))


def _dialect_ops():
    from zant.dialects.arm_dsp import ArmDsp
    from zant.dialects.arm_mve import ArmMve

    return [op for dialect in (ArmDsp, ArmMve) for op in dialect.operations]


def test_every_pointer_of_an_asm_op_has_a_declared_reach():
    """Each op of `arm_dsp` and `arm_mve` with a pointer operand declares `reach()` (its
    addresses are the asm's, or an unaligned load's: no Zig check sees them), and no other
    does; every op of verify-arena-plan-reach.mlir names exactly its pointer operands."""
    for op in _dialect_ops():
        assert bool(_pointers(op)) == callable(getattr(op, "reach", None)), op.name
    for op in _reach_cases():
        assert set(op.reach()) == set(_pointers(type(op))), op.name


def _pointers(op_class) -> list[str]:
    """The names of an op class's pointer operands."""
    return [name for name, definition in op_class.get_irdl_definition().operands if "PtrType" in str(definition.constr)]


REACH_CASES = Path(__file__).parent / "filecheck" / "passes" / "verify-arena-plan-reach.mlir"


def _reach_cases(text: str | None = None):
    """The asm ops of verify-arena-plan-reach.mlir's passing cases (one of each op)."""
    from xdsl.parser import Parser

    from zant.driver import make_context
    from zant.ir.target_ops import declared_reach

    found = []
    for case in (text or REACH_CASES.read_text()).split("// -----"):
        if "_at_the_end" not in case:
            continue
        module = Parser(make_context(), case).parse_module()
        found += [op for op in module.walk() if declared_reach(op)]
    return found


def test_declared_reach_is_the_hull_of_what_the_reference_touches():
    """Each asm op's `reach()` is exactly the hull of the bytes its `reference` reads and writes
    (so the check `verify-arena-plan` makes is the interpreter's, for every shape): the ops of
    verify-arena-plan-reach.mlir as written and under random properties (each integer property
    drawn from 1 to twice its value plus 3, kept where the op verifies)."""
    import random
    import re

    from xdsl.utils.exceptions import VerifyException

    ops = _reach_cases()
    assert {op.name for op in ops} == {op.name for op in _dialect_ops() if callable(getattr(op, "reach", None))}
    rng = random.Random(5)
    text = REACH_CASES.read_text()
    tried = 0
    for _ in range(12):
        varied = re.sub(r"#builtin\.int<(\d+)>", lambda m: f"#builtin.int<{rng.randint(1, 2 * int(m.group(1)) + 3)}>", text)
        varied = re.sub(r"\[(\d+(?:, \d+)*)\] :", lambda m: "[" + ", ".join(str(rng.randint(0, 900)) for _ in m.group(1).split(",")) + "] :", varied)
        for case in varied.split("// -----"):
            try:
                ops += _reach_cases(case)
            except VerifyException:
                continue
    for op in ops:
        try:
            op.verify()
        except VerifyException:
            continue
        tried += 1
        assert op.reach() == reference_reach(op), op
    assert tried > 100, tried


LOADED_INDEX = """
func.func @f() {
  %x = uop.define_local "x" : !uop.buffer<16xi8>
  %i = uop.define_local "i" : !uop.buffer<1xi32>
  %w = uop.define_local "w" : !uop.buffer<6xi32>
  %zero = uop.const 0 : index
  %pi = uop.gep %i[%zero] : !uop.buffer<1xi32>
  %v = uop.load %pi : i32
  %k = uop.cast %v : i32 to index
  %px = uop.gep %x[%k] : !uop.buffer<16xi8>
  %pw = uop.gep %w[%zero] : !uop.buffer<6xi32>
  %c = uop.const 0 : i32
  %r0, %r1, %r2, %r3 = arm_dsp.depthwise_step %px, %pw, %c {stride = #builtin.int<1>, rows = #builtin.int<1>, x_row = #builtin.int<6>} : !uop.ptr<i8>, !uop.ptr<i32> -> i32, i32, i32, i32
  func.return
}
"""


def test_an_index_loaded_from_memory_is_found():
    """The check above: a depthwise_step whose px is indexed by a value loaded from a buffer is
    found (its pw, indexed by a constant, is not)."""
    from xdsl.parser import Parser

    from zant.dialects import arm_dsp
    from zant.driver import make_context

    module = Parser(make_context(), LOADED_INDEX).parse_module()
    step = next(op for op in module.walk() if isinstance(op, arm_dsp.DepthwiseStepOp))
    assert "uop.load" in (_loaded_index(step.px) or "")
    assert _loaded_index(step.pw) is None


def test_depthwise_steps_stop_at_the_reach_of_an_ldr():
    """A 3-row depthwise row of 2,045 bytes takes `arm_dsp.depthwise_step`s (their taps reach
    2·2045 + 5 = DEPTHWISE_REACH bytes); 2,046 and 2,100 (an LDR immediate of 4,200) keep the
    compiled steps (before, the verifier refused the module: no build)."""
    from zant.dialects import arm_dsp
    from zant.pipelines import pipeline_for

    for width, taken in ((2045, True), (2046, False), (2100, False)):
        module = _lowered(_depthwise([("x", 2, 3, width, (1, 1), (1, 1, 1, 1))]), "cortex-m4", pipeline_for("cortex-m4"))
        rows = [op for op in module.walk() if isinstance(op, arm_dsp.DepthwiseRowOp) and op.rows.data == 3]
        assert bool(rows) == taken, width
        for op in rows:
            assert arm_dsp.depthwise_step_reach(op.stride.data, op.rows.data, op.x_row.data)["px"].hi - 1 <= arm_dsp.DEPTHWISE_REACH


@pytest.mark.slow
@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m55"])
@pytest.mark.parametrize("name", list(EDGES))
def test_row_kernels_as_guarded_release_fast_firmware(tmp_path, name, target):
    """The edge model as `target` firmware built ReleaseFast (the asm forms), run under QEMU with
    every input, output and arena between MPU guard regions (no fault; both cores have an MPU),
    the outputs the ONNX reference's bit for bit."""
    from zant.backend.boards import board_for
    from zant.backend.firmware import GUARD_TARGETS, qemu_missing
    from zant.driver import CompileOptions, compile_model
    from zant.tools.memory_safety import guarded_firmware

    assert target in GUARD_TARGETS  # guarded_firmware guards it
    missing = qemu_missing(board_for(target))
    if missing:
        pytest.skip(missing)
    edge = EDGES[name]
    model = edge.build()
    onnx.save(model, tmp_path / "model.onnx")
    options = CompileOptions(name="model", target=target, optimize="ReleaseFast", build=False, pipeline=_pipeline(edge, target))
    result = compile_model(tmp_path / "model.onnx", tmp_path / "out", options)
    feeds = int8_feeds(model, 2)
    run = guarded_firmware(result, target, [feeds[i.name] for i in model.graph.input], "ReleaseFast")
    assert not run.unguarded and run.error is None, (run.unguarded, run.error)
    _expect_reference(model, feeds, run.outputs)


MLPERF = Path("/work/shared/mlperf_tiny/onnx")
MLPERF_SHAPES = {"kws": [1, 49, 10, 1], "vww": [1, 96, 96, 3], "ic": [1, 32, 32, 3], "ad": [1, 640]}


def _int8_model(name: str) -> tuple[onnx.ModelProto, dict | None]:
    """An int8 model and its input shapes: MLPerf Tiny's `name`_int8.onnx, or a bench model
    (`bench_kws`, `bench_mobilenet_v2`: bench/models.py's QDQ quantization)."""
    if name.startswith("bench_"):
        import sys

        pytest.importorskip("onnxruntime")
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
        import models

        return models.quantize({"bench_kws": models.kws_dscnn, "bench_mobilenet_v2": models.mobilenet_v2}[name]()), None
    path = MLPERF / f"{name}_int8.onnx"
    if not path.is_file():
        pytest.skip(f"MLPerf Tiny's {path.name} is not on this machine")
    model = onnx.load(path)
    return model, {model.graph.input[0].name: MLPERF_SHAPES[name]}


def _slow(*names: str) -> list:
    return [pytest.param(n, marks=pytest.mark.slow) for n in names]


@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m55"])
@pytest.mark.parametrize("name", ["kws", "ad", "bench_kws", *_slow("vww", "ic", "bench_mobilenet_v2")])
def test_int8_models_verify_every_asm_pointer(name, target):
    """The MLPerf Tiny and bench int8 models through `target`'s pipeline: its last stage,
    `verify-arena-plan{reach-only=true}`, finds every pointer of their asm ops inside its buffer
    and bounds each one (none unresolved)."""
    from zant.pipelines import REACH_STAGE, pipeline_for

    pipeline = pipeline_for(target)
    assert pipeline.endswith(REACH_STAGE)
    model, shapes = _int8_model(name)
    module = _lowered(model, target, pipeline, shapes)
    counted = module.attributes.get("zant.asm_reach")
    if target == "cortex-m55" and name == "ad":  # its fully connected layers: vmlava only
        assert counted is None
        return
    assert counted is not None and counted.data["checked"].value.data > 0, counted  # type: ignore[attr-defined]
    assert counted.data["unresolved"].value.data == 0, counted  # type: ignore[attr-defined]
