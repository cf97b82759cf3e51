"""The Zig backend end to end: hand-written uop modules → Zig → shared library → ctypes vs NumPy.

All host modules are printed into one directory and built as one library (a root file imports
them all), so the suite pays for one Zig build.
"""

from __future__ import annotations

import ctypes
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from zant.backend.build import build_zig
from zant.backend.elf import section_sizes
from zant.backend.names import Namer, sanitize_c, sanitize_zig, validate_prefix
from zant.backend.plan import emit_header, emit_plan_json
from zant.backend.zig_printer import print_zig
from zant.dialects.abi import ABI
from zant.dialects.uop import UOp
from zant.errors import ZantError
from zant.driver import run_pipeline
from zant.pipelines import PRINT_PIPELINE


def parse(text: str) -> ModuleOp:
    ctx = Context()
    ctx.load_dialect(builtin.Builtin)
    ctx.load_dialect(func.Func)
    ctx.load_dialect(UOp)
    ctx.load_dialect(ABI)
    module = Parser(ctx, text).parse_module()
    module.verify()
    run_pipeline(module, f"plan-arenas,{PRINT_PIPELINE}", ctx)
    return module


def elementwise(n: int, inputs: list[str], outputs: list[tuple[str, str]], names=None) -> str:
    """A module with inputs `in<k>` of the given element types and one loop per output; each
    output's body (text using `%a0`, `%a1` … the loaded inputs) must define `%r`."""
    names = names or {}
    lines = ["builtin.module {", "  func.func @main() {"]
    for k, t in enumerate(inputs):
        lines.append(f'    %in{k} = uop.define_global "input" {k} "in{k}" : !uop.buffer<{n}x{t}>')
    for k, (t, _) in enumerate(outputs):
        lines.append(f'    %out{k} = uop.define_global "output" {k} "out{k}" : !uop.buffer<{n}x{t}>')
    for k, (t, body) in enumerate(outputs):
        lines.append(f"    uop.range %i{k} = 0 to {n} {{")
        for j, it in enumerate(inputs):
            lines.append(f"      %p{j} = uop.gep %in{j}[%i{k}] : !uop.buffer<{n}x{it}>")
            lines.append(f"      %a{j} = uop.load %p{j} : {it}")
        lines.extend("      " + line for line in body.strip().splitlines())
        lines.append(f"      %q = uop.gep %out{k}[%i{k}] : !uop.buffer<{n}x{t}>")
        lines.append(f"      uop.store %r, %q : {t}")
        lines.append("    }")
    lines += ["    func.return", "  }", "}"]
    return "\n".join(lines)


ADD_BROADCAST = """
builtin.module {
  func.func @main() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<6xf32>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<6xf32>
    %w = uop.define_global "constant" 0 "w" value dense<[[1.5, -2.0, 0.25]]> : tensor<1x3xf32> : !uop.buffer<3xf32>
    %t = uop.define_local "sum" : !uop.buffer<6xf32>
    %v = uop.view %x : !uop.buffer<6xf32> -> !uop.view<2x3xf32, strides [3, 1], offset 0>
    %b = uop.view %w : !uop.buffer<3xf32> -> !uop.view<2x3xf32, strides [0, 1], offset 0>
    %tv = uop.view %t : !uop.buffer<6xf32> -> !uop.view<2x3xf32, strides [3, 1], offset 0>
    uop.range %i = 0 to 2 {
      uop.range %j = 0 to 3 {
        %p = uop.gep %v[%i, %j] : !uop.view<2x3xf32, strides [3, 1], offset 0>
        %a = uop.load %p : f32
        %q = uop.gep %b[%i, %j] : !uop.view<2x3xf32, strides [0, 1], offset 0>
        %c = uop.load %q : f32
        %s = uop.add %a, %c : f32
        %o = uop.gep %tv[%i, %j] : !uop.view<2x3xf32, strides [3, 1], offset 0>
        uop.store %s, %o : f32
      }
    }
    uop.range %k = 0 to 6 {
      %p2 = uop.gep %t[%k] : !uop.buffer<6xf32>
      %a2 = uop.load %p2 : f32
      %z = uop.const 0.0 : f32
      %r = uop.max %a2, %z : f32
      %o2 = uop.gep %y[%k] : !uop.buffer<6xf32>
      uop.store %r, %o2 : f32
    }
    func.return
  }
}
"""

