"""`onnx-to-uop`: lower the onnx dialect to uop loops over flat buffers.

The pass works on the `func.func @main` the frontend makes:

1. graph inputs (the function arguments) become `uop.define_global "input" i` buffers;
2. one pattern per op family (modules in this package) lowers each onnx op, in program order,
   to scratch buffers (`uop.define_local`), views and `uop.range` loop nests;
3. each returned tensor is written to a `uop.define_global "output" j` buffer — the producer's
   scratch buffer simply becomes the output when it holds exactly that tensor, otherwise a copy
   loop is emitted; the function then takes and returns nothing.

An op without a lowering is an error naming its node, before anything is rewritten.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    FunctionType,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    UnrealizedConversionCastOp,
)
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker
from xdsl.rewriter import InsertPoint, Rewriter

from zant.analysis.layer_bound import KERNEL_SCRATCH_BYTES, graph_layer_bound
from zant.dialects import uop
from zant.dialects.onnx import INPUT_NAMES, NODE_NAME, OUTPUT_NAMES, OnnxOp
from zant.dialects.zant import target_parameters
from zant.errors import UnsupportedOp, UnsupportedOpsError, ZantError
from zant.ir.locations import locate
from zant.passes.onnx_to_uop.base import OnnxLowering, copy_layout, node_label
from zant.ir.strings import STRING_CAPACITY_ATTR
from zant.passes.onnx_to_uop.kernel import KernelBuilder, Layout, layout_of
from zant.passes.onnx_to_uop.strings import U8, string_buffer_size, string_capacity, string_layout


def all_patterns() -> tuple[OnnxLowering, ...]:
    """Every op family's patterns; each family module exports a `PATTERNS` tuple."""
    from zant.passes.onnx_to_uop import (
        col2im,
        constants,
        conv,
        data_dependent,
        deform_conv,
        elementwise,
        empty,
        guard,
        image,
        linalg,
        ml_features,
        ml_linear,
        movement,
        norm,
        pool,
        quant,
        quant_elementwise,
        random,
        recurrent,
        reduce,
        resample,
        sampling,
        spectral,
        strings,
        text,
        training,
        tree_ensemble,
        unique,
    )

    families = (  # strings first (their fields are bytes), then empty: an op with empty results needs none of the others
        strings, empty, constants, elementwise, linalg, conv, deform_conv, pool, norm, reduce, movement,
        resample, sampling, col2im, quant, quant_elementwise, recurrent, spectral, text,
        ml_features, ml_linear, tree_ensemble, training, image, unique, data_dependent, random, guard,
    )
    return tuple(pattern for family in families for pattern in family.PATTERNS)


def supported_ops() -> frozenset[str]:
    return frozenset(name for p in all_patterns() for name in p.op_names)


def _names(function: func.FuncOp, key: str, count: int, default: str) -> list[str]:
    names = function.attributes.get(key)
    if isinstance(names, ArrayAttr) and len(names) == count:
        return [n.data if isinstance(n, StringAttr) else str(n) for n in names]
    return [f"{default}{i}" for i in range(count)]


def _ancestors(op: Operation):
    parent = op.parent_op()
    while parent is not None:
        yield parent
        parent = parent.parent_op()


def _unsupported_op(op: Operation) -> UnsupportedOp:
    name = op.attributes.get(NODE_NAME)
    node = name.data if isinstance(name, StringAttr) else ""
    if isinstance(op, OnnxOp):
        schema = op.spec().schema
        return UnsupportedOp(node, schema.name, schema.domain)
    return UnsupportedOp(node, op.name.removeprefix("onnx."))


def _buffer_type(tensor: SSAValue) -> uop.BufferType:
    assert isinstance(tensor.type, TensorType)
    if string_capacity(tensor) is not None:  # NUL-padded fields of bytes (zant.ir.strings)
        return uop.BufferType(string_buffer_size(tensor), U8)
    return uop.BufferType(math.prod(tensor.type.get_shape()), tensor.type.get_element_type())


