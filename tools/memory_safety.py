"""Hostile indices against guard pages: no input value may make generated code touch memory it
does not own.

    python -m zant.tools.memory_safety [--ops Gather,OneHot,...] [--modes Debug,ReleaseSafe,ReleaseFast,ReleaseSmall]
                                       [--targets host,cortex-m4] [--random N] [--seed S]

Every op whose addresses depend on input values gets a small model in which those values are a
graph input (`CASES`); so does a decoder of encoded bytes (ImageDecoder's JPEG: truncated and
corrupted streams, and PNG's, TIFF's, JPEG 2000's and WebP's, their expected result from
`zant.dialects.image_reference`). Each model is built for each target and mode and called with valid values
(the outputs must equal onnxruntime's) and with hostile ones: the extent itself, one past the
negative range, far out, the integer type's extremes, and `--random N` more drawn from a seeded
generator. A hostile call must return the documented status (`NAME_STATUS_BAD_INDEX`, or
`NAME_STATUS_BAD_PARAMETER` for a parameter input) with every output as it was, never fault,
trap or read or write outside its buffers.

On the host each call runs in a child process with every input and output placed against an
unmapped page (`GuardedBuffers`): once ending right before one, once starting right after one, so
any access past either end is a segmentation fault, which the report shows as such. As Cortex-M
firmware, the hostile values are embedded in the image, which runs under QEMU; a fault or a panic
is reported as such.

Exit status 0 when every call behaved, 1 otherwise.
"""

from __future__ import annotations

import argparse
import ctypes
import mmap
import multiprocessing
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from zant.dialects.abi import Status
from zant.errors import ZantError, run_cli

PAGE = mmap.PAGESIZE
SENTINEL = 0x5A  # every output byte before a call: a refused call leaves them so


# -- guard pages ----------------------------------------------------------------------------------

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
PROT_NONE = 0