# y[i] = sum_j x[i, j] * w[j] (f32) and the same in i32 with wrapping.
MATVEC = """
builtin.module {
  func.func @main() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<12xf32>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<4xf32>
    %w = uop.define_global "input" 1 "w" : !uop.buffer<3xf32>
    %xv = uop.view %x : !uop.buffer<12xf32> -> !uop.view<4x3xf32, strides [3, 1], offset 0>
    uop.range %i = 0 to 4 {
      %acc = uop.define_acc 0.5 : f32
      uop.range %j = 0 to 3 {
        %p = uop.gep %xv[%i, %j] : !uop.view<4x3xf32, strides [3, 1], offset 0>
        %a = uop.load %p : f32
        %q = uop.gep %w[%j] : !uop.buffer<3xf32>
        %b = uop.load %q : f32
        uop.mulacc %acc, %a, %b : !uop.acc<f32>, f32
      }
      %s = uop.acc_get %acc : !uop.acc<f32>, f32
      %o = uop.gep %y[%i] : !uop.buffer<4xf32>
      uop.store %s, %o : f32
    }
    func.return
  }
}
"""

N = 4096
CASTS = elementwise(
    N,
    ["f32", "i32"],
    [
        ("i8", "%r = uop.cast %a0 : f32 to i8"),
        ("i1", "%r = uop.cast %a0 : f32 to i1"),
        ("f32", "%b = uop.cast %a0 : f32 to i1\n%r = uop.cast %b : i1 to f32"),
        ("f32", "%r = uop.cast %a1 : i32 to f32"),
        ("i8", "%r = uop.cast %a1 : i32 to i8"),
        ("ui16", "%r = uop.cast %a1 : i32 to ui16"),
        ("i64", "%r = uop.cast %a1 : i32 to i64"),
        ("ui8", "%r = uop.cast %a0 : f32 to ui8"),
    ],
)
INTEGERS = elementwise(
    N,
    ["i8", "i8", "ui8"],
    [
        ("i8", "%r = uop.add %a0, %a1 : i8"),
        ("i8", "%r = uop.mul %a0, %a1 : i8"),
        ("i8", "%r = uop.neg %a0 : i8"),
        ("i8", "%r = uop.abs %a0 : i8"),
        ("ui8", "%r = uop.shl %a2, %a2 : ui8"),
        ("ui8", "%r = uop.shr %a2, %a2 : ui8"),
        ("i8", "%r = uop.shr %a0, %a1 : i8"),
        ("i8", "%r = uop.max %a0, %a1 : i8"),
    ],
)
MATH = elementwise(
    N,
    ["f32", "f64"],
    [
        ("f32", "%r = uop.erf %a0 : f32"),
        ("f64", "%r = uop.erf %a1 : f64"),
        ("f32", "%r = uop.tanh %a0 : f32"),
        ("f32", "%r = uop.round %a0 : f32"),
        ("f32", "%r = uop.max %a0, %a0 : f32"),
        ("f32", "%r = uop.sign %a0 : f32"),
        ("f16", "%h = uop.cast %a0 : f32 to f16\n%r = uop.tanh %h : f16"),
    ],
)

HOSTILE_NAMES = ['a"b', "c\nd", "e\\f", "while", "caf\u00e9", "x-y", "x y", "0abc", "u8", "u8_"]


def hostile_module() -> str:
    def quoted(text: str) -> str:
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'

    lines = ["builtin.module {", "  func.func @main() {"]
    for k, name in enumerate(HOSTILE_NAMES):
        lines.append(f"    %i{k} = uop.define_global \"input\" {k} {quoted(name)} : !uop.buffer<2xi32>")
        lines.append(f"    %o{k} = uop.define_global \"output\" {k} {quoted(name)} : !uop.buffer<2xi32>")
        lines.append(f"    %t{k} = uop.define_local {quoted(name)} : !uop.buffer<2xi32>")
    for k in range(len(HOSTILE_NAMES)):
        lines += [
            f"    uop.range %k{k} = 0 to 2 {{",
            f"      %p{k} = uop.gep %i{k}[%k{k}] : !uop.buffer<2xi32>",
            f"      %v{k} = uop.load %p{k} : i32",
            f"      %s{k} = uop.gep %t{k}[%k{k}] : !uop.buffer<2xi32>",
            f"      uop.store %v{k}, %s{k} : i32",
            f"      %u{k} = uop.load %s{k} : i32",
            f"      %q{k} = uop.gep %o{k}[%k{k}] : !uop.buffer<2xi32>",
            f"      uop.store %u{k}, %q{k} : i32",
            "    }",
        ]
    lines += ["    func.return", "  }", "}"]
    return "\n".join(lines)


