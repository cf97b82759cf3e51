"""image.decode_webp's semantics in Python (the interpreter's reference): dialects/image_webp.zig's
algorithm step for step, in Python integers, with the same refusals.

A lossy WebP is a RIFF file whose first chunk is 'VP8 ' (or 'VP8X', then optional chunks, then
'VP8 '), one VP8 key frame (RFC 6386): a boolean
entropy coder over a first partition (segments, loop filter, quantizers, probabilities, the
macroblocks' modes) and 1-8 token partitions (the residuals), intra prediction, the inverse WHT
and DCT, the loop filter, then libwebp's "fancy" chroma upsampling and YUV -> RGB, as PIL shows
it. The constant tables (RFC 6386's default and update probabilities, subblock mode
probabilities, quantizer steps) are read from the Zig file, so both use the same numbers.

`decode_webp(data, height, width, format)` returns the pixels (uint8, [height, width, channels])
or None where the Zig decoder returns false.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

import numpy as np

ZIGZAG = (0, 1, 4, 8, 5, 2, 3, 6, 9, 12, 13, 10, 7, 11, 14, 15)
BANDS = (0, 1, 2, 3, 6, 4, 5, 6, 6, 6, 6, 6, 6, 6, 6, 7, 0)
CATEGORIES = (
    (173, 148, 140),
    (176, 155, 140, 135),
    (180, 157, 141, 134, 130),
    (254, 254, 243, 230, 196, 177, 153, 140, 133, 130, 129),
)
DC, TM, VE, HE, RD, VR, LD, VL, HD, HU = range(10)


class Bad(Exception):
    """The bytes are not a WebP the decoder accepts."""


@cache
def _tables() -> dict[str, tuple[int, ...]]:
    source = resources.files("zant.dialects").joinpath("image_webp.zig").read_text()
    tables = {}
    for name in ("coeff_probs", "coeff_updates", "bmode_probs", "dc_table", "ac_table"):
        body = re.search(rf"const {name} = \[\d+\]u\d+\{{([^}}]*)\}};", source)
        assert body is not None, name
        tables[name] = tuple(int(v) for v in re.findall(r"\d+", body.group(1)))
    return tables


def _i16(v: int) -> int:
    return (v + 0x8000) % 0x10000 - 0x8000


def _i32(v: int) -> int:
    return (v + 0x80000000) % 0x100000000 - 0x80000000


def _clip8(v: int) -> int:
    return 0 if v < 0 else 255 if v > 255 else v


class _Bool:
    """RFC 6386's boolean decoder; `exhausted` as in the Zig (past the end, or a first byte 255)."""

    def __init__(self, data: bytes):
        self.data, self.pos, self.range, self.count, self.shifted = data, 0, 255, 0, 0
        self.value = self._next() << 8 | self._next()
        self.exhausted = len(data) == 0 or data[0] == 0xFF

    def _next(self) -> int:
        if self.pos >= len(self.data):
            return 0
        self.pos += 1
        return self.data[self.pos - 1]

    def bit(self, prob: int) -> int:
        if self.shifted + 8 > 8 * len(self.data):
            self.exhausted = True
        split = 1 + (((self.range - 1) * prob) >> 8)
        if self.value >= split << 8:
            one = 1
            self.range -= split
            self.value -= split << 8
        else:
            one = 0
            self.range = split
        while self.range < 128:
            self.value <<= 1
            self.range <<= 1
            self.shifted += 1
            self.count += 1
            if self.count == 8:
                self.count = 0
                self.value |= self._next()
        return one

    def literal(self, n: int) -> int:
        v = 0
        for _ in range(n):
            v = v * 2 + self.bit(128)
        return v

    def signed(self, n: int) -> int:
        v = self.literal(n)
        return -v if self.bit(128) else v

    def optional(self, n: int) -> int:
        return self.signed(n) if self.bit(128) else 0