class GuardedBuffers:
    """Buffers each in its own mapping, flush against a page no access is allowed to: `end`
    places a buffer's last byte right before the unmapped page, `start` its first byte right
    after one."""

    def __init__(self, placement: str):
        if placement not in ("start", "end"):
            raise ValueError(placement)
        self.placement = placement
        self._maps: list[mmap.mmap] = []

    def place(self, data: bytes | int) -> tuple[int, memoryview]:
        """A buffer holding `data` (or that many sentinel bytes): its address and a view of it."""
        size = data if isinstance(data, int) else len(data)
        pages = max(1, -(-size // PAGE))
        mapping = mmap.mmap(-1, (pages + 2) * PAGE, prot=mmap.PROT_READ | mmap.PROT_WRITE)
        self._maps.append(mapping)
        base = ctypes.addressof(ctypes.c_char.from_buffer(mapping))
        for guard in (base, base + (pages + 1) * PAGE):
            if _libc.mprotect(ctypes.c_void_p(guard), PAGE, PROT_NONE) != 0:
                raise OSError(ctypes.get_errno(), "mprotect failed")
        offset = PAGE if self.placement == "start" else (pages + 1) * PAGE - size
        view = memoryview(mapping)[offset : offset + size]
        view[:] = bytes([SENTINEL]) * size if isinstance(data, int) else data
        return base + offset, view


def _guarded_call(library: str, name: str, inputs: list[bytes], output_sizes: list[int], placement: str, queue):
    """In the child: place the buffers, call NAME_predict, send back its status and outputs."""
    import faulthandler

    faulthandler.disable()  # a fault here is the finding, reported by the parent: no dump
    buffers = GuardedBuffers(placement)
    placed_inputs = [buffers.place(data) for data in inputs]
    placed_outputs = [buffers.place(size) for size in output_sizes]
    predict = getattr(ctypes.CDLL(library), f"{name}_predict")
    predict.restype = ctypes.c_int32
    predict.argtypes = [ctypes.c_void_p] * (len(inputs) + len(output_sizes))
    status = predict(*(address for address, _ in placed_inputs + placed_outputs))
    queue.put((status, [bytes(view) for _, view in placed_outputs]))


@dataclass
class Outcome:
    """What one call did: its status and outputs, or how it died (`crash`: a signal's name)."""

    status: int | None = None
    outputs: list[bytes] = field(default_factory=list)
    crash: str | None = None


def call_guarded(library: Path, name: str, inputs: Sequence[np.ndarray], output_sizes: Sequence[int],
                 placement: str, timeout: float = 60) -> Outcome:
    """`NAME_predict` of a host library in a child process, its buffers against guard pages."""
    import signal

    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(
        target=_guarded_call,
        args=(str(library), name, [np.ascontiguousarray(a).tobytes() for a in inputs], list(output_sizes), placement, queue),
    )
    child.start()
    child.join(timeout)
    if child.is_alive():
        child.kill()
        return Outcome(crash="timeout")
    if child.exitcode != 0:
        code = -child.exitcode if child.exitcode < 0 else None
        return Outcome(crash=signal.Signals(code).name if code else f"exit {child.exitcode}")
    status, outputs = queue.get(timeout=5)
    return Outcome(status, outputs)


# -- the ops --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """A model whose input `hostile` addresses memory: `extent` is the valid range's size (values
    in [-extent, extent) are valid where ONNX allows negative ones, else [0, extent))."""

    name: str
    build: Callable[[], object]  # -> onnx.ModelProto
    hostile: str  # the graph input holding the indices
    extent: int
    negative: bool = True  # whether -extent..-1 are valid
    status: int = Status.BAD_INDEX
    dtype: str = "int64"
    encoded: Callable[[np.random.Generator, int], list[Trial]] | None = None
    """For encoded bytes rather than indices (`extent` unused): the trials, valid first, given the
    generator and the number of random corruptions to add."""


@dataclass(frozen=True)
class Trial:
    """One call: its inputs, the status it must return and, for status 0, the outputs it must
    give (None: onnxruntime's); a refused call leaves every output as it was."""

    label: str
    feeds: dict[str, np.ndarray]
    status: int
    expected: list[np.ndarray] | None = None


def _model(nodes, inputs, outputs, initializers=(), opset=18, domains=()):
    from onnx import helper

    graph = helper.make_graph(nodes, "hostile", inputs, outputs, list(initializers))
    opsets = [helper.make_opsetid("", opset), *(helper.make_opsetid(d, 1) for d in domains)]
    return helper.make_model(graph, opset_imports=opsets, ir_version=8)


def _cases() -> list[Case]:
    from onnx import TensorProto, helper, numpy_helper

    f32, i64 = TensorProto.FLOAT, TensorProto.INT64
    value = helper.make_tensor_value_info
    table = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(4, 3), "x")

    def gather(axis: int):
        shape = [2, 3] if axis == 0 else [4, 2]
        return lambda: _model(
            [helper.make_node("Gather", ["x", "i"], ["y"], axis=axis)],
            [value("i", i64, [2])], [value("y", f32, shape)], [table],
        )

    def gather_elements():
        return _model(
            [helper.make_node("GatherElements", ["x", "i"], ["y"], axis=0)],
            [value("i", i64, [2, 3])], [value("y", f32, [2, 3])], [table],
        )

    def gather_nd():
        return _model(
            [helper.make_node("GatherND", ["x", "i"], ["y"])],
            [value("i", i64, [2, 1])], [value("y", f32, [2, 3])], [table],
        )

    def scatter_elements():
        return _model(
            [helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=0)],
            [value("x", f32, [4, 3]), value("i", i64, [1, 3]), value("u", f32, [1, 3])], [value("y", f32, [4, 3])],
        )

    def scatter_nd():
        return _model(
            [helper.make_node("ScatterND", ["x", "i", "u"], ["y"])],
            [value("x", f32, [4, 3]), value("i", i64, [1, 1]), value("u", f32, [1, 3])], [value("y", f32, [4, 3])],
        )

    def one_hot():
        depth = numpy_helper.from_array(np.array(5, np.int64), "depth")
        values = numpy_helper.from_array(np.array([0, 1], np.float32), "values")
        return _model(
            [helper.make_node("OneHot", ["i", "depth", "values"], ["y"])],
            [value("i", i64, [3])], [value("y", f32, [3, 5])], [depth, values],
        )

    def max_unpool():
        return _model(
            [helper.make_node("MaxUnpool", ["x", "i"], ["y"], kernel_shape=[2, 2], strides=[2, 2])],
            [value("x", f32, [1, 1, 2, 2]), value("i", i64, [1, 1, 2, 2])], [value("y", f32, [1, 1, 4, 4])],
            opset=11,
        )

    def array_feature_extractor():
        return _model(
            [helper.make_node("ArrayFeatureExtractor", ["x", "i"], ["y"], domain="ai.onnx.ml")],
            [value("i", i64, [2])], [value("y", f32, [4, 2])], [table], domains=("ai.onnx.ml",),
        )

    def image_decoder(kind: str):
        return lambda: _model(
            [helper.make_node("ImageDecoder", ["data"], ["y"], pixel_format="RGB")],
            [value("data", TensorProto.UINT8, [len(_suite_image(kind)[0])])], [value("y", TensorProto.UINT8, [32, 32, 3])],
            opset=20,
        )

    return [
        Case("ImageDecoder JPEG", image_decoder("jpeg"), "data", 0, status=Status.OUTPUT_SIZE, encoded=jpeg_trials),
        Case("ImageDecoder PNG", image_decoder("png"), "data", 0, status=Status.OUTPUT_SIZE, encoded=png_trials),
        Case("ImageDecoder TIFF", image_decoder("tiff"), "data", 0, status=Status.OUTPUT_SIZE, encoded=tiff_trials),
        Case("ImageDecoder JPEG 2000", image_decoder("jpeg2k"), "data", 0, status=Status.OUTPUT_SIZE, encoded=jp2_trials),
        Case("ImageDecoder WebP", image_decoder("webp"), "data", 0, status=Status.OUTPUT_SIZE, encoded=webp_trials),
        Case("Gather axis 0", gather(0), "i", 4),
        Case("Gather axis 1", gather(1), "i", 3),
        Case("GatherElements", gather_elements, "i", 4),
        Case("GatherND", gather_nd, "i", 4),
        Case("ScatterElements", scatter_elements, "i", 4),
        Case("ScatterND", scatter_nd, "i", 4),
        # OneHot: an index outside [-depth, depth) gives an all-off row, as ONNX defines: no status
        Case("OneHot", one_hot, "i", 5, status=0),
        Case("MaxUnpool", max_unpool, "i", 16, negative=False),
        # ArrayFeatureExtractor: negative indices count from the end as in onnx's reference
        # evaluator (onnxruntime refuses them); beyond -extent they are out of range
        Case("ArrayFeatureExtractor", array_feature_extractor, "i", 3),
    ]


