"""The `uop` dialect: Z-Ant's micro-ops as an MLIR-style dialect.

A model lowered to uop is a flat program over flat buffers:

* buffers: `uop.define_global` (a graph input, output or constant) and `uop.define_local`
  (a scratch intermediate; `plan-arenas` gives it an offset in the scratch arena);
* `uop.view` re-reads a buffer with a shape, strides (0 = broadcast) and an offset, emitting no code,
  so transposes, broadcasts, reshapes and slices cost nothing;
* `uop.gep` turns a buffer or view and one index per dimension into a `!uop.ptr`, which
  `uop.load` / `uop.store` read and write;
* `uop.range` is a counted loop whose region's block argument is the induction variable;
  `uop.endrange` terminates its body (implicitly, it is not printed);
* scalar values are plain builtin types (`f32`, `i8`, `i1`, `index` …), computed by one op per
  ALU primitive (`uop.add`, `uop.exp`, `uop.cmplt` …), `uop.cast`, `uop.where` and `uop.const`;
* `uop.define_acc` makes a mutable scalar cell (`!uop.acc<T>`) for reductions: `uop.mulacc`
  adds a product into it, `uop.acc_set` overwrites it, `uop.acc_get` reads it;
* vectors (`vector<8xf32>`, made by the `vectorize` pass): `uop.vload` / `uop.vstore` read and
  write N consecutive elements from a gep, `uop.broadcast` splats a scalar, the ALU ops of
  `VECTOR_ALU_OPS`, `uop.mulacc` (on a `!uop.acc<vector<…>>`) and lossless `uop.cast`s work
  lane by lane, the compares give a `vector<N x i1>` that a `uop.where` selects lanes with, and
  `uop.reduce_add` sums the lanes.

Index arithmetic uses the same ALU ops on `index` values; integer `div` truncates toward zero and
`rem` takes the sign of the dividend (C semantics), as Zig's `@divTrunc` / `@rem` do.

The dialect is split by concern, as MLIR splits memref, arith and scf: `types` (types,
attributes, enums, traits), `memory` (buffers, views, geps, loads and stores), `alu` (constants,
ALU primitives, casts, select, and their folding) and `loops` (ranges and accumulators). The
arena plan and the statuses the generated function returns are the `abi` dialect
(`zant.dialects.abi`). Every name is importable from here: `from zant.dialects import uop;
uop.AddOp`.
"""

from xdsl.ir import Dialect

from zant.dialects.uop.alu import (  # noqa: F401 (the dialect's names, re-exported)
    BroadcastOp, ReduceAddOp, ConstOp, wrap_integer, constant_of, fold_cast,
    UOpConstantMaterialization, VECTOR_ALU_OPS, BinaryOp, FloatOnly, IntegerOnly, UnaryOp,
    compare_result_type, CompareOp, AddOp, SubOp, MulOp, DivOp, RemOp, MaxOp, MinOp, PowOp,
    AndOp, OrOp, XorOp, ShlOp, ShrOp, NegOp, AbsOp, SignOp, SqrtOp, RecipOp, ExpOp, LogOp,
    TanhOp, ErfOp, FloorOp, CeilOp, RoundOp, SinOp, CosOp, TanOp, AsinOp, AcosOp, AtanOp,
    SinhOp, CoshOp, AsinhOp, AcoshOp, AtanhOp, IsnanOp, NotOp, CmpltOp, CmpleOp, CmpeqOp,
    CmpneOp, ALU_OPS, BINARY_OPS, FLOAT_BINARY_OPS, INTEGER_BINARY_OPS, UNARY_OPS,
    FLOAT_UNARY_OPS, INTEGER_UNARY_OPS, COMPARE_OPS, FmaOp, CastOp, CastUnsaturatedOp, is_lossless_cast, BitcastOp,
    WhereOp,
)
from zant.dialects.uop.loops import (  # noqa: F401 (the dialect's names, re-exported)
    LoopLike, EndRangeOp, RangeOp, EraseEmptyRange, InlineSingleIterationRange, DefineAccOp,
    MulAccOp, AccSetOp, AccGetOp,
)
from zant.dialects.uop.memory import (  # noqa: F401 (the dialect's names, re-exported)
    DefineGlobalOp, GlobalBufferEffect, DefineLocalOp, ViewOp, GepOp, LoadOp, StoreOp, VLoadOp,
    VStoreOp, BoundIndexOp,
)
from zant.dialects.uop.types import (  # noqa: F401 (the dialect's names, re-exported)
    ScalarType, is_scalar_type, is_float_type, is_vector_type, lane_type, lanes, build,
    Accesses, BindsOutsideMemory, PureUnlessTrapping, BufferType, ViewType, PtrType, AccType,
    element_byte_size, memory_element_type, BufferRole, BUFFER_ROLES, print_quoted_enum,
    parse_enum, BufferRoleAttr, StepRangeAttr, verify_vector_of,
)

UOp = Dialect(
    "uop",
    [
        DefineGlobalOp,
        DefineLocalOp,
        ViewOp,
        GepOp,
        LoadOp,
        StoreOp,
        ConstOp,
        *ALU_OPS.values(),
        CastOp,
        CastUnsaturatedOp,
        BitcastOp,
        WhereOp,
        FmaOp,
        BoundIndexOp,
        VLoadOp,
        VStoreOp,
        BroadcastOp,
        ReduceAddOp,
        RangeOp,
        EndRangeOp,
        DefineAccOp,
        MulAccOp,
        AccSetOp,
        AccGetOp,
    ],
    [
        BufferType,
        ViewType,
        PtrType,
        AccType,
        BufferRoleAttr,
        StepRangeAttr,
    ],
    [UOpConstantMaterialization()],
)