def _large(br: _Bool, p) -> int:
    if not br.bit(p[3]):
        return 2 if not br.bit(p[4]) else 3 + br.bit(p[5])
    if not br.bit(p[6]):
        if not br.bit(p[7]):
            return 5 + br.bit(159)
        return 7 + 2 * br.bit(165) + br.bit(145)
    high = br.bit(p[8])
    cat = 2 * high + br.bit(p[9 + high])
    v = 0
    for prob in CATEGORIES[cat]:
        v = v * 2 + br.bit(prob)
    return v + 3 + (8 << cat)


def _coefficients(br: _Bool, probs, t: int, ctx: int, dq, first: int, out: list[int]) -> int:
    def p(band, c):
        at = ((t * 8 + band) * 3 + c) * 11
        return probs[at:at + 11]

    n = first
    pr = p(BANDS[n], ctx)
    while n < 16:
        if not br.bit(pr[0]):
            return n
        while not br.bit(pr[1]):
            n += 1
            if n == 16:
                return 16
            pr = p(BANDS[n], 0)
        if not br.bit(pr[2]):
            v = 1
            pr = p(BANDS[n + 1], 1)
        else:
            v = _large(br, pr)
            pr = p(BANDS[n + 1], 2)
        if br.bit(128):
            v = -v
        out[ZIGZAG[n]] = _i16(v * dq[1 if n > 0 else 0])
        n += 1
    return 16


def _wht(inp: list[int], coeffs: list[list[int]]) -> None:
    tmp = [0] * 16
    for i in range(4):
        a0, a1 = inp[i] + inp[12 + i], inp[4 + i] + inp[8 + i]
        a2, a3 = inp[4 + i] - inp[8 + i], inp[i] - inp[12 + i]
        tmp[i], tmp[8 + i], tmp[4 + i], tmp[12 + i] = a0 + a1, a0 - a1, a3 + a2, a3 - a2
    for i in range(4):
        dc = tmp[i * 4] + 3
        a0, a1 = dc + tmp[3 + i * 4], tmp[1 + i * 4] + tmp[2 + i * 4]
        a2, a3 = tmp[1 + i * 4] - tmp[2 + i * 4], dc - tmp[3 + i * 4]
        for k, v in enumerate((a0 + a1, a3 + a2, a0 - a1, a3 - a2)):
            coeffs[i * 4 + k][0] = _i16(v >> 3)


def _mul1(a: int) -> int:
    return _i32((_i32(a * 20091) >> 16) + a)


def _mul2(a: int) -> int:
    return _i32(a * 35468) >> 16


def _idct_add(inp: list[int], buf: np.ndarray, y0: int, x0: int) -> None:
    tmp = [0] * 16
    for i in range(4):
        a, b = inp[i] + inp[8 + i], inp[i] - inp[8 + i]
        c = _i32(_mul2(inp[4 + i]) - _mul1(inp[12 + i]))
        d = _i32(_mul1(inp[4 + i]) + _mul2(inp[12 + i]))
        tmp[i * 4:i * 4 + 4] = [_i32(a + d), _i32(b + c), _i32(b - c), _i32(a - d)]
    for i in range(4):
        dc = _i32(tmp[i] + 4)
        a, b = _i32(dc + tmp[8 + i]), _i32(dc - tmp[8 + i])
        c = _i32(_mul2(tmp[4 + i]) - _mul1(tmp[12 + i]))
        d = _i32(_mul1(tmp[4 + i]) + _mul2(tmp[12 + i]))
        for k, v in enumerate((_i32(a + d), _i32(b + c), _i32(b - c), _i32(a - d))):
            buf[y0 + i, x0 + k] = _clip8(int(buf[y0 + i, x0 + k]) + (v >> 3))


def _avg3(a, b, c) -> int:
    return (int(a) + 2 * int(b) + int(c) + 2) >> 2


def _avg2(a, b) -> int:
    return (int(a) + int(b) + 1) >> 1


