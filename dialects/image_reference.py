"""The image dialect's semantics in Python (the interpreter's reference).

`decode_jpeg(data, height, width, format)`: dialects/image_jpeg.zig's algorithm step for step, in
Python integers, with the same refusals. `decode_png(...)`: dialects/image_png.zig's checks with
Python's zlib inflating. `decode_tiff(...)`: dialects/image_tiff.zig's checks. `decode_jp2(...)`:
dialects/image_jp2.zig's algorithm (`zant.dialects.image_reference_jp2`). `decode_webp(...)`:
dialects/image_webp.zig's algorithm (`zant.dialects.image_reference_webp`). Each returns the pixels
(uint8, [height, width, channels]) or None when the Zig decoder refuses the bytes.
"""

from __future__ import annotations

import zlib

import numpy as np

from zant.dialects.image_reference_jp2 import decode_jp2  # noqa: F401  (JPEG 2000: its own module)
from zant.dialects.image_reference_webp import decode_webp  # noqa: F401  (WebP: its own module)

NATURAL_ORDER = (
    0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5,
    12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21, 28,
    35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51,
    58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
)
UNSUPPORTED_FRAMES = {0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF, 0xDC, 0xDE, 0xDF}
"""Progressive, lossless, hierarchical and arithmetic-coded frames, DNL, EXP: refused."""


class Bad(Exception):
    """The bytes are not a JPEG the decoder accepts."""