MODULES = {
    "addb": ADD_BROADCAST,
    "matvec": MATVEC,
    "casts": CASTS,
    "ints": INTEGERS,
    "math": MATH,
    "hostile": hostile_module(),
}


@pytest.fixture(scope="session")
def zig_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("zig-cache")


@pytest.fixture(scope="session")
def library(tmp_path_factory, zig_cache) -> ctypes.CDLL:
    out = tmp_path_factory.mktemp("zig")
    imports = []
    for name, text in MODULES.items():
        (out / f"{name}.zig").write_text(print_zig(parse(text), name))
        imports.append(f'    _ = @import("{name}.zig");')
    (out / "root.zig").write_text("comptime {\n" + "\n".join(imports) + "\n}\n")
    path = build_zig(out / "root.zig", out / "libzant_test.so", "host", "ReleaseSafe", "shared",
                     cache_dir=zig_cache)
    return ctypes.CDLL(str(path))


def call(lib: ctypes.CDLL, name: str, *arrays: np.ndarray) -> None:
    fn = getattr(lib, f"{name}_predict")
    fn.restype = ctypes.c_int32
    pointers = [a.ctypes.data_as(ctypes.c_void_p) for a in arrays]
    assert fn(*pointers) == 0


def test_add_broadcast(library):
    x = np.arange(6, dtype=np.float32).reshape(2, 3) - 3.0
    y = np.zeros(6, np.float32)
    call(library, "addb", x, y)
    expected = np.maximum(x + np.array([1.5, -2.0, 0.25], np.float32), 0).reshape(-1)
    np.testing.assert_array_equal(y, expected)


def test_matvec_accumulator(library):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    w = rng.standard_normal(3).astype(np.float32)
    y = np.zeros(4, np.float32)
    call(library, "matvec", x, w, y)  # inputs by index, then outputs
    np.testing.assert_allclose(y, x @ w + 0.5, rtol=1e-6)


def test_casts(library):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(N) * 300).astype(np.float32)
    x[:6] = [np.nan, np.inf, -np.inf, -0.0, 127.9, -128.9]
    z = rng.integers(-(2**31), 2**31, N, dtype=np.int64).astype(np.int32)
    outs = [np.zeros(N, t) for t in (np.int8, np.bool_, np.float32, np.float32, np.int8,
                                      np.uint16, np.int64, np.uint8)]
    call(library, "casts", x, z, *outs)
    with np.errstate(invalid="ignore"):
        saturated = np.clip(np.nan_to_num(np.trunc(x), nan=0.0, posinf=127, neginf=-128), -128, 127)
        saturated_u8 = np.clip(np.nan_to_num(np.trunc(x), nan=0.0, posinf=255, neginf=0), 0, 255)
    np.testing.assert_array_equal(outs[0], saturated.astype(np.int8))
    np.testing.assert_array_equal(outs[1], x != 0)
    np.testing.assert_array_equal(outs[2], (x != 0).astype(np.float32))
    np.testing.assert_array_equal(outs[3], z.astype(np.float32))
    np.testing.assert_array_equal(outs[4], z.astype(np.int8))
    np.testing.assert_array_equal(outs[5], z.astype(np.uint16))
    np.testing.assert_array_equal(outs[6], z.astype(np.int64))
    np.testing.assert_array_equal(outs[7], saturated_u8.astype(np.uint8))