def _predict_block(buf: np.ndarray, n: int, mode: int, top: bool, left: bool) -> None:
    """`buf` [n + 1, n + 5]: row 0 the edge above (column 0 the corner), column 0 the left edge."""
    if mode == VE:
        buf[1:n + 1, 1:n + 1] = buf[0, 1:n + 1]
    elif mode == HE:
        buf[1:n + 1, 1:n + 1] = buf[1:n + 1, 0:1]
    elif mode == TM:
        _true_motion(buf, 1, 1, n)
    else:
        shift = 4 if n == 16 else 3
        total = (int(buf[0, 1:n + 1].astype(np.int64).sum()) if top else 0) + (int(buf[1:n + 1, 0].astype(np.int64).sum()) if left else 0)
        if top and left:
            dc = (total + n) >> (shift + 1)
        elif top or left:
            dc = (total + n // 2) >> shift
        else:
            dc = 128
        buf[1:n + 1, 1:n + 1] = dc


def _true_motion(buf: np.ndarray, y0: int, x0: int, n: int) -> None:
    corner = int(buf[y0 - 1, x0 - 1])
    for y in range(n):
        left = int(buf[y0 + y, x0 - 1])
        for x in range(n):
            buf[y0 + y, x0 + x] = _clip8(left + int(buf[y0 - 1, x0 + x]) - corner)


def _predict_subblock(buf: np.ndarray, y0: int, x0: int, mode: int) -> None:
    x = int(buf[y0 - 1, x0 - 1])
    a = [int(v) for v in buf[y0 - 1, x0:x0 + 8]]
    l = [int(buf[y0 + k, x0 - 1]) for k in range(4)]  # noqa: E741
    d = [[0] * 4 for _ in range(4)]  # [row][column]
    if mode == DC:
        v = (4 + sum(a[:4]) + sum(l)) >> 3
        d = [[v] * 4 for _ in range(4)]
    elif mode == TM:
        _true_motion(buf, y0, x0, 4)
        return
    elif mode == VE:
        row = [_avg3(x, a[0], a[1]), _avg3(a[0], a[1], a[2]), _avg3(a[1], a[2], a[3]), _avg3(a[2], a[3], a[4])]
        d = [row[:] for _ in range(4)]
    elif mode == HE:
        col = [_avg3(x, l[0], l[1]), _avg3(l[0], l[1], l[2]), _avg3(l[1], l[2], l[3]), _avg3(l[2], l[3], l[3])]
        d = [[v] * 4 for v in col]
    elif mode == RD:
        e = [l[3], l[2], l[1], l[0], x, a[0], a[1], a[2], a[3]]
        d = [[_avg3(e[3 - r + c], e[4 - r + c], e[5 - r + c]) for c in range(4)] for r in range(4)]
    elif mode == LD:
        d = [[_avg3(a[6], a[7], a[7]) if r + c == 6 else _avg3(a[r + c], a[r + c + 1], a[r + c + 2]) for c in range(4)] for r in range(4)]
    elif mode == VR:
        d[3][0] = _avg3(l[2], l[1], l[0])
        d[2][0] = _avg3(l[1], l[0], x)
        d[1][0] = d[3][1] = _avg3(l[0], x, a[0])
        d[1][1] = d[3][2] = _avg3(x, a[0], a[1])
        d[1][2] = d[3][3] = _avg3(a[0], a[1], a[2])
        d[1][3] = _avg3(a[1], a[2], a[3])
        d[0][0] = d[2][1] = _avg2(x, a[0])
        d[0][1] = d[2][2] = _avg2(a[0], a[1])
        d[0][2] = d[2][3] = _avg2(a[1], a[2])
        d[0][3] = _avg2(a[2], a[3])
    elif mode == VL:
        d[0][0] = _avg2(a[0], a[1])
        d[0][1] = d[2][0] = _avg2(a[1], a[2])
        d[0][2] = d[2][1] = _avg2(a[2], a[3])
        d[0][3] = d[2][2] = _avg2(a[3], a[4])
        d[1][0] = _avg3(a[0], a[1], a[2])
        d[1][1] = d[3][0] = _avg3(a[1], a[2], a[3])
        d[1][2] = d[3][1] = _avg3(a[2], a[3], a[4])
        d[1][3] = d[3][2] = _avg3(a[3], a[4], a[5])
        d[2][3] = _avg3(a[4], a[5], a[6])
        d[3][3] = _avg3(a[5], a[6], a[7])
    elif mode == HD:
        d[0][0] = d[1][2] = _avg2(l[0], x)
        d[1][0] = d[2][2] = _avg2(l[1], l[0])
        d[2][0] = d[3][2] = _avg2(l[2], l[1])
        d[3][0] = _avg2(l[3], l[2])
        d[0][3] = _avg3(a[0], a[1], a[2])
        d[0][2] = _avg3(x, a[0], a[1])
        d[0][1] = d[1][3] = _avg3(l[0], x, a[0])
        d[1][1] = d[2][3] = _avg3(l[1], l[0], x)
        d[2][1] = d[3][3] = _avg3(l[2], l[1], l[0])
        d[3][1] = _avg3(l[3], l[2], l[1])
    else:  # HU
        d[0][0] = _avg2(l[0], l[1])
        d[0][2] = d[1][0] = _avg2(l[1], l[2])
        d[1][2] = d[2][0] = _avg2(l[2], l[3])
        d[0][1] = _avg3(l[0], l[1], l[2])
        d[0][3] = d[1][1] = _avg3(l[1], l[2], l[3])
        d[1][3] = d[2][1] = _avg3(l[2], l[3], l[3])
        d[2][2] = d[2][3] = l[3]
        d[3] = [l[3]] * 4
    buf[y0:y0 + 4, x0:x0 + 4] = d


def _modes(br: _Bool, frame: dict, top: list[int], left: list[int]) -> dict:
    m = {"segment": 0, "skip": False, "i4": False, "y": [DC] * 16, "uv": DC}
    probs = frame["segment_probs"]
    if frame["update_map"]:
        m["segment"] = br.bit(probs[1]) if not br.bit(probs[0]) else 2 + br.bit(probs[2])
    if frame["skip_prob"] is not None:
        m["skip"] = bool(br.bit(frame["skip_prob"]))
    m["i4"] = not br.bit(145)
    if not m["i4"]:
        mode = (TM if br.bit(128) else HE) if br.bit(156) else (VE if br.bit(163) else DC)
        m["y"][0] = mode
        top[:] = [mode] * 4
        left[:] = [mode] * 4
    else:
        table = _tables()["bmode_probs"]
        for y in range(4):
            mode = left[y]
            for x in range(4):
                p = table[(top[x] * 10 + mode) * 9:][:9]
                if not br.bit(p[0]):
                    mode = DC
                elif not br.bit(p[1]):
                    mode = TM
                elif not br.bit(p[2]):
                    mode = VE
                elif not br.bit(p[3]):
                    mode = HE if not br.bit(p[4]) else RD if not br.bit(p[5]) else VR
                elif not br.bit(p[6]):
                    mode = LD
                elif not br.bit(p[7]):
                    mode = VL
                else:
                    mode = HD if not br.bit(p[8]) else HU
                top[x] = mode
                m["y"][y * 4 + x] = mode
            left[y] = mode
    m["uv"] = DC if not br.bit(142) else VE if not br.bit(114) else TM if br.bit(183) else HE
    return m


def _residuals(br: _Bool, frame: dict, m: dict, top: list[int], left: list[int], coeffs: list[list[int]]) -> bool:
    q = frame["quant"][m["segment"]]
    probs = frame["probs"]
    coded = False
    first, t = 0, 3
    if not m["i4"]:
        n = _coefficients(br, probs, 1, top[8] + left[8], q["y2"], 0, coeffs[24])
        top[8] = left[8] = int(n > 0)
        if n > 1:
            _wht(coeffs[24], coeffs)
        else:
            dc = _i16((coeffs[24][0] + 3) >> 3)
            for b in range(16):
                coeffs[b][0] = dc
        first, t = 1, 0
    for y in range(4):
        for x in range(4):
            b = y * 4 + x
            n = _coefficients(br, probs, t, top[x] + left[y], q["y1"], first, coeffs[b])
            top[x] = left[y] = int(n > first)
            coded = coded or n > 1 or coeffs[b][0] != 0
    for c in range(2):
        at = 4 + 2 * c
        for y in range(2):
            for x in range(2):
                b = 16 + c * 4 + y * 2 + x
                n = _coefficients(br, probs, 2, top[at + x] + left[at + y], q["uv"], 0, coeffs[b])
                top[at + x] = left[at + y] = int(n > 0)
                coded = coded or n > 1 or coeffs[b][0] != 0
    return coded


def _reconstruct(planes: list[np.ndarray], mx: int, my: int, m: dict, coeffs: list[list[int]]) -> None:
    y_plane = planes[0]
    columns = y_plane.shape[1] // 16
    buf = np.zeros((17, 21), np.int64)  # row 0 above, column 0 left; 4 columns right of the block
    oy, ox = my * 16, mx * 16
    for k in range(21):
        if my == 0:
            buf[0, k] = 127
        elif k == 0 and mx == 0:
            buf[0, k] = 129
        elif k <= 16 or mx + 1 < columns:
            buf[0, k] = y_plane[oy - 1, ox - 1 + k]
        else:
            buf[0, k] = y_plane[oy - 1, ox + 15]
    buf[1:, 0] = 129 if mx == 0 else y_plane[oy:oy + 16, ox - 1]
    if m["i4"]:
        for k in (1, 2, 3):
            buf[4 * k, 17:21] = buf[0, 17:21]
        for b in range(16):
            y0, x0 = 1 + (b // 4) * 4, 1 + (b % 4) * 4
            _predict_subblock(buf, y0, x0, m["y"][b])
            _idct_add(coeffs[b], buf, y0, x0)
    else:
        _predict_block(buf, 16, m["y"][0], my > 0, mx > 0)
        for b in range(16):
            _idct_add(coeffs[b], buf, 1 + (b // 4) * 4, 1 + (b % 4) * 4)
    y_plane[oy:oy + 16, ox:ox + 16] = buf[1:, 1:17]
    for c in range(2):
        plane = planes[1 + c]
        cy, cx = my * 8, mx * 8
        cbuf = np.zeros((9, 9), np.int64)
        for k in range(9):
            cbuf[0, k] = 127 if my == 0 else 129 if (k == 0 and mx == 0) else plane[cy - 1, cx - 1 + k]
        cbuf[1:, 0] = 129 if mx == 0 else plane[cy:cy + 8, cx - 1]
        _predict_block(cbuf, 8, m["uv"], my > 0, mx > 0)
        for b in range(4):
            _idct_add(coeffs[16 + c * 4 + b], cbuf, 1 + (b // 2) * 4, 1 + (b % 2) * 4)
        plane[cy:cy + 8, cx:cx + 8] = cbuf[1:, 1:]


def _edge_filter(line: np.ndarray, simple: bool, outer: bool, limit: int, fl: dict) -> None:
    """One position across an edge: `line` the 8 samples p3 p2 p1 p0 q0 q1 q2 q3 (a view of the
    plane: every edge filtered lies 4 samples or more inside it)."""
    p3, p2, p1, p0, q0, q1, q2, q3 = (int(v) for v in line)
    if 4 * abs(p0 - q0) + abs(p1 - q1) > 2 * limit + 1:
        return
    sclamp = lambda v, lo, hi: min(max(v, lo), hi)  # noqa: E731
    if not simple:
        it = fl["inner_limit"]
        if any(abs(a - b) > it for a, b in ((p3, p2), (p2, p1), (p1, p0), (q0, q1), (q1, q2), (q2, q3))):
            return
    hev = not simple and (abs(p1 - p0) > fl["hev"] or abs(q1 - q0) > fl["hev"])
    if simple or hev:
        a = 3 * (q0 - p0) + sclamp(p1 - q1, -128, 127)
        a1, a2 = sclamp((a + 4) >> 3, -16, 15), sclamp((a + 3) >> 3, -16, 15)
        line[3], line[4] = _clip8(p0 + a2), _clip8(q0 - a1)
    elif outer:
        a = sclamp(3 * (q0 - p0) + sclamp(p1 - q1, -128, 127), -128, 127)
        a1, a2, a3 = (27 * a + 63) >> 7, (18 * a + 63) >> 7, (9 * a + 63) >> 7
        line[1:7] = [_clip8(p2 + a3), _clip8(p1 + a2), _clip8(p0 + a1), _clip8(q0 - a1), _clip8(q1 - a2), _clip8(q2 - a3)]
    else:
        a = 3 * (q0 - p0)
        a1, a2 = sclamp((a + 4) >> 3, -16, 15), sclamp((a + 3) >> 3, -16, 15)
        a3 = (a1 + 1) >> 1
        line[2:6] = [_clip8(p1 + a3), _clip8(p0 + a2), _clip8(q0 - a1), _clip8(q1 - a3)]


def _loop_filter(planes: list[np.ndarray], info: np.ndarray, frame: dict) -> None:
    rows, columns = info.shape
    simple = frame["simple"]
    for my in range(rows):
        for mx in range(columns):
            byte = int(info[my, mx])
            fl = frame["filters"][byte & 3][(byte >> 2) & 1]
            inner = (byte & 12) != 0
            if fl["limit"] == 0:
                continue
            for c in range(1 if simple else 3):
                n = 16 if c == 0 else 8
                plane = planes[c]
                y0, x0 = my * n, mx * n
                steps = [(0, True, fl["limit"] + 4)] if mx > 0 else []
                steps += [(k, False, fl["limit"]) for k in range(4, n, 4)] if inner else []
                for k, outer, limit in steps:  # vertical edges: across columns
                    for y in range(n):
                        _edge_filter(plane[y0 + y, x0 + k - 4:x0 + k + 4], simple, outer, limit, fl)
                steps = [(0, True, fl["limit"] + 4)] if my > 0 else []
                steps += [(k, False, fl["limit"]) for k in range(4, n, 4)] if inner else []
                for k, outer, limit in steps:  # horizontal edges: across rows
                    for x in range(n):
                        _edge_filter(plane[y0 + k - 4:y0 + k + 4, x0 + x], simple, outer, limit, fl)


def _chroma(plane: np.ndarray, near: int, far: int, x: int, width: int) -> int:
    k = (x + 1) // 2
    if x == 0 or (x == width - 1 and width % 2 == 0):
        c = 0 if x == 0 else k - 1
        return (3 * int(plane[near, c]) + int(plane[far, c]) + 2) >> 2
    own, other = (k - 1, k) if x % 2 == 1 else (k, k - 1)
    n, side, below, diag = int(plane[near, own]), int(plane[near, other]), int(plane[far, own]), int(plane[far, other])
    return (((n + side + below + diag + 8 + 2 * (side + below)) >> 3) + n) >> 1


def _rgb(y: int, u: int, v: int) -> tuple[int, int, int]:
    def clip(value: int) -> int:
        return value >> 6 if value & ~0x3FFF == 0 else 0 if value < 0 else 255

    def mul(a: int, c: int) -> int:
        return (a * c) >> 8

    return (
        clip(mul(y, 19077) + mul(v, 26149) - 14234),
        clip(mul(y, 19077) - mul(u, 6419) - mul(v, 13320) + 8708),
        clip(mul(y, 19077) + mul(u, 33050) - 17685),
    )


def decode_webp(data: bytes, height: int, width: int, format: str) -> np.ndarray | None:
    try:
        return _decode(data, height, width, format)
    except Bad:
        return None


def _decode(data: bytes, height: int, width: int, format: str) -> np.ndarray:  # noqa: C901
    le = lambda b: int.from_bytes(b, "little")  # noqa: E731
    if len(data) < 20 or data[0:4] != b"RIFF" or data[8:12] != b"WEBP":
        raise Bad
    riff = le(data[4:8])
    if riff < 12 or riff > len(data) - 8:
        raise Bad
    file = data[:riff + 8]
    at = 12
    if file[12:16] == b"VP8X":  # extended: skip the optional chunks (alpha is not decoded)
        if len(file) < 30 or le(file[16:20]) != 10 or file[20] & 0x02:
            raise Bad
        if le(file[24:27]) + 1 != width or le(file[27:30]) + 1 != height:
            raise Bad
        at = 30
        while len(file) - at >= 8 and file[at:at + 4] != b"VP8 ":
            if file[at:at + 4] == b"VP8L":
                raise Bad
            size = le(file[at + 4:at + 8])
            if size > len(file) - at - 8:
                raise Bad
            at += 8 + size + size % 2
            if at > len(file):
                raise Bad
    if len(file) - at < 8 or file[at:at + 4] != b"VP8 ":
        raise Bad
    chunk = le(file[at + 4:at + 8])
    if chunk > len(file) - at - 8:
        raise Bad
    vp8 = file[at + 8:at + 8 + chunk]
    if len(vp8) < 10:
        raise Bad
    tag = le(vp8[0:3])
    if tag & 1 or (tag >> 1) & 7 > 3 or not (tag >> 4) & 1:
        raise Bad
    first_size = tag >> 5
    if vp8[3:6] != b"\x9d\x01\x2a" or le(vp8[6:8]) & 0x3FFF != width or le(vp8[8:10]) & 0x3FFF != height:
        raise Bad
    if first_size > len(vp8) - 10:
        raise Bad
    br = _Bool(vp8[10:10 + first_size])
    rest = vp8[10 + first_size:]
    br.bit(128)  # colour space
    br.bit(128)  # clamping type
    tables = _tables()
    frame: dict = {"probs": list(tables["coeff_probs"]), "segment_probs": [255, 255, 255], "update_map": False, "skip_prob": None}
    seg_quant, seg_level, absolute = [0] * 4, [0] * 4, True
    segmented = br.bit(128)
    if segmented:
        frame["update_map"] = bool(br.bit(128))
        if br.bit(128):
            absolute = bool(br.bit(128))
            seg_quant = [br.optional(7) for _ in range(4)]
            seg_level = [br.optional(6) for _ in range(4)]
        if frame["update_map"]:
            frame["segment_probs"] = [br.literal(8) if br.bit(128) else 255 for _ in range(3)]
    if br.exhausted:
        raise Bad
    frame["simple"] = bool(br.bit(128))
    level, sharpness = br.literal(6), br.literal(3)
    ref_delta = mode_delta = 0
    if br.bit(128) and br.bit(128):
        for k in range(4):
            if br.bit(128):
                v = br.signed(6)
                ref_delta = v if k == 0 else ref_delta
        for k in range(4):
            if br.bit(128):
                v = br.signed(6)
                mode_delta = v if k == 0 else mode_delta
    if br.exhausted:
        raise Bad
    count = 1 << br.literal(2)
    if len(rest) < 3 * (count - 1):
        raise Bad
    parts, start = [], 3 * (count - 1)
    for k in range(count - 1):
        size = min(le(rest[3 * k:3 * k + 3]), len(rest) - start)
        parts.append(_Bool(rest[start:start + size]))
        start += size
    if start >= len(rest):
        raise Bad
    parts.append(_Bool(rest[start:]))
    base = br.literal(7)
    deltas = [br.optional(4) for _ in range(5)]
    clamp = lambda v, high: min(max(v, 0), high)  # noqa: E731
    dc_table, ac_table = tables["dc_table"], tables["ac_table"]
    frame["quant"] = []
    for s in range(4):
        q = base if not segmented else seg_quant[s] if absolute else seg_quant[s] + base
        frame["quant"].append({
            "y1": (dc_table[clamp(q + deltas[0], 127)], ac_table[clamp(q, 127)]),
            "y2": (dc_table[clamp(q + deltas[1], 127)] * 2, max(8, (ac_table[clamp(q + deltas[2], 127)] * 101581) >> 16)),
            "uv": (dc_table[clamp(q + deltas[3], 117)], ac_table[clamp(q + deltas[4], 127)]),
        })
    br.bit(128)  # refresh_entropy_probs
    for k, prob in enumerate(tables["coeff_updates"]):
        if br.bit(prob):
            frame["probs"][k] = br.literal(8)
    if br.bit(128):
        frame["skip_prob"] = br.literal(8)
    filtered = level != 0
    frame["filters"] = []
    for s in range(4):
        pair = []
        for kind in range(2):
            lv = level if not segmented else seg_level[s] if absolute else seg_level[s] + level
            lv = min(max(lv + ref_delta + (mode_delta if kind else 0), 0), 63)
            inner = lv
            if sharpness > 0:
                inner >>= 2 if sharpness > 4 else 1
                inner = min(inner, 9 - sharpness)
            inner = max(inner, 1)
            if lv == 0 or not filtered:
                pair.append({"limit": 0, "inner_limit": 0, "hev": 0})
            else:
                pair.append({"limit": 2 * lv + inner, "inner_limit": inner, "hev": 2 if lv >= 40 else 1 if lv >= 15 else 0})
        frame["filters"].append(pair)
    columns, rows = -(-width // 16), -(-height // 16)
    planes = [np.zeros((rows * 16, columns * 16), np.int64), np.zeros((rows * 8, columns * 8), np.int64), np.zeros((rows * 8, columns * 8), np.int64)]
    info = np.zeros((rows, columns), np.int64)
    top_modes = [[DC] * 4 for _ in range(columns)]
    top_nz = [[0] * 9 for _ in range(columns)]
    for my in range(rows):
        left_modes, left_nz = [DC] * 4, [0] * 9
        tokens = parts[my & (count - 1)]
        for mx in range(columns):
            m = _modes(br, frame, top_modes[mx], left_modes)
            coeffs = [[0] * 16 for _ in range(25)]
            coded = False
            if m["skip"]:
                top_nz[mx][:8] = [0] * 8
                left_nz[:8] = [0] * 8
                if not m["i4"]:
                    top_nz[mx][8] = left_nz[8] = 0
            else:
                coded = _residuals(tokens, frame, m, top_nz[mx], left_nz, coeffs)
            if tokens.exhausted:
                raise Bad
            info[my, mx] = m["segment"] | int(m["i4"]) << 2 | int(coded) << 3
            _reconstruct(planes, mx, my, m, coeffs)
        if br.exhausted:
            raise Bad
    if filtered:
        _loop_filter(planes, info, frame)
    y_plane, u_plane, v_plane = planes
    channels = 1 if format == "gray" else 3
    out = np.zeros((height, width, channels), np.uint8)
    last = (height + 1) // 2 - 1
    for y in range(height):
        c = y // 2
        near = 0 if y == 0 else (y - 1) // 2 if y % 2 else c
        far = 0 if y == 0 else min((y + 1) // 2, last) if y % 2 else c - 1
        for x in range(width):
            r, g, b = _rgb(int(y_plane[y, x]), _chroma(u_plane, near, far, x, width), _chroma(v_plane, near, far, x, width))
            if format == "gray":
                out[y, x, 0] = (r * 19595 + g * 38470 + b * 7471 + 0x8000) >> 16
            else:
                out[y, x] = (r, g, b) if format == "rgb" else (b, g, r)
    return out
