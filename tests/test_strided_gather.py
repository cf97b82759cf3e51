"""The host's strided vector load (`zant_vgather`): a small stride loads the span from the first
lane to the last as one vector and shuffles the lanes out. It must give the same lanes as the
element-by-element loop and read nothing past the last lane; a stride-2 MaxPool uses it and
stays exact."""

from __future__ import annotations

import ctypes
import mmap
import re
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from zant.backend.build import build_zig
from zant.backend.zig_helpers import HELPERS
from zant.driver import CompileOptions, compile_model
from zant.runtime import load_compiled, reference_outputs

CASES = [(n, stride) for n in (4, 16) for stride in (1, 2, 3, 4, 5)]


def _guarded_floats(count: int) -> tuple[mmap.mmap, int]:
    """A buffer of `count` float32 that ends where an unreadable page begins: a load past its
    last element faults. Returns the mapping (keep it alive) and the address of the first float."""
    page = mmap.PAGESIZE
    region = mmap.mmap(-1, 2 * page, prot=mmap.PROT_READ | mmap.PROT_WRITE)
    base = ctypes.addressof(ctypes.c_char.from_buffer(region))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    assert libc.mprotect(base + page, page, 0) == 0, ctypes.get_errno()  # PROT_NONE
    return region, base + page - 4 * count


@pytest.mark.skipif(sys.platform != "linux", reason="guards the buffer with mprotect (Linux)")
def test_gather_lanes_end_at_the_last_lane(tmp_path):
    """Each (lanes, stride) gathers from a span that ends at an unreadable page: the lanes are
    elements 0, stride, 2·stride … and nothing after the last is read (a fault would kill the run)."""
    exports = "\n".join(
        f"export fn gather_{n}_{s}(p: *const f32, out: *[{n}]f32) void {{ out.* = zant_vgather({n}, f32, {s}, p); }}"
        for n, s in CASES
    )
    source = tmp_path / "gather.zig"
    source.write_text(f"{HELPERS['zant_vgather'].source}\n{exports}\n")
    library = ctypes.CDLL(str(build_zig(source, tmp_path / "libgather.so", optimize="ReleaseFast")))
    region, first = _guarded_floats(1024)
    values = np.frombuffer((ctypes.c_float * 1024).from_address(first), dtype=np.float32)
    values[:] = np.arange(1024, dtype=np.float32)
    for n, stride in CASES:
        span = (n - 1) * stride + 1
        out = np.zeros(n, np.float32)
        getattr(library, f"gather_{n}_{stride}")(ctypes.c_void_p(first + 4 * (1024 - span)), out.ctypes.data_as(ctypes.c_void_p))
        np.testing.assert_array_equal(out, values[1024 - span :: stride], err_msg=f"{n} lanes, stride {stride}")
    del values
    region.close()


@pytest.mark.parametrize(
    ("shape", "attributes"),
    [
        ([1, 3, 47, 47], {"ceil_mode": 1}),  # SqueezeNet's ceil-mode pool, a ragged last window
        ([1, 3, 48, 48], {"pads": [1, 1, 1, 1]}),  # ResNet's stem pool
    ],
)
def test_stride_two_max_pool_reads_gathered_lanes_exactly(shape, attributes):
    """A 3x3 stride-2 MaxPool on the host: its output columns are stride-2 gathers and the result
    equals the ONNX reference bit for bit (a max is exact)."""
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2], **attributes)
    graph = helper.make_graph(
        [node], "pool", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = onnx.shape_inference.infer_shapes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    with tempfile.TemporaryDirectory(prefix="zant-gather-") as folder:
        path = Path(folder) / "pool.onnx"
        onnx.save(model, path)
        result = compile_model(path, Path(folder) / "out", CompileOptions(name="pool", optimize="ReleaseFast"))
        assert re.search(r"zant_vgather\(16, f32, 2, ", result.zig_path.read_text())
        (got,) = load_compiled(result)(x)
        (want,) = reference_outputs(path, {"x": x})
    assert got.shape == want.shape
    assert got.tobytes() == want.astype(np.float32).tobytes()