def test_integer_wrapping_and_shifts(library):
    a = np.arange(N, dtype=np.int64).astype(np.int8)
    b = (np.arange(N, dtype=np.int64) // 256 * 7 + 3).astype(np.int8)
    c = (np.arange(N) % 256).astype(np.uint8)
    outs = [np.zeros(N, t) for t in (np.int8,) * 4 + (np.uint8,) * 2 + (np.int8,) * 2]
    call(library, "ints", a, b, c, *outs)
    np.testing.assert_array_equal(outs[0], a + b)  # NumPy int8 arithmetic wraps too
    np.testing.assert_array_equal(outs[1], a * b)
    np.testing.assert_array_equal(outs[2], -a)
    np.testing.assert_array_equal(outs[3], np.abs(a))
    wide = c.astype(np.int64)
    np.testing.assert_array_equal(outs[4], np.where(wide < 8, (wide << np.minimum(wide, 7)) & 255, 0))
    np.testing.assert_array_equal(outs[5], np.where(wide < 8, wide >> np.minimum(wide, 7), 0))
    shift = b.astype(np.int64)
    expected_shr = np.where(shift < 0, 0, a.astype(np.int64) >> np.clip(shift, 0, 7))
    np.testing.assert_array_equal(outs[6], expected_shr.astype(np.int8))
    np.testing.assert_array_equal(outs[7], np.maximum(a, b))


def test_math_accuracy(library):
    rng = np.random.default_rng(2)
    x64 = np.concatenate([np.linspace(-7, 7, N // 2), rng.standard_normal(N // 2) * 3])
    x64[:8] = [0.0, -0.0, 0.5, 1.5, 2.5, -2.5, 1e-30, 6.5]
    x32 = x64.astype(np.float32)
    outs = [np.zeros(N, t) for t in (np.float32, np.float64, np.float32, np.float32, np.float32,
                                      np.float32, np.float16)]
    call(library, "math", x32, x64, *outs)
    erf32 = np.array([math.erf(float(v)) for v in x32]).astype(np.float32)
    np.testing.assert_array_max_ulp(outs[0], erf32, maxulp=1)
    erf64 = np.array([math.erf(v) for v in x64])
    # f64 erf: the term recurrence of the series costs some ulp (see zant_erf); bounded at 16
    np.testing.assert_array_max_ulp(outs[1], erf64, maxulp=16)
    np.testing.assert_array_max_ulp(outs[2], np.tanh(x32), maxulp=2)
    np.testing.assert_array_equal(outs[3], np.round(x32))
    np.testing.assert_array_equal(outs[4], x32)
    np.testing.assert_array_equal(outs[5], np.sign(x32))
    np.testing.assert_array_max_ulp(outs[6], np.tanh(x32.astype(np.float16)), maxulp=1)


@pytest.mark.parametrize(
    "pipeline",
    [
        None,
        "fold-constants,onnx-to-uop,plan-arenas,expand-float-minmax,linearize-geps",
        "fold-constants,onnx-to-uop,plan-arenas,linearize-geps",
    ],
    ids=["vector", "scalar", "helpers"],
)
def test_nan_propagating_max_min(pipeline):
    # NaN in either operand of max/min gives NaN, against a constant bound too (Relu, Clip,
    # Max with a constant: the one-compare form) and between two tensors (the helpers).
    from e2e import check_model
    from onnx import TensorProto, helper, numpy_helper

    shape = [3, 21]
    nodes = [
        helper.make_node("Relu", ["x"], ["relu"]),
        helper.make_node("Clip", ["x", "lo", "hi"], ["clip"]),
        helper.make_node("Max", ["x", "y"], ["max"]),
        helper.make_node("Min", ["two", "y"], ["min"]),
    ]
    constants = [numpy_helper.from_array(np.array(v, np.float32), n) for n, v in (("lo", -1), ("hi", 1), ("two", 2))]
    values = [helper.make_tensor_value_info(n, TensorProto.FLOAT, shape) for n in ("x", "y")]
    outputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, shape) for n in ("relu", "clip", "max", "min")]
    model = helper.make_model(helper.make_graph(nodes, "nan", values, outputs, constants),
                              opset_imports=[helper.make_opsetid("", 13)])
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal(shape).astype(np.float32) * 3 for _ in range(2))
    x[0, ::3], y[1, ::4], x[2, 5], y[2, 5] = np.nan, np.nan, np.nan, np.nan
    ours = check_model(model, {"x": x, "y": y}, pipeline=pipeline)
    assert all(np.isnan(o).any() for o in ours)


def test_hostile_names_build_and_run(library):
    arrays = []
    for k in range(len(HOSTILE_NAMES)):
        arrays.append(np.array([k, -k], np.int32))
    outs = [np.zeros(2, np.int32) for _ in HOSTILE_NAMES]
    call(library, "hostile", *arrays, *outs)
    for k, out in enumerate(outs):
        np.testing.assert_array_equal(out, [k, -k])


def test_header_compiles_and_plan_is_stable(tmp_path, zig_cache):
    for name, text in MODULES.items():
        header = emit_header(parse(text), name)
        (tmp_path / f"{name}.h").write_text(header)
        assert f"{name}_PLAN_HASH" in header and f"{name}_INPUT_0_SIZE" in header
    source = "".join(f'#include "{name}.h"\n' for name in MODULES) + "int main(void) { return 0; }\n"
    (tmp_path / "main.c").write_text(source)
    result = subprocess.run(
        [sys.executable, "-m", "ziglang", "cc", "-c", "-o", "main.o", "-Wall", "-Werror",
         "-Wno-unused-command-line-argument", "main.c"],
        cwd=tmp_path, capture_output=True, text=True,
        env={"ZIG_GLOBAL_CACHE_DIR": str(zig_cache / "global"), "PATH": "/usr/bin:/bin",
             "ZIG_LOCAL_CACHE_DIR": str(zig_cache / "local")},
    )
    assert result.returncode == 0, result.stderr
    first = emit_plan_json(parse(ADD_BROADCAST), "addb")
    second = emit_plan_json(parse(ADD_BROADCAST), "addb")
    assert json.dumps(first) == json.dumps(second)
    assert {"arenas", "lower_bound_bytes", "plan_hash", "tensor_layout_hash", "tensors"} <= set(first)
    assert first["arenas"][0] == {"role": "scratch", "size": 32, "alignment": 16}
    assert first["lower_bound_bytes"] == 24
    sum_ = next(t for t in first["tensors"] if t["name"] == "sum")
    assert sum_ | {"region": None} == {
        "name": "sum", "role": "scratch", "memory": "ram", "region": None, "offset": 0, "size": 24, "element_type": "f32"
    }
    assert sum_["region"] == next(r["id"] for r in first["regions"] if r["name"] == "scratch")


def test_lower_bound_reuses_dead_buffers():
    # two scratch buffers used one after the other: the bound is the larger, not the sum
    text = """
builtin.module {
  func.func @main() {
    %a = uop.define_local "a" : !uop.buffer<8xf32>
    %b = uop.define_local "b" : !uop.buffer<4xf32>
    uop.range %i = 0 to 4 {
      %p = uop.gep %a[%i] : !uop.buffer<8xf32>
      %z = uop.const 1.0 : f32
      uop.store %z, %p : f32
    }
    uop.range %j = 0 to 4 {
      %q = uop.gep %b[%j] : !uop.buffer<4xf32>
      %z2 = uop.const 2.0 : f32
      uop.store %z2, %q : f32
    }
    func.return
  }
}
"""
    plan = emit_plan_json(parse(text), "m")
    assert plan["lower_bound_bytes"] == 32
    assert plan["arenas"][0]["size"] == 32  # plan-arenas reuses a's bytes for b


def test_cortex_m4_object_size(tmp_path, zig_cache):
    (tmp_path / "m.zig").write_text(print_zig(parse(ADD_BROADCAST), "m"))
    obj = build_zig(tmp_path / "m.zig", tmp_path / "m.o", "cortex-m4", "ReleaseSmall", "obj",
                    cache_dir=zig_cache)
    sizes = section_sizes(obj)
    assert 0 < sizes[".text"] < 1024
    assert sizes[".bss"] == 32


def test_names():
    assert sanitize_zig("while") == "while_"
    assert sanitize_zig("u8") == "u8_"
    assert sanitize_zig("0abc") == "_0abc"
    assert sanitize_zig("caf\u00e9") == "caf_u00e9"
    assert sanitize_zig("") == "t"
    assert sanitize_c("int") == "int_"
    namer = Namer({"x"})
    assert [namer.fresh("x"), namer.fresh("x"), namer.fresh("y")] == ["x_1", "x_2", "y"]
    assert validate_prefix("net_1") == "net_1"
    for bad in ("1net", "my-net", "", "while", "int", "u8"):
        with pytest.raises(ZantError):
            validate_prefix(bad)


def test_empty_tensors_compile_and_run():
    """Copies and element-wise loops over zero-size tensors are dropped (Zig refuses to index an
    empty array even in a loop that never runs)."""
    import onnx
    from onnx import TensorProto, helper

    from e2e import check_model

    nodes = [
        helper.make_node("Shape", ["x"], ["s"], start=2, end=1),  # empty int64 output
        helper.make_node("ConstantOfShape", ["zero"], ["z"], value=helper.make_tensor("v", TensorProto.INT32, [1], [7])),
        helper.make_node("Relu", ["x"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "empty",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [
            helper.make_tensor_value_info("s", TensorProto.INT64, [0]),
            helper.make_tensor_value_info("z", TensorProto.INT32, [0]),
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3]),
        ],
        [helper.make_tensor("zero", TensorProto.INT64, [1], [0])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    s, z, y = check_model(model)
    assert s.shape == (0,) and z.shape == (0,) and y.shape == (2, 3)