def _i32(x: int) -> int:
    """x wrapped to a signed 32-bit integer (the Zig decoder's wrapping arithmetic)."""
    return ((x + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def _i16(x: int) -> int:
    return ((x + (1 << 15)) & 0xFFFF) - (1 << 15)


def _limit(x: int) -> int:
    wrapped = ((x + 512) & 1023) - 512
    return min(max(wrapped + 128, 0), 255)


class _Bits:
    def __init__(self, data: bytes, pos: int):
        self.data, self.pos, self.byte, self.left = data, pos, 0, 0

    def bit(self) -> int:
        if self.left == 0:
            if self.pos >= len(self.data):
                raise Bad
            b = self.data[self.pos]
            if b == 0xFF:
                if self.pos + 1 >= len(self.data) or self.data[self.pos + 1] != 0:
                    raise Bad
                self.pos += 2
            else:
                self.pos += 1
            self.byte, self.left = b, 8
        self.left -= 1
        return (self.byte >> self.left) & 1

    def extended(self, s: int) -> int:
        if s == 0:
            return 0
        v = 0
        for _ in range(s):
            v = v * 2 + self.bit()
        return v - (1 << s) + 1 if v < 1 << (s - 1) else v

    def decode(self, table: dict) -> int:
        code = 0
        for length in range(1, 17):
            code = code * 2 + self.bit()
            if code <= table["maxcode"][length]:
                index = code + table["offset"][length]
                if not 0 <= index < len(table["symbols"]):
                    raise Bad
                return table["symbols"][index]
        raise Bad


_C = dict(
    c0298=2446, c0390=3196, c0541=4433, c0765=6270, c0899=7373, c1175=9633, c1501=12299,
    c1847=15137, c1961=16069, c2053=16819, c2562=20995, c3072=25172,
)


def _idct_1d(x: list[int]) -> list[int]:
    m = lambda a, b: _i32(a * b)  # noqa: E731
    a = lambda *v: _i32(sum(v))  # noqa: E731
    z2, z3 = x[2], x[6]
    z1 = m(a(z2, z3), _C["c0541"])
    tmp2 = a(z1, m(z3, -_C["c1847"]))
    tmp3 = a(z1, m(z2, _C["c0765"]))
    z2, z3 = x[0], x[4]
    tmp0, tmp1 = m(a(z2, z3), 8192), m(a(z2, -z3), 8192)
    tmp10, tmp13, tmp11, tmp12 = a(tmp0, tmp3), a(tmp0, -tmp3), a(tmp1, tmp2), a(tmp1, -tmp2)
    tmp0, tmp1, tmp2, tmp3 = x[7], x[5], x[3], x[1]
    z1, z2, z3, z4 = a(tmp0, tmp3), a(tmp1, tmp2), a(tmp0, tmp2), a(tmp1, tmp3)
    z5 = m(a(z3, z4), _C["c1175"])
    tmp0, tmp1 = m(tmp0, _C["c0298"]), m(tmp1, _C["c2053"])
    tmp2, tmp3 = m(tmp2, _C["c3072"]), m(tmp3, _C["c1501"])
    z1, z2 = m(z1, -_C["c0899"]), m(z2, -_C["c2562"])
    z3, z4 = a(m(z3, -_C["c1961"]), z5), a(m(z4, -_C["c0390"]), z5)
    tmp0, tmp1 = a(tmp0, z1, z3), a(tmp1, z2, z4)
    tmp2, tmp3 = a(tmp2, z2, z3), a(tmp3, z1, z4)
    return [
        a(tmp10, tmp3), a(tmp11, tmp2), a(tmp12, tmp1), a(tmp13, tmp0),
        a(tmp13, -tmp0), a(tmp12, -tmp1), a(tmp11, -tmp2), a(tmp10, -tmp3),
    ]


def idct(coef: list[int], quant: list[int]) -> np.ndarray:
    """libjpeg's jpeg_idct_islow of a block (natural order) times its quantization table."""
    ws = [0] * 64
    for i in range(8):
        r = _idct_1d([_i32(coef[8 * k + i] * quant[8 * k + i]) for k in range(8)])
        for k in range(8):
            ws[8 * k + i] = _i32(r[k] + (1 << 10)) >> 11
    out = np.zeros((8, 8), np.uint8)
    for i in range(8):
        r = _idct_1d(ws[8 * i: 8 * i + 8])
        for k in range(8):
            out[i, k] = _limit(_i32(r[k] + (1 << 17)) >> 18)
    return out


def _huffman(tables: dict, seg: bytes) -> None:
    at = 0
    while at < len(seg):
        if at + 17 > len(seg):
            raise Bad
        cls, t = seg[at] >> 4, seg[at] & 15
        if cls > 1 or t > 3:
            raise Bad
        counts = seg[at + 1: at + 17]
        total = sum(counts)
        if total > 256 or at + 17 + total > len(seg):
            raise Bad
        maxcode, offset = [-1] * 17, [0] * 17
        code = k = 0
        for length in range(1, 17):
            n = counts[length - 1]
            offset[length] = k - code
            code += n
            k += n
            if code > 1 << length:
                raise Bad
            maxcode[length] = code - 1 if n else -1
            code *= 2
        tables[(cls, t)] = {"symbols": list(seg[at + 17: at + 17 + total]), "maxcode": maxcode, "offset": offset}
        at += 17 + total


def decode_jpeg(data: bytes, height: int, width: int, format: str) -> np.ndarray | None:
    """The pixels of a baseline JPEG of height x width ("rgb", "bgr" or "gray"), or None."""
    try:
        return _decode(data, height, width, format)
    except (Bad, IndexError):
        return None


def _decode(data: bytes, height: int, width: int, format: str) -> np.ndarray:  # noqa: C901
    if len(data) < 4 or data[0] != 0xFF or data[1] != 0xD8:
        raise Bad
    quant: dict[int, list[int]] = {}
    tables: dict = {}
    comps: list[dict] = []
    hmax = vmax = 1
    restart = 0
    adobe_rgb = False
    planes: list[np.ndarray] = []
    pos = 2
    while pos < len(data):
        if data[pos] != 0xFF:
            raise Bad
        while pos < len(data) and data[pos] == 0xFF:
            pos += 1
        if pos >= len(data):
            raise Bad
        marker = data[pos]
        pos += 1
        if marker == 0xD9:
            break
        if marker == 0x01 or 0xD0 <= marker <= 0xD7:
            continue
        if pos + 2 > len(data):
            raise Bad
        length = data[pos] << 8 | data[pos + 1]
        if length < 2 or pos + length > len(data):
            raise Bad
        seg = data[pos + 2: pos + length]
        pos += length
        if marker in (0xC0, 0xC1):
            if comps or len(seg) < 6 or seg[0] != 8 or (seg[1] << 8 | seg[2]) != height or (seg[3] << 8 | seg[4]) != width:
                raise Bad
            n = seg[5]
            if n not in (1, 3) or len(seg) != 6 + 3 * n:
                raise Bad
            for c in range(n):
                cid, hv, tq = seg[6 + 3 * c: 9 + 3 * c]
                h, v = hv >> 4, hv & 15
                if not (1 <= h <= 2 and 1 <= v <= 2) or tq > 3 or any(d["id"] == cid for d in comps):
                    raise Bad
                comps.append({"id": cid, "h": h, "v": v, "tq": tq, "decoded": False})
                hmax, vmax = max(hmax, h), max(vmax, v)
            if n == 1:
                comps[0]["h"] = comps[0]["v"] = hmax = vmax = 1
            mcux, mcuy = -(-width // (8 * hmax)), -(-height // (8 * vmax))
            for comp in comps:
                comp["stride"], comp["rows"] = mcux * comp["h"] * 8, mcuy * comp["v"] * 8
                comp["width"] = -(-width * comp["h"] // hmax)
                comp["height"] = -(-height * comp["v"] // vmax)
                planes.append(np.zeros((comp["rows"], comp["stride"]), np.uint8))
        elif marker == 0xC4:
            _huffman(tables, seg)
        elif marker == 0xDB:
            at = 0
            while at < len(seg):
                precision, t = seg[at] >> 4, seg[at] & 15
                size = 64 if precision == 0 else 128
                if precision > 1 or t > 3 or at + 1 + size > len(seg):
                    raise Bad
                q = [0] * 64
                for k in range(64):
                    q[NATURAL_ORDER[k]] = seg[at + 1 + k] if precision == 0 else seg[at + 1 + 2 * k] << 8 | seg[at + 2 + 2 * k]
                quant[t] = q
                at += 1 + size
        elif marker == 0xDD:
            if len(seg) != 2:
                raise Bad
            restart = seg[0] << 8 | seg[1]
        elif marker == 0xDA:
            pos = _scan(seg, data, pos, comps, planes, quant, tables, restart)
        elif marker == 0xEE:
            if len(seg) >= 12 and seg[:5] == b"Adobe":
                adobe_rgb = seg[11] == 0
        elif marker in UNSUPPORTED_FRAMES:
            raise Bad
    if not comps or not all(c["decoded"] for c in comps):
        raise Bad
    samples = [_upsampled(c, p, hmax, vmax, height, width) for c, p in zip(comps, planes)]
    if len(comps) == 1:
        rgb = np.stack([samples[0]] * 3, axis=-1)
    elif adobe_rgb:
        rgb = np.stack(samples, axis=-1)
    else:
        y, cb, cr = samples[0], samples[1] - 128, samples[2] - 128
        rgb = np.stack([
            y + ((91881 * cr + 32768) >> 16),
            y + ((-22554 * cb - 46802 * cr + 32768) >> 16),
            y + ((116130 * cb + 32768) >> 16),
        ], axis=-1).clip(0, 255)
    if format == "gray":
        luma = samples[0] if len(comps) == 1 else (rgb[..., 0] * 19595 + rgb[..., 1] * 38470 + rgb[..., 2] * 7471 + 0x8000) >> 16
        return luma[..., None].astype(np.uint8)
    return (rgb if format == "rgb" else rgb[..., ::-1]).astype(np.uint8)


def _scan(seg, data, pos, comps, planes, quant, tables, restart) -> int:  # noqa: C901
    if not comps or len(seg) < 1:
        raise Bad
    n = seg[0]
    if not 1 <= n <= len(comps) or len(seg) != 4 + 2 * n:
        raise Bad
    if seg[1 + 2 * n] != 0 or seg[2 + 2 * n] != 63 or seg[3 + 2 * n] != 0:
        raise Bad
    members = []
    for j in range(n):
        cid, sel = seg[1 + 2 * j], seg[2 + 2 * j]
        found = [c for c, comp in enumerate(comps) if comp["id"] == cid]
        if not found or found[-1] in members:
            raise Bad
        c = found[-1]
        comp = comps[c]
        comp["td"], comp["ta"] = sel >> 4, sel & 15
        if comp["td"] > 3 or comp["ta"] > 3 or (0, comp["td"]) not in tables or (1, comp["ta"]) not in tables:
            raise Bad
        if comp["tq"] not in quant:
            raise Bad
        comp["quant"], comp["predictor"] = quant[comp["tq"]], 0
        members.append(c)
    bits = _Bits(data, pos)
    single = n == 1
    first = comps[members[0]]
    mcux = -(-first["width"] // 8) if single else first["stride"] // (8 * first["h"])
    mcuy = -(-first["height"] // 8) if single else first["rows"] // (8 * first["v"])
    restarts = 0
    for my in range(mcuy):
        for mx in range(mcux):
            index = my * mcux + mx
            if restart and index and index % restart == 0:
                if bits.pos + 1 >= len(data) or data[bits.pos] != 0xFF or data[bits.pos + 1] != 0xD0 + restarts % 8:
                    raise Bad
                bits = _Bits(data, bits.pos + 2)
                restarts += 1
                for c in members:
                    comps[c]["predictor"] = 0
            for c in members:
                comp = comps[c]
                bh, bv = (1, 1) if single else (comp["h"], comp["v"])
                for y in range(bv):
                    for x in range(bh):
                        row, col = my * bv + y, mx * bh + x
                        planes[c][8 * row: 8 * row + 8, 8 * col: 8 * col + 8] = _block(bits, comp, tables)
    for c in members:
        comps[c]["decoded"] = True
    return bits.pos


def _block(bits: _Bits, comp: dict, tables: dict) -> np.ndarray:
    coef = [0] * 64
    s = bits.decode(tables[(0, comp["td"])])
    if s > 15:
        raise Bad
    comp["predictor"] = _i32(comp["predictor"] + bits.extended(s))
    coef[0] = _i16(comp["predictor"])
    k = 1
    while k < 64:
        rs = bits.decode(tables[(1, comp["ta"])])
        run, size = rs >> 4, rs & 15
        if size == 0:
            if run != 15:
                break
            k += 16
            continue
        k += run
        coef[NATURAL_ORDER[min(k, 63)]] = _i16(bits.extended(size))
        k += 1
    return idct(coef, comp["quant"])


def _upsampled(comp: dict, plane: np.ndarray, hmax: int, vmax: int, height: int, width: int) -> np.ndarray:
    """The component at every output pixel, as ZantJpeg.sample computes it (libjpeg-turbo's
    fancy upsampling)."""
    p = plane.astype(np.int64)
    rh, rv = hmax // comp["h"], vmax // comp["v"]
    ys, xs = np.arange(height)[:, None], np.arange(width)[None, :]
    if rh == 1 and rv == 1:
        return p[:height, :width]
    fancy_h = rh == 2 and comp["width"] > 2
    c = xs // 2
    left, right = np.maximum(c - 1, 0), np.minimum(c + 1, comp["width"] - 1)
    even_x = xs % 2 == 0
    if rv == 1:
        if not fancy_h:
            return p[ys, c]
        near = p[ys, c] * 3
        return np.where(even_x, (near + p[ys, left] + 1) >> 2, (near + p[ys, right] + 2) >> 2)
    r = ys // 2
    even_y = ys % 2 == 0
    other = np.where(even_y, np.maximum(r - 1, 0), np.minimum(r + 1, comp["height"] - 1))
    if rh == 1:
        return (p[r, xs] * 3 + p[other, xs] + np.where(even_y, 1, 2)) >> 2
    if not fancy_h:
        return p[r, c]
    colsum = lambda col: p[r, col] * 3 + p[other, col]  # noqa: E731
    near = colsum(c) * 3
    return np.where(even_x, (near + colsum(left) + 8) >> 4, (near + colsum(right) + 7) >> 4)


# -- PNG ----------------------------------------------------------------------------------------

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PNG_SAMPLES = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}
"""Samples per pixel by PNG colour type: gray, RGB, palette index, gray + alpha, RGBA."""


def decode_png(data: bytes, height: int, width: int, format: str) -> np.ndarray | None:
    """The pixels of an 8-bit, non-interlaced PNG of height x width ("rgb", "bgr" or "gray"),
    as dialects/image_png.zig decodes it (zlib here inflates), or None."""
    try:
        return _decode_png(data, height, width, format)
    except (Bad, IndexError, zlib.error):
        return None


def _chunk(data: bytes, pos: int) -> tuple[bytes, bytes]:
    """The type and data of the chunk at `pos`, its CRC checked."""
    if pos + 8 > len(data):
        raise Bad
    length = int.from_bytes(data[pos: pos + 4], "big")
    if length > len(data) - pos - 12:
        raise Bad
    kind, body = data[pos + 4: pos + 8], data[pos + 8: pos + 8 + length]
    if zlib.crc32(kind + body) != int.from_bytes(data[pos + 8 + length: pos + 12 + length], "big"):
        raise Bad
    return kind, body


def _decode_png(data: bytes, height: int, width: int, format: str) -> np.ndarray:  # noqa: C901
    if len(data) < 33 or not data.startswith(PNG_SIGNATURE) or data[8:16] != b"\x00\x00\x00\x0dIHDR":
        raise Bad
    _, ihdr = _chunk(data, 8)
    if int.from_bytes(ihdr[0:4], "big") != width or int.from_bytes(ihdr[4:8], "big") != height:
        raise Bad
    depth, color, *methods = ihdr[8:13]
    if depth != 8 or any(methods) or color not in PNG_SAMPLES:
        raise Bad
    samples = PNG_SAMPLES[color]
    palette = b""
    pos = 33
    while True:
        kind, body = _chunk(data, pos)
        if kind == b"IDAT":
            break
        if kind == b"IEND":
            raise Bad
        if kind == b"PLTE":
            if len(body) % 3 or not body or len(body) > 768:
                raise Bad
            palette = body
        pos += 12 + len(body)
    if color == 3 and not palette:
        raise Bad
    stride = 1 + samples * width
    inflater = zlib.decompressobj()
    rows = b""
    while not inflater.eof:  # the consecutive IDAT chunks, each checked when reached
        kind, body = _chunk(data, pos)
        if kind != b"IDAT":
            raise Bad
        rows += inflater.decompress(body)
        if len(rows) > height * stride:
            raise Bad
        pos += 12 + len(body)
    if len(rows) != height * stride:
        raise Bad
    image = np.zeros((height, samples * width), np.int64)
    for y in range(height):
        kind, line = rows[y * stride], np.frombuffer(rows[y * stride + 1: (y + 1) * stride], np.uint8)
        if kind > 4:
            raise Bad
        above = image[y - 1] if y else np.zeros(samples * width, np.int64)
        row = image[y]
        for i in range(samples * width):
            a = row[i - samples] if i >= samples else 0
            b = above[i]
            c = above[i - samples] if i >= samples else 0
            if kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                predicted = a if pa <= pb and pa <= pc else b if pb <= pc else c
            else:
                predicted = (0, a, b, (a + b) // 2)[kind]
            row[i] = (int(line[i]) + predicted) & 0xFF
    pixels = image.reshape(height, width, samples)
    if color == 3:
        table = np.frombuffer(palette, np.uint8).reshape(-1, 3).astype(np.int64)
        if pixels.max() >= len(table):
            raise Bad
        rgb = table[pixels[..., 0]]
    elif color in (0, 4):
        rgb = np.repeat(pixels[..., :1], 3, axis=-1)
    else:
        rgb = pixels[..., :3]
    if format == "gray":
        gray = pixels[..., 0] if color in (0, 4) else (rgb[..., 0] * 19595 + rgb[..., 1] * 38470 + rgb[..., 2] * 7471 + 0x8000) >> 16
        return gray[..., None].astype(np.uint8)
    return (rgb if format == "rgb" else rgb[..., ::-1]).astype(np.uint8)


# -- TIFF ---------------------------------------------------------------------------------------

TIFF_SINGLE_VALUED = {256, 257, 259, 262, 277, 278, 284, 317, 339}
"""Tags read as one value (every value of the entry must be the same): width, height,
compression, photometric, samples per pixel, rows per strip, planar, predictor, sample format."""
TIFF_MUST_BE_ONE = {259, 284, 317, 339}
"""No compression, chunky samples, no predictor, unsigned samples."""


def decode_tiff(data: bytes, height: int, width: int, format: str) -> np.ndarray | None:
    """The pixels of an uncompressed 8-bit TIFF of height x width ("rgb", "bgr" or "gray"), as
    dialects/image_tiff.zig reads it, or None."""
    try:
        return _decode_tiff(data, height, width, format)
    except Bad:
        return None


def _decode_tiff(data: bytes, height: int, width: int, format: str) -> np.ndarray:  # noqa: C901
    if len(data) < 8 or data[:2] not in (b"II", b"MM"):
        raise Bad
    order = "big" if data[0] == ord("M") else "little"

    def uint(at: int, size: int) -> int:
        if at > len(data) or size > len(data) - at:
            raise Bad
        return int.from_bytes(data[at: at + size], order)

    def values(entry: int) -> list[int]:
        kind, count = uint(entry + 2, 2), uint(entry + 4, 4)
        size = {3: 2, 4: 4}.get(kind)
        if size is None or count == 0 or count > len(data):
            raise Bad
        at = entry + 8 if count * size <= 4 else uint(entry + 8, 4)
        if at > len(data) or count * size > len(data) - at:
            raise Bad
        return [uint(at + k * size, size) for k in range(count)]

    if uint(2, 2) != 42:
        raise Bad
    ifd = uint(4, 4)
    entries = uint(ifd, 2)
    if ifd + 2 + 12 * entries > len(data):
        raise Bad
    fields = {277: 1, 278: 0xFFFFFFFF, 262: 0xFFFF}
    arrays: dict[int, list[int]] = {}
    for k in range(entries):
        entry = ifd + 2 + 12 * k
        tag = uint(entry, 2)
        if tag in TIFF_SINGLE_VALUED:
            v = values(entry)
            if any(x != v[0] for x in v):
                raise Bad
            if tag in TIFF_MUST_BE_ONE and v[0] != 1:
                raise Bad
            fields[tag] = v[0]
        elif tag in (258, 273, 279):
            arrays[tag] = values(entry)
        elif tag in (322, 323, 324, 325):
            raise Bad
    samples, rows_per_strip, photometric = fields[277], fields[278], fields[262]
    if fields.get(256) != width or fields.get(257) != height or rows_per_strip == 0:
        raise Bad
    if photometric not in (1, 2):
        raise Bad
    rgb = photometric == 2
    if not (3 if rgb else 1) <= samples <= (4 if rgb else 2):
        raise Bad
    if any(t not in arrays for t in (258, 273, 279)) or arrays[258] != [8] * samples:
        raise Bad
    per_strip = min(rows_per_strip, height)
    strips = -(-height // per_strip)
    starts, lengths = arrays[273], arrays[279]
    if len(starts) != strips or len(lengths) != strips:
        raise Bad
    row_bytes = width * samples
    for s in range(strips):
        rows = min(per_strip, height - s * per_strip)
        if lengths[s] < rows * row_bytes or starts[s] > len(data) or rows * row_bytes > len(data) - starts[s]:
            raise Bad
    image = np.stack([
        np.frombuffer(data, np.uint8, row_bytes, starts[y // per_strip] + (y % per_strip) * row_bytes)
        for y in range(height)
    ]).reshape(height, width, samples).astype(np.int64)
    color = image[..., :3] if rgb else np.repeat(image[..., :1], 3, axis=-1)
    if format == "gray":
        gray = image[..., 0] if not rgb else (color[..., 0] * 19595 + color[..., 1] * 38470 + color[..., 2] * 7471 + 0x8000) >> 16
        return gray[..., None].astype(np.uint8)
    return (color if format == "rgb" else color[..., ::-1]).astype(np.uint8)