def _mark_strings(buffer: uop.DefineGlobalOp, tensor: SSAValue) -> uop.DefineGlobalOp:
    capacity = string_capacity(tensor)
    if capacity is not None:
        buffer.attributes[STRING_CAPACITY_ATTR] = IntegerAttr(capacity, 64)
    return buffer


@dataclass(frozen=True)
class OnnxToUopPass(ModulePass):
    """Lower every onnx op of `@main` to uop; graph inputs and outputs become global buffers.

    The Conv, MatMul and recurrent forms are the module's target's (`#zant.target`,
    `zant.targets.PassParameters`; a module without one gets the defaults below); each option,
    when given, overrides its target's value. `conv-lanes=L conv-tile=P` (targets with vector
    registers; L = 0, the default, is off): Convs take the forms of `conv_tiling.VectorConv`,
    scalar code shaped for `vectorize{width=L}` to make register tiles of P × L outputs of
    (default P = 6); `conv-registers=R`: the target's vector registers counted in L-lane vectors
    (0, the default: unknown), with which ungrouped channel-lane Convs choose tiles of several
    blocks of L output channels (`VectorConv.lane_tile`'s cost model); `conv-streamed-weights=N`:
    the weight bytes beyond which a Conv's weights stream from memory (0, the default:
    `conv_tiling.STREAMED_WEIGHTS`), which `VectorConv.lane_plan` and `reduction_chunk` read;
    `conv-lane-registers=R`: the hardware registers of one L-lane vector (AVX2 2, AVX-512 1).
    `conv-winograd=false`: no Conv takes the Winograd form (`conv_winograd`; by default the 3x3
    Convs `conv_winograd.takes_winograd` chooses do).
    `conv-channel-block=B` (default 8): scalar Convs, float and integer,
    compute B output channels per pass over the window, one register accumulator each — 4 on a
    Cortex-M, whose 13 registers do not hold 8. `conv-float-registers=R` (scalar targets with R
    float registers; 0, the default, is off): ungrouped f32 Convs take a register tile of
    channels × pixels chosen per layer for R registers (`conv_tiling.register_tile`) instead of
    B channels. `conv-word-taps=true` (cores with the DSP extension and no Helium): integer
    Convs over fewer than 4 channels with rows of 3 taps get a 4th tap of weight 0, each row one
    word for `arm-dsp-dot`. `conv-mve=true` (cores with Helium): int8 depthwise Convs at stride 1
    take `conv_depthwise_mve`'s form, four outputs of a channel a vector, and pointwise ones over
    NCHW `conv_pointwise_mve`'s, each row of X copied channels-last. `weight-cache-bytes=N` (a
    board whose weights are read from slow flash through a cache of N bytes, STM32's ART: `zant.driver.compile_pipeline`; 0, the
    default: none): pointwise Convs over channels-last inputs whose pairs of weight rows would
    overflow half of it copy each pair to RAM before reading it (`conv_columns.CACHE_SHARE`).
    `layer-bound=N` (0, the default: the graph's own, `zant.analysis.layer_bound`): the bytes an
    op's activations and the scratch its kernel allocates beside them may take at once; forms
    that copy an operand (`conv_columns`' widened pointwise form, in blocks of pixels where the
    whole copy would not fit; `conv_first`'s padded copy) are taken only within it.
    `kernel-scratch=N` (default `layer_bound.KERNEL_SCRATCH_BYTES`; none with a layer-bound
    given, a RAM budget's): the bytes the widened pointwise form's copies may add to the
    default bound.
    `image-formats=jpeg,png,…` (default: all): the compressed formats ImageDecoder decodes
    (`image.DECODERS`: jpeg, png, tiff, jp2, webp; each one's decoder is code in every model with
    an ImageDecoder, so naming only the formats a model meets keeps the others out of its flash).
    """

    name = "onnx-to-uop"

    conv_lanes: int | None = None
    conv_tile: int | None = None
    conv_registers: int | None = None
    conv_channel_block: int | None = None
    conv_float_registers: int | None = None
    conv_word_taps: bool | None = None
    conv_mve: bool | None = None
    weight_cache_bytes: int = 0
    image_formats: tuple[str, ...] = ()
    conv_streamed_weights: int = 0
    conv_lane_registers: int | None = None
    conv_winograd: bool = True
    layer_bound: int = 0
    kernel_scratch: int = KERNEL_SCRATCH_BYTES

    def patterns(self) -> list[OnnxLowering]:
        from zant.passes.onnx_to_uop.conv import ConvLowering
        from zant.passes.onnx_to_uop.conv_tiling import VectorConv
        from zant.passes.onnx_to_uop.image import ImageDecoderLowering
        from zant.passes.onnx_to_uop.linalg import GemmLowering, MatMulLowering
        from zant.passes.onnx_to_uop.recurrent import RecurrentLowering
        from zant.passes.onnx_to_uop.quant import ConvIntegerLowering, MatMulIntegerLowering

        if self.conv_lanes not in (0, 8, 16) or self.conv_tile < 1:
            raise ZantError("onnx-to-uop: conv-lanes must be 0 (off), 8 or 16, and conv-tile ≥ 1")
        if self.conv_channel_block < 1:
            raise ZantError("onnx-to-uop: conv-channel-block must be ≥ 1")
        vector = None
        if self.conv_lanes:
            vector = VectorConv(self.conv_lanes, self.conv_tile, self.conv_registers, self.conv_lane_registers or 1)
            if self.conv_streamed_weights:
                vector = replace(vector, streamed_weights=self.conv_streamed_weights)
            vector = replace(vector, winograd=self.conv_winograd)
        block = self.conv_channel_block

        def configured(pattern: OnnxLowering) -> OnnxLowering:
            if isinstance(pattern, ConvLowering):
                return ConvLowering(vector, block, self.conv_float_registers)
            if isinstance(pattern, ConvIntegerLowering):  # QLinearConv too
                return type(pattern)(block, self.conv_word_taps, self.weight_cache_bytes, self.layer_bound, bool(self.conv_mve), self.kernel_scratch)
            if isinstance(pattern, MatMulIntegerLowering):  # QLinearMatMul too
                return type(pattern)(bool(self.conv_word_taps))
            if isinstance(pattern, MatMulLowering | GemmLowering | RecurrentLowering):
                return type(pattern)(vector)
            if isinstance(pattern, ImageDecoderLowering):
                return ImageDecoderLowering(self.image_formats)
            return pattern

        return [configured(p) for p in all_patterns()]

    def for_module(self, module: ModuleOp) -> OnnxToUopPass:
        """This pass with every option it was not given taken from the module's target (and the
        layer bound from its graph)."""
        p = target_parameters(module)
        given = {
            "conv_lanes": p.vector_lanes, "conv_tile": p.conv_tile, "conv_registers": p.vector_registers,
            "conv_lane_registers": p.vector_lane_registers,
            "conv_channel_block": p.conv_channel_block,
            "conv_float_registers": p.float_registers, "conv_word_taps": p.conv_word_taps, "conv_mve": p.mve,
        }
        taken = {k: v for k, v in given.items() if getattr(self, k) is None}
        if not self.layer_bound:
            functions = [f for f in module.walk() if isinstance(f, func.FuncOp) and not f.is_declaration]
            taken["layer_bound"] = max(map(graph_layer_bound, functions), default=0)
        else:  # a bound given (a RAM budget's) holds the copies too
            taken["kernel_scratch"] = 0
        return replace(self, **taken)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        lowering = self.for_module(op)
        for function in op.walk():
            if isinstance(function, func.FuncOp) and not function.is_declaration:
                lowering._lower_function(function)

    def _lower_function(self, function: func.FuncOp) -> None:
        self._check_supported(function)
        block = function.body.block
        rewriter = Rewriter()

        input_names = _names(function, INPUT_NAMES, len(block.args), "input")
        for index, arg in enumerate(block.args):
            buffer = _mark_strings(uop.DefineGlobalOp("input", index, input_names[index], _buffer_type(arg)), arg)
            buffer.result.name_hint = arg.name_hint
            cast = UnrealizedConversionCastOp.get([buffer.result], [arg.type])
            rewriter.insert_op([buffer, cast], InsertPoint.at_start(block))
            arg.replace_all_uses_with(cast.results[0])

        PatternRewriteWalker(
            GreedyRewritePatternApplier(self.patterns()), apply_recursively=False
        ).rewrite_region(function.body)

        self._write_outputs(function)

        for arg in reversed(block.args):
            block.erase_arg(arg)
        function.function_type = FunctionType.from_lists([], [])
        for cast in reversed([o for o in block.ops if isinstance(o, UnrealizedConversionCastOp)]):
            if not any(r.uses for r in cast.results):
                rewriter.erase_op(cast)
        self._erase_empty_loops(function)
        self._erase_dead_buffers(block)

    @staticmethod
    def _erase_empty_loops(function: func.FuncOp) -> None:
        """Loops over empty tensors never run; their bodies may index zero-size buffers, which
        Zig refuses to compile even where unreachable."""
        empty = [o for o in function.walk() if isinstance(o, uop.RangeOp) and o.start.data >= o.end.data]
        for loop in empty:
            if not any(isinstance(a, uop.RangeOp) and a in empty for a in _ancestors(loop)):
                Rewriter.erase_op(loop, safe_erase=False)

    @staticmethod
    def _erase_dead_buffers(block) -> None:
        """Drop views the casts no longer need and constants only shape inference read (e.g. a
        Reshape's target shape); graph inputs and outputs stay, they are the ABI."""
        for op in reversed(list(block.ops)):
            dead = isinstance(op, uop.ViewOp | uop.DefineLocalOp) or (
                isinstance(op, uop.DefineGlobalOp) and op.role.data == "constant"
            )
            if dead and not op.results[0].uses:
                Rewriter.erase_op(op)
        constants = [o for o in block.ops if isinstance(o, uop.DefineGlobalOp) and o.role.data == "constant"]
        for index, constant in enumerate(constants):
            constant.index = IntegerAttr(index, 64)

    def _check_supported(self, function: func.FuncOp) -> None:
        known = supported_ops()
        missing = [o for o in function.walk() if o.name.startswith("onnx.") and o.name not in known]
        if missing:
            labels = [node_label(o) for o in missing]
            shown = ", ".join(labels[:5]) + (f" and {len(labels) - 5} more" if len(labels) > 5 else "")
            raise UnsupportedOpsError(
                f"no lowering to uop yet for {shown}", [_unsupported_op(o) for o in missing]
            )

    def _write_outputs(self, function: func.FuncOp) -> None:
        ret = function.body.block.last_op
        assert isinstance(ret, func.ReturnOp)
        names = _names(function, OUTPUT_NAMES, len(ret.arguments), "output")
        claimed: set[SSAValue] = set()
        for index, value in enumerate(ret.arguments):
            layout = string_layout(value) if string_capacity(value) is not None else layout_of(value)
            owner = layout.buffer.owner
            if (
                isinstance(owner, uop.DefineLocalOp)
                and layout.covers_buffer()
                and layout.buffer not in claimed
            ):
                # The producer wrote exactly this tensor into its own scratch buffer: that
                # buffer becomes the caller's output, no copy.
                output = _mark_strings(uop.DefineGlobalOp("output", index, names[index], owner.result.type), value)
                output.result.name_hint = owner.result.name_hint
                output.location = owner.location
                Rewriter.replace_op(owner, output)
                claimed.add(output.result)
                continue
            output = _mark_strings(uop.DefineGlobalOp("output", index, names[index], _buffer_type(value)), value)
            Rewriter.insert_op(output, InsertPoint.before(ret))
            claimed.add(output.result)
            kb = KernelBuilder(ret)
            copy_layout(kb, layout, Layout.contiguous(output.result, layout.shape))
            # the copy is the producing node's last step (`value` is the cast it lowered to)
            made, step = [], output
            while step is not ret and step is not None:
                made.append(step)
                step = step.next_op
            if isinstance(value.owner, Operation):
                locate(made, value.owner.location)
        ret.operands = []


__all__ = ["OnnxToUopPass", "all_patterns", "supported_ops"]