def _suite_image(kind: str) -> tuple[bytes, np.ndarray]:
    """The node suite's JPEG (32 x 32, 4:2:0), PNG, TIFF, JPEG 2000 ("jpeg2k") or WebP (32 x 32 RGB)
    and the RGB pixels onnx's reference decodes it to."""
    from onnx.backend.test.case.node import _image_decoder_data

    frozen = getattr(_image_decoder_data, f"image_decoder_decode_{kind}_rgb")
    return np.asarray(frozen.data, np.uint8).tobytes(), np.asarray(frozen.output, np.uint8)


def _corrupted(rng: np.random.Generator, data: bytes, count: int, first: int, end: int, most: int) -> Iterator[bytes]:
    """`count` copies of `data`, each with 1 to `most` - 1 of its bytes in [first, end) replaced by
    random ones (the image cases' random corruptions)."""
    for _ in range(count):
        corrupted = bytearray(data)
        for at in rng.integers(first, end, int(rng.integers(1, most))):
            corrupted[at] = int(rng.integers(0, 256))
        yield bytes(corrupted)


def _image_trial(kind: str, label: str, encoded: bytes, size: int) -> Trial:
    """A call on `encoded` (cut or zero-padded to `size`), expecting what the reference decoder
    of `kind` gives."""
    from zant.dialects import image_reference

    encoded = encoded[:size].ljust(size, b"\0")
    decoded = getattr(image_reference, f"decode_{'jp2' if kind == 'jpeg2k' else kind}")(encoded, 32, 32, "rgb")
    feeds = {"data": np.frombuffer(encoded, np.uint8).copy()}
    return Trial(label, feeds, Status.OUTPUT_SIZE) if decoded is None else Trial(label, feeds, 0, [decoded])


