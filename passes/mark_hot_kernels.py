"""`mark-hot-kernels`: the kernels that do most of a model's multiplies are marked `zant.hot`, to
be built for speed in a build for size (issue 27, item 5).

A build for size (Zig's ReleaseSmall) gives every function LLVM's `minsize`: no unrolling, the
machine outliner pulling common sequences out of the inner loops, the cheapest rather than the
fastest instructions. On KWS int8 for the Cortex-M4 that is 9.05 M instructions against 5.11 M
in ReleaseFast, at 43.1 KB of flash against 53.0 KB, but the speed is not spread like the size:
the four pointwise Convs built for speed save 0.78 M instructions for 252 B more, the first Conv
0.25 M for 98 B, where the depthwise borders (control, few multiplies) save 2.6 M for 3.6 KB.

So the decision is made here, from the IR, by the multiplies each kernel (`outline-kernels`'
private `func.func`) executes: the products of its ops (`PRODUCTS`, times a vector's lanes)
times the trip counts of the loops around them (`kernel_products`). The fewest kernels that
together hold `share` (default 0.8) of the module's products are marked `zant.hot`, largest
first. The Zig printer builds them in a module of their own when the build is for size
(`zant.backend.zig_printer`, `hot=True`), which the build compiles for speed and the rest for
size (`zant.backend.build`); any other build ignores the mark (every function is built alike).

    func.func private @kernel_y(...) attributes {zant.hot} { ... }
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import IndexType, ModuleOp, UnitAttr, VectorType
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from zant.dialects import arm_dsp, arm_mve, uop
from zant.dialects.zant import HOT

PRODUCTS: dict[type[Operation], Callable[[Operation], int]] = {
    uop.MulOp: lambda op: 1,
    uop.MulAccOp: lambda op: 1,
    arm_dsp.SmladOp: lambda op: 2,
    arm_dsp.SmlaOp: lambda op: 1,
    arm_dsp.SmladBytesOp: lambda op: 4,
    arm_dsp.SmladBytesPairOp: lambda op: 8,
    # 16 products per step, but in an assembly loop (`arm-dsp-tile-loops`): the same code in
    # every mode, nothing a build for speed changes (KWS's pointwise Convs: 4.70 M instructions
    # in ReleaseSmall with them shared, 5.18 M with them hot and the depthwise ones shared).
    arm_dsp.SmladTileOp: lambda op: 0,
    arm_dsp.SmladRowsOp: lambda op: 0,  # a fully connected block's reduction, an assembly loop too
    arm_dsp.SmladLayerOp: lambda op: 0,  # a fully connected layer's blocks, one assembly block
    arm_dsp.SmladWindowOp: lambda op: 0,  # a 3x3 window's 2 x 2 tile (conv_window), an assembly loop too
    arm_dsp.SmladBlockOp: lambda op: 0,  # a pointwise block over widened operands, an assembly loop too
    arm_dsp.SmladTileRowOp: lambda op: 0,  # a row of requantized tiles (arm-dsp-tile-rows, run after), one assembly block
    arm_dsp.SmladBlockRowOp: lambda op: 0,  # a first conv's row of requantized blocks (arm-dsp-block-rows, run after)
    arm_dsp.SmladQuadRowOp: lambda op: 0,  # a budget's pointwise row of 2 x 4 blocks (arm-dsp-block-rows, run after)
    # a depthwise row's 4 outputs (conv_depthwise), a 6-wide row's 6, their loops with epilogues
    # (arm-dsp-depthwise-rows, run after): assembly blocks
    arm_dsp.DepthwiseStepOp: lambda op: 0,
    arm_dsp.DepthwiseRowOp: lambda op: 0,
    arm_dsp.DepthwiseShortRowOp: lambda op: 0,
    arm_dsp.DepthwiseShortRowsOp: lambda op: 0,
    arm_mve.VmlavaOp: lambda op: 1,
}
"""Products one op computes per lane (its operands' lanes for a vector: `VMLAVA` of 16 bytes
is 16) that the build's mode compiles: a multiply of indices (an address) is none, nor are
those of an assembly loop."""

NO_PRODUCTS: frozenset[type[Operation]] = frozenset((
    arm_dsp.LoadWordOp, arm_dsp.Sxtb16Op, arm_dsp.LoadS4x4Op,
    arm_dsp.SmmlaOp, arm_dsp.SsatOp,  # a requantization (arm-dsp-requant): it scales a sum
    arm_mve.VldrbGatherOp, arm_mve.VldrhGatherOp,
    # the requantization epilogue (mve-requantize): its multiply scales a sum, it is no MAC
    arm_mve.VmovLanesOp, arm_mve.VmulhOp, arm_mve.VrshrOp, arm_mve.VstrbScatterOp,
    arm_mve.VmovLaneOp,  # a depthwise sum out of its vector (conv_depthwise_mve), into the epilogue
))
"""The target ops that multiply nothing: every op of `arm_dsp` and `arm_mve` is in `PRODUCTS`
or here (tests/test_hot_kernels.py), so a new dot-product op is counted."""


def _lanes(op: Operation) -> int:
    for value in (*op.operands, *op.results):
        if isinstance(value.type, VectorType):
            return value.type.element_count()
    return 1


def kernel_products(kernel: func.FuncOp) -> int:
    """The products `kernel` computes in one call: each op's (`PRODUCTS`) times the trip counts
    of the loops around it."""
    total = 0
    for op in kernel.walk():
        products = PRODUCTS.get(type(op))
        if products is None or any(isinstance(r.type, IndexType) for r in op.results):
            continue  # an address's multiply is no product of the model's
        trips, parent = 1, op.parent_op()
        while parent is not None and parent is not kernel:
            if isinstance(parent, uop.RangeOp):
                trips *= parent.trip_count
            parent = parent.parent_op()
        total += products(op) * _lanes(op) * trips
    return total


def is_kernel(op: Operation) -> bool:
    """Whether `op` is a kernel `outline-kernels` made (a private function with a body)."""
    return (
        isinstance(op, func.FuncOp)
        and op.sym_visibility is not None
        and op.sym_visibility.data == "private"
        and bool(op.body.blocks)
    )


@dataclass(frozen=True)
class MarkHotKernelsPass(ModulePass):
    """Mark `zant.hot` the fewest kernels holding `share` of the module's products (the module
    docstring)."""

    name = "mark-hot-kernels"

    share: float = 0.8

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernels = [(kernel_products(k), index, k) for index, k in enumerate(op.ops) if is_kernel(k)]
        total = sum(products for products, _, _ in kernels)
        if total == 0:
            return
        covered = 0
        for products, _, kernel in sorted(kernels, key=lambda entry: (-entry[0], entry[1])):
            if covered >= self.share * total or products == 0:
                break
            kernel.attributes[HOT] = UnitAttr()
            covered += products