def jpeg_trials(rng: np.random.Generator, random: int) -> list[Trial]:
    """The suite's JPEG, then hostile versions of it (same length, zero-padded): truncated at the
    header, in the scan and before the end marker, segment lengths past the end, a Huffman table
    of more than 256 codes, a frame of 4 components, all 0xFF; and `random` with bytes replaced,
    each expected to give what `image_reference.decode_jpeg` gives (some still decode)."""
    data, pixels = _suite_image("jpeg")
    size = len(data)

    def trial(label: str, encoded: bytes) -> Trial:
        return _image_trial("jpeg", label, encoded, size)

    scan = data.index(b"\xff\xda")
    dht = data.index(b"\xff\xc4")
    sof = data.index(b"\xff\xc0")
    trials = [Trial("the suite's JPEG", {"data": np.frombuffer(data, np.uint8).copy()}, 0, [pixels])]
    hostile = {
        "truncated in the header": data[:sof + 5],
        "truncated at the scan": data[:scan + 14],
        "truncated in the scan": data[: (scan + size) // 2],
        "no end marker": data[:-2],
        "a segment longer than the bytes": data[:sof + 2] + b"\xff\xff" + data[sof + 4:],
        "a Huffman table of 4080 codes": data[:dht + 5] + bytes([255] * 16) + data[dht + 21:],
        "a frame of 4 components": data[:sof + 9] + b"\x04" + data[sof + 10:],
        "0xFF bytes": b"\xff\xd8" + b"\xff" * (size - 2),
    }
    trials += [trial(label, encoded) for label, encoded in hostile.items()]
    trials += [
        trial(f"random corruption {k}", c)
        for k, c in enumerate(_corrupted(rng, data, random, 2, size, 6))
    ]
    return trials


def png_trials(rng: np.random.Generator, random: int) -> list[Trial]:
    """The suite's PNG, then hostile versions of it (same length, zero-padded): truncated in the
    header, in the zlib data and before its Adler-32, a chunk length past the end, a bad CRC, a
    stored block longer than the rows, a back reference before the first byte (CRCs made right);
    and `random` with bytes of the zlib data replaced under a right CRC, each expected to give what
    `image_reference.decode_png` (zlib) gives."""
    import struct
    import zlib

    data, pixels = _suite_image("png")
    size = len(data)
    at = data.index(b"IDAT")
    length = struct.unpack(">I", data[at - 4: at])[0]
    stream = data[at + 4: at + 4 + length]

    def with_stream(body: bytes) -> bytes:
        chunk = struct.pack(">I", len(body)) + b"IDAT" + body + struct.pack(">I", zlib.crc32(b"IDAT" + body))
        return data[: at - 4] + chunk + data[at + 8 + length:]

    def trial(label: str, encoded: bytes) -> Trial:
        return _image_trial("png", label, encoded, size)

    rows = 32 * (1 + 3 * 32)
    stored = b"\x78\x01" + b"\x01" + struct.pack("<HH", 0xFFFF, 0) + bytes(rows)
    far = b"\x78\x01" + bytes([0b011, 0x02, 0x04, 0x00])  # fixed codes: a length-3 copy from distance 1 at byte 0
    trials = [Trial("the suite's PNG", {"data": np.frombuffer(data, np.uint8).copy()}, 0, [pixels])]
    hostile = {
        "truncated in the header": data[:20],
        "truncated in the zlib data": data[: at + 4 + length // 2],
        "truncated before Adler-32": with_stream(stream[:-4]),
        "a chunk length past the end": data[: at - 4] + b"\x7f\xff\xff\xff" + data[at:],
        "a bad CRC": data[: at + 4] + bytes([stream[0] ^ 1]) + data[at + 5:],
        "a stored block longer than the rows": with_stream(stored),
        "a back reference before the first byte": with_stream(far),
    }
    trials += [trial(label, encoded) for label, encoded in hostile.items()]
    trials += [
        trial(f"random corruption {k}", with_stream(c))
        for k, c in enumerate(_corrupted(rng, stream, random, 2, len(stream), 4))
    ]
    return trials


def tiff_trials(rng: np.random.Generator, random: int) -> list[Trial]:
    """The suite's TIFF, then hostile versions of it (same length, zero-padded): truncated in the
    header, a strip shorter than its rows, the IFD and the strip past the end, 65,535 entries, a
    strip count of 2^32 - 1; and `random` with bytes of the header and IFD replaced, each expected to give what
    `image_reference.decode_tiff` gives."""
    import struct

    data, pixels = _suite_image("tiff")
    size = len(data)
    ifd = struct.unpack("<I", data[4:8])[0]
    entries = [ifd + 2 + 12 * k for k in range(struct.unpack("<H", data[ifd: ifd + 2])[0])]
    strip = next(e for e in entries if data[e: e + 2] == struct.pack("<H", 273))
    counts = next(e for e in entries if data[e: e + 2] == struct.pack("<H", 279))

    def trial(label: str, encoded: bytes) -> Trial:
        return _image_trial("tiff", label, encoded, size)

    trials = [Trial("the suite's TIFF", {"data": np.frombuffer(data, np.uint8).copy()}, 0, [pixels])]
    hostile = {
        "truncated in the header": data[:6],
        "a strip shorter than its rows": data[: counts + 8] + struct.pack("<I", 100) + data[counts + 12:],
        "the IFD past the end": data[:4] + struct.pack("<I", size - 4) + data[8:],
        "the strip past the end": data[: strip + 8] + struct.pack("<I", size - 10) + data[strip + 12:],
        "65,535 entries": data[:ifd] + b"\xff\xff" + data[ifd + 2:],
        "2^32 - 1 strip offsets": data[: strip + 4] + b"\xff\xff\xff\xff" + data[strip + 8:],
    }
    trials += [trial(label, encoded) for label, encoded in hostile.items()]
    header = max(entries) + 16
    trials += [
        trial(f"random corruption {k}", c)
        for k, c in enumerate(_corrupted(rng, data, random, 0, header, 4))
    ]
    return trials


def jp2_trials(rng: np.random.Generator, random: int) -> list[Trial]:
    """The suite's JPEG 2000 file, then hostile versions of it (same length, zero-padded): cut in
    the box header, the main header, a packet header and a code block's bytes, without its end
    marker, the codestream box, a marker segment and the tile-part longer than the bytes, 2^32 - 1
    tiles, a code block said to be 2^31 bytes, all 0xFF after the SIZ marker; and `random` with
    bytes replaced, each expected to give what `image_reference.decode_jp2` gives (some decode)."""
    import struct

    data, pixels = _suite_image("jpeg2k")
    size = len(data)
    soc = data.index(b"\xff\x4f\xff\x51")
    cod = data.index(b"\xff\x52", soc)
    sot = data.index(b"\xff\x90", soc)
    sod = data.index(b"\xff\x93", sot)
    box = data.index(b"jp2c") - 4

    def trial(label: str, encoded: bytes) -> Trial:
        return _image_trial("jpeg2k", label, encoded, size)

    trials = [Trial("the suite's JPEG 2000", {"data": np.frombuffer(data, np.uint8).copy()}, 0, [pixels])]
    hostile = {
        "cut in the box header": data[:20],
        "cut in the main header": data[:cod + 6],
        "cut in the first packet header": data[:sod + 4],
        "cut in a code block": data[:(sod + size) // 2],
        "no end marker": data[:-2],
        "a codestream box longer than the bytes": data[:box] + struct.pack(">I", 1 << 20) + data[box + 4:],
        "a COD segment longer than the bytes": data[:cod + 2] + b"\xff\xff" + data[cod + 4:],
        "a tile-part longer than the bytes": data[:sot + 6] + b"\x7f\xff\xff\xff" + data[sot + 10:],
        "tiles of one pixel": data[:soc + 24] + struct.pack(">II", 1, 1) + data[soc + 32:],
        "a first packet said to be present with long blocks": data[:sod + 2] + b"\xff\x7f\xff\x7f" + data[sod + 6:],
        "0xFF bytes after SIZ": data[:soc + 4] + b"\xff" * (size - soc - 4),
    }
    trials += [trial(label, encoded) for label, encoded in hostile.items()]
    trials += [
        trial(f"random corruption {k}", c)
        for k, c in enumerate(_corrupted(rng, data, random, 0, size, 5))
    ]
    return trials


def webp_trials(rng: np.random.Generator, random: int) -> list[Trial]:
    """The suite's WebP, then hostile versions of it (same length, zero-padded): cut in the RIFF
    header, the frame header, the first partition and the tokens with the RIFF and chunk sizes
    rewritten to the cut, RIFF, chunk and first-partition sizes past the end, a token partition
    starting with 0xFF bytes, all 0xFF after the frame header; and `random` with
    bytes replaced, each expected to give what `image_reference.decode_webp` gives (some decode)."""
    data, pixels = _suite_image("webp")
    size = len(data)
    first_end = 30 + (int.from_bytes(data[20:23], "little") >> 5)

    def trial(label: str, encoded: bytes) -> Trial:
        return _image_trial("webp", label, encoded, size)

    def cut(length: int) -> bytes:
        head = bytearray(data[:length])
        head[4:8] = (length - 8).to_bytes(4, "little")
        head[16:20] = (length - 20).to_bytes(4, "little")
        return bytes(head)

    tag = int.from_bytes(data[20:23], "little")
    trials = [Trial("the suite's WebP", {"data": np.frombuffer(data, np.uint8).copy()}, 0, [pixels])]
    hostile = {
        "cut in the RIFF header": data[:10],
        "cut in the frame header": cut(26),
        "cut in the first partition": cut(first_end - 20),
        "cut in the tokens": cut((first_end + size) // 2),
        "a RIFF size past the end": data[:4] + (1 << 30).to_bytes(4, "little") + data[8:],
        "a chunk size past the end": data[:16] + (1 << 30).to_bytes(4, "little") + data[20:],
        "a first partition past the end": data[:20] + ((tag & 0x1F) | (0x7FFFF << 5)).to_bytes(3, "little") + data[23:],
        "a token partition starting with 0xFF bytes": data[:first_end] + b"\xff" * 9 + data[first_end + 9:],
        "0xFF bytes after the frame header": data[:30] + b"\xff" * (size - 30),
    }
    trials += [trial(label, encoded) for label, encoded in hostile.items()]
    trials += [
        trial(f"random corruption {k}", c)
        for k, c in enumerate(_corrupted(rng, data, random, 0, size, 5))
    ]
    return trials


CASES = {case.name: case for case in _cases()}


def hostile_values(case: Case, random: int, rng: np.random.Generator) -> list[int]:
    """Out-of-range values for `case`'s indices: at the edges, far out, the type's extremes, and
    `random` more."""
    info = np.iinfo(case.dtype)
    low = -case.extent if case.negative else 0
    values = [case.extent, low - 1, case.extent + 1000, low - 1000, 2**31, -(2**31) - 1, int(info.max), int(info.min)]
    values += [int(v) for v in rng.integers(info.min, info.max, size=random, dtype=np.int64, endpoint=True)
               if not low <= v < case.extent]
    return values


def _feeds(model, case: Case, value: int | None, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Inputs for `model`: valid indices (`value` None) or every index `value`."""
    from onnx import helper

    feeds = {}
    for tensor in model.graph.input:
        shape = [d.dim_value for d in tensor.type.tensor_type.shape.dim]
        dtype = helper.tensor_dtype_to_np_dtype(tensor.type.tensor_type.elem_type)
        if tensor.name == case.hostile:
            if value is None:  # non-negative: valid for every op and every reference
                feeds[tensor.name] = _distinct_valid(case, shape, rng).astype(dtype)
            else:
                feeds[tensor.name] = np.full(shape, value, dtype)
        else:
            feeds[tensor.name] = rng.standard_normal(shape).astype(dtype)
    return feeds


def _distinct_valid(case: Case, shape: list[int], rng: np.random.Generator) -> np.ndarray:
    """Valid indices; the scatters' and MaxUnpool's written positions distinct (ONNX leaves
    duplicates' order open)."""
    count = int(np.prod(shape))
    if case.name == "MaxUnpool":  # each index inside its own 2x2 window of the 4x4 output
        return (np.array([0, 2, 8, 10]) + rng.integers(0, 2, 4) + 4 * rng.integers(0, 2, 4)).reshape(shape)
    if case.name == "ScatterND":
        return rng.permutation(case.extent)[:count].reshape(shape)
    return rng.integers(0, case.extent, size=shape)


@dataclass
class Failure:
    case: str
    target: str
    mode: str
    what: str


def _reference(model, feeds):
    import onnxruntime

    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def _saved(case: Case, folder: Path):
    """`case`'s model and the path it is saved at."""
    import onnx

    model = case.build()
    path = folder / f"{case.name.replace(' ', '_')}.onnx"
    onnx.save(model, path)
    return model, path


def check_host(case: Case, mode: str, folder: Path, random: int, rng: np.random.Generator) -> tuple[int, list[Failure]]:
    """Build `case` for the host in `mode`; call it with valid and hostile values, guarded: the
    calls made and the failures."""
    from zant.driver import CompileOptions, compile_model

    model, path = _saved(case, folder)
    result = compile_model(path, folder / f"host-{mode}-{path.stem}", CompileOptions(name="model", optimize=mode))
    assert result.library_path is not None
    failures: list[Failure] = []
    calls = 0
    sizes = [int(np.prod(s.shape)) * np.dtype(s.dtype).itemsize for s in result.outputs]

    def call(feeds: dict[str, np.ndarray], placement: str) -> Outcome:
        nonlocal calls
        calls += 1
        return call_guarded(result.library_path, "model", [feeds[s.name] for s in result.inputs], sizes, placement)

    def arrays(outcome: Outcome) -> list[np.ndarray]:
        return [np.frombuffer(b, s.dtype).reshape(s.shape) for b, s in zip(outcome.outputs, result.outputs)]

    def fail(what: str) -> None:
        failures.append(Failure(case.name, "host", mode, what))

    for trial in trials(case, model, random, rng):
        expected = trial.expected
        if trial.status == 0 and expected is None:
            expected = _reference(model, trial.feeds)
        for placement in ("end", "start"):
            outcome = call(trial.feeds, placement)
            if outcome.crash:
                fail(f"{trial.label}: {outcome.crash} ({placement})")
            elif outcome.status != trial.status:
                fail(f"{trial.label}: status {outcome.status}, expected {trial.status} ({placement})")
            elif trial.status and any(b != bytes([SENTINEL]) * len(b) for b in outcome.outputs):
                fail(f"{trial.label}: status {trial.status} but an output was written ({placement})")
            elif expected is not None and any(
                not np.allclose(g, np.reshape(e, g.shape), atol=1e-6) for g, e in zip(arrays(outcome), expected)
            ):
                fail(f"{trial.label}: outputs differ from the reference ({placement})")
    return calls, failures


def trials(case: Case, model, random: int, rng: np.random.Generator) -> list[Trial]:
    """`case`'s calls: valid indices, then the hostile values (`hostile_values`); or its own
    (`Case.encoded`)."""
    if case.encoded is not None:
        return case.encoded(rng, random)
    valid = _feeds(model, case, None, rng)
    made = [Trial(f"valid indices {valid[case.hostile].tolist()}", valid, 0)]
    for value in hostile_values(case, random, rng):
        made.append(Trial(f"index {value}", _feeds(model, case, value, rng), case.status))
    return made


def check_firmware(case: Case, mode: str, folder: Path, target: str, calls: Sequence[Trial]) -> tuple[int, list[Failure]]:
    """Build `case` as `target` firmware in `mode`, once per hostile trial embedded, and run it
    under QEMU; on a core with an MPU the image is guarded (`write_image(..., guard=True)`: each
    input and output, the scratch and constant arenas between no-access regions), so an access
    past them faults. The images run and the failures."""
    from zant.driver import CompileOptions, compile_model

    model, path = _saved(case, folder)
    out = folder / f"{target}-{mode}-{path.stem}"
    result = compile_model(path, out, CompileOptions(name="model", target=target, optimize=mode, build=False))
    failures = []
    for trial in calls:
        run = guarded_firmware(result, target, [trial.feeds[s.name] for s in result.inputs], mode)
        failures += [Failure(case.name, target, mode, problem) for problem in run.unguarded]
        expected = f"returned {trial.status}" if trial.status else None
        if run.error != expected:
            failures.append(Failure(case.name, target, mode, f"{trial.label}: {run.error or 'status 0'}, expected {expected or 'status 0'}"))
    return len(calls), failures


@dataclass
class FirmwareOutcome:
    """One guarded firmware run: its outputs (status 0), or `error` (a fault, a panic, `returned
    N`), and why the image's arenas were not between their guards (`unguarded`: none, they were)."""

    outputs: list[np.ndarray]
    error: str | None
    unguarded: list[str]


def guarded_firmware(result, target: str, feeds: Sequence[np.ndarray], mode: str) -> FirmwareOutcome:
    """`result` (a `compile_model` of NAME "model" for MCU `target`, `build=False`) linked into an
    image with `feeds` embedded, built in `mode` and run under QEMU; on a core with an MPU
    (`GUARD_TARGETS`: PMSAv7 or PMSAv8) each input and output, the scratch and the constant arena
    lie between no-access regions (as many as the MPU has, `firmware.guard_regions`), so an
    access past them faults; elsewhere the image runs unguarded and only its outputs tell."""
    from zant.backend.boards import board_for
    from zant.backend.firmware import GUARD_TARGETS, ImageModel, build_firmware, run_models, write_image

    board = board_for(target)
    guard = target in GUARD_TARGETS
    out = Path(result.zig_path).parent
    image = ImageModel("model", result.inputs, result.outputs, list(feeds))
    root = write_image(out, "model", [image], board, guard=guard)
    elf = build_firmware(root, "model", board, mode, guard=guard)
    run = run_models(elf, board, [image])
    return FirmwareOutcome(list(run.outputs.get("model", [])), run.errors.get("model"), _unguarded(elf) if guard else [])


def _unguarded(elf: Path) -> list[str]:
    """Why a guarded image's arenas are not between their guards (none: they are): LLVM may have
    merged a small arena with other globals, out of the section the linker script places."""
    from zant.backend.elf import object_symbols, symbol_addresses

    addresses = symbol_addresses(elf)
    objects = object_symbols(elf)
    problems = []
    for arena in ("constants", "scratch"):
        found = [o for o in objects if o.name.endswith(f"model_{arena}")]
        if not found:
            continue  # a model without that arena
        before, after = (addresses[f"__zant_guard_{arena}_{side}"] for side in ("before", "after"))
        if not before < found[0].address <= found[0].address + found[0].size <= after:
            problems.append(f"the {arena} arena is not between its guard regions")
    return problems


def run(ops: Sequence[str], modes: Sequence[str], targets: Sequence[str], random: int, seed: int,
        progress: Callable[[str], None] | None = None) -> tuple[int, list[Failure]]:
    """Every case × mode × target: the number of calls checked and the failures."""
    unknown = [op for op in ops if op not in CASES]
    if unknown:
        raise ZantError(f"unknown case {', '.join(unknown)} (choose from {', '.join(CASES)})")
    rng = np.random.default_rng(seed)
    failures: list[Failure] = []
    calls = 0
    with tempfile.TemporaryDirectory(prefix="zant-memory-safety-") as tmp:
        folder = Path(tmp)
        for op in ops:
            case = CASES[op]
            for target in targets:
                for mode in modes:
                    if progress:
                        progress(f"{op}: {target} {mode}")
                    if target == "host":
                        made, found = check_host(case, mode, folder, random, rng)
                    else:
                        model = case.build()
                        hostile = trials(case, model, 0, rng)[1:4]  # the first hostile ones
                        made, found = check_firmware(case, mode, folder, target, hostile)
                    calls += made
                    failures += found
    return calls, failures


def main(argv: Sequence[str] | None = None) -> int:
    from zant.backend.build import OPTIMIZE_MODES

    parser = argparse.ArgumentParser(prog="python -m zant.tools.memory_safety", description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops", default=",".join(CASES), help="comma-separated cases (default: all: %(default)s)")
    parser.add_argument("--modes", default=",".join(OPTIMIZE_MODES), help="build modes (default: %(default)s)")
    parser.add_argument("--targets", default="host", help="host and/or MCU targets, as firmware under QEMU (default: host)")
    parser.add_argument("--random", type=int, default=8, help="random hostile values per case on the host (default: 8)")
    parser.add_argument("--seed", type=int, default=0, help="the generator's seed (default: 0)")
    args = parser.parse_args(argv)

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    def body() -> int:
        calls, failures = run(
            [o for o in args.ops.split(",") if o], args.modes.split(","), args.targets.split(","), args.random, args.seed,
            progress,
        )
        for f in failures:
            print(f"FAIL {f.case} [{f.target} {f.mode}]: {f.what}")
        print(f"{calls} calls, {len(failures)} failures")
        return 1 if failures else 0

    return run_cli("zant memory-safety", body, debug=False)


if __name__ == "__main__":
    sys.exit(main())
