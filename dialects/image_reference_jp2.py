"""JPEG 2000 for the image dialect's interpreter reference (`image_reference.decode_jp2`):
dialects/image_jp2.zig's algorithm step for step, in Python integers (and NumPy float32 for the
9/7 wavelet, as the Zig's f32), with the same refusals (a JP2 file or a J2K codestream, 5/3 or 9/7,
8-bit unsigned samples, one quality layer)."""

from __future__ import annotations

import numpy as np

JP2_SIGNATURE = b"\x00\x00\x00\x0cjP  \r\n\x87\n"
J2K_START = b"\xffO\xffQ"

# T.800 Table C.2: Qe, the next state after an MPS and after an LPS, and whether an LPS switches.
QE = (
    0x5601, 0x3401, 0x1801, 0x0AC1, 0x0521, 0x0221, 0x5601, 0x5401, 0x4801, 0x3801, 0x3001, 0x2401,
    0x1C01, 0x1601, 0x5601, 0x5401, 0x5101, 0x4801, 0x3801, 0x3401, 0x3001, 0x2801, 0x2401, 0x2201,
    0x1C01, 0x1801, 0x1601, 0x1401, 0x1201, 0x1101, 0x0AC1, 0x09C1, 0x08A1, 0x0521, 0x0441, 0x02A1,
    0x0221, 0x0141, 0x0111, 0x0085, 0x0049, 0x0025, 0x0015, 0x0009, 0x0005, 0x0001, 0x5601,
)
NMPS = (
    1, 2, 3, 4, 5, 38, 7, 8, 9, 10, 11, 12, 13, 29, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24,
    25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 45, 46,
)
NLPS = (
    1, 6, 9, 12, 29, 33, 6, 14, 14, 14, 17, 18, 20, 21, 14, 14, 15, 16, 17, 18, 19, 19, 20, 21,
    22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 46,
)
SWITCHES = frozenset({0, 6, 14})
CTX_SIGN, CTX_REFINE, CTX_RUN, CTX_UNIFORM = 9, 14, 17, 18
SIG, NEG, REFINED, VISITED = 1, 2, 4, 8


class Bad(Exception):
    """The bytes are not an image the decoder reads."""


def _i32(x: int) -> int:
    return (x + 2**31) % 2**32 - 2**31


def _trunc2(x: int) -> int:
    """C's x / 2 (towards zero)."""
    return -((-x) // 2) if x < 0 else x // 2


def _be(d: bytes, at: int, n: int) -> int:
    if at < 0 or at + n > len(d):
        raise Bad
    return int.from_bytes(d[at:at + n], "big")


def _ceil_shift(a: int, s: int) -> int:
    return -((-a) >> s)


def max_blocks(height: int, width: int) -> int:
    return ((width + 3) // 4 + 1) * ((height + 3) // 4 + 1)


def flag_bytes(height: int, width: int) -> int:
    return min((min(width, 1024) + 2) * (min(height, 1024) + 2), 6156)


class Mq:
    """The MQ decoder over one code block's bytes (past them: 0xFF)."""

    def __init__(self, data: bytes):
        self.data, self.pos = data, 0
        self.reset()
        self.c = self.at(0) << 16
        self.ct = 0
        self.byte_in()
        self.c = (self.c << 7) & 0xFFFFFFFF
        self.ct -= 7
        self.a = 0x8000

    def at(self, i: int) -> int:
        return self.data[i] if i < len(self.data) else 0xFF

    def reset(self) -> None:
        self.state = [0] * 19
        self.mps = [0] * 19
        self.state[CTX_UNIFORM], self.state[CTX_RUN], self.state[0] = 46, 3, 4

    def byte_in(self) -> None:
        nxt = self.at(self.pos + 1)
        if self.at(self.pos) == 0xFF:
            if nxt > 0x8F:
                self.c += 0xFF00
                self.ct = 8
            else:
                self.pos += 1
                self.c += nxt << 9
                self.ct = 7
        else:
            if self.pos < len(self.data):
                self.pos += 1
            self.c += nxt << 8
            self.ct = 8
        self.c &= 0xFFFFFFFF

    def decode(self, cx: int) -> int:
        s = self.state[cx]
        q = QE[s]
        d = self.mps[cx]
        self.a = (self.a - q) & 0xFFFFFFFF
        if (self.c >> 16) < q:
            if self.a < q:
                self.state[cx] = NMPS[s]
            else:
                d ^= 1
                if s in SWITCHES:
                    self.mps[cx] ^= 1
                self.state[cx] = NLPS[s]
            self.a = q
        else:
            self.c = (self.c - (q << 16)) & 0xFFFFFFFF
            if self.a & 0x8000:
                return d
            if self.a < q:
                d ^= 1
                if s in SWITCHES:
                    self.mps[cx] ^= 1
                self.state[cx] = NLPS[s]
            else:
                self.state[cx] = NMPS[s]
        while True:
            if self.ct == 0:
                self.byte_in()
            self.a = (self.a << 1) & 0xFFFFFFFF
            self.c = (self.c << 1) & 0xFFFFFFFF
            self.ct -= 1
            if self.a & 0x8000:
                return d


class Bits:
    """Packet-header bits, MSB first, 7 after a 0xFF; past `end` is an error."""

    def __init__(self, data: bytes, pos: int, end: int):
        self.data, self.pos, self.end, self.last, self.ct = data, pos, end, 0, 0

    def bit(self) -> int:
        if self.ct == 0:
            if self.pos >= self.end:
                raise Bad
            self.ct = 7 if self.last == 0xFF else 8
            self.last = self.data[self.pos]
            self.pos += 1
        self.ct -= 1
        return (self.last >> self.ct) & 1

    def bits(self, n: int) -> int:
        v = 0
        for _ in range(n):
            v = v << 1 | self.bit()
        return v

    def align(self) -> None:
        if self.last == 0xFF:
            if self.pos >= self.end:
                raise Bad
            self.pos += 1
        self.last, self.ct = 0, 0


class TagTree:
    def __init__(self, w: int, h: int, capacity: int):
        self.levels = []  # (w, start)
        total = 0
        while True:
            if len(self.levels) >= 20:
                raise Bad
            self.levels.append((w, total))
            total += w * h
            if total > capacity:
                raise Bad
            if w <= 1 and h <= 1:
                break
            w, h = (w + 1) // 2, (h + 1) // 2
        self.value = [0xFFFF] * total
        self.low = [0] * total

    def decode(self, bits: Bits, x: int, y: int, threshold: int) -> bool:
        path = [start + (y >> lv) * w + (x >> lv) for lv, (w, start) in enumerate(self.levels)]
        low = 0
        node = 0
        for node in reversed(path):
            if low > self.low[node]:
                self.low[node] = low
            else:
                low = self.low[node]
            while low < threshold and low < self.value[node]:
                if bits.bit():
                    self.value[node] = low
                else:
                    low += 1
            self.low[node] = low
        return self.value[node] < threshold


def _coding(seg: bytes, at: int, precincts_defined: bool) -> dict:
    if len(seg) < at + 5:
        raise Bad
    c = {"levels": seg[at], "xcb": seg[at + 1] + 2, "ycb": seg[at + 2] + 2, "style": seg[at + 3]}
    if c["levels"] > 32 or c["xcb"] > 10 or c["ycb"] > 10 or c["xcb"] + c["ycb"] > 12:
        raise Bad
    if seg[at + 4] > 1:
        raise Bad
    c["reversible"] = seg[at + 4] == 1
    if c["style"] & (1 | 4 | 8) or c["style"] > 63:
        raise Bad
    precincts = []
    for r in range(c["levels"] + 1):
        if precincts_defined:
            if len(seg) <= at + 5 + r:
                raise Bad
            p = seg[at + 5 + r]
            if r > 0 and (p & 15 == 0 or p >> 4 == 0):
                raise Bad
            precincts.append(p)
        else:
            precincts.append(0xFF)
    c["precincts"] = precincts
    return c


def _quant(seg: bytes, at: int) -> dict:
    if len(seg) <= at:
        raise Bad
    style, body = seg[at] & 31, seg[at + 1:]
    if style == 0:
        if not 0 < len(body) <= 97:
            raise Bad
        expn, mant = [b >> 3 for b in body], [0] * len(body)
    elif style == 1:
        if len(body) != 2:
            raise Bad
        e0, m0 = body[0] >> 3, (body[0] & 7) << 8 | body[1]
        expn = [max(e0 - (0 if b == 0 else (b - 1) // 3), 0) for b in range(97)]
        mant = [m0] * 97
    elif style == 2:
        if not body or len(body) % 2 or len(body) > 2 * 97:
            raise Bad
        expn = [body[2 * b] >> 3 for b in range(len(body) // 2)]
        mant = [(body[2 * b] & 7) << 8 | body[2 * b + 1] for b in range(len(body) // 2)]
    else:
        raise Bad
    return {"guard": seg[at] >> 5, "expn": expn, "mant": mant}


def _half_step(quant: dict, index: int) -> np.float32:
    """Half the 9/7 quantization step of subband `index`, as OpenJPEG: (1 + mant/2048)·2^(8 - expn)
    in double, rounded to float, halved."""
    step = np.float32((1.0 + quant["mant"][index] / 2048.0) * 2.0 ** (8 - quant["expn"][index]))
    return np.float32(0.5) * step


def _marker(p: dict, m: int, seg: bytes, comps: int) -> None:
    wide = comps > 256
    if m == 0xFF52:
        if len(seg) < 5:
            raise Bad
        p["scod"], p["progression"], p["layers"], p["mct"] = seg[0], seg[1], _be(seg, 2, 2), seg[4]
        if p["scod"] > 7 or p["progression"] > 4 or p["mct"] > 1 or p["layers"] != 1:
            raise Bad
        p["cod"] = _coding(seg, 5, bool(seg[0] & 1))
    elif m in (0xFF53, 0xFF5D):
        if wide:
            c, at = _be(seg, 0, 2), 2
        else:
            if not seg:
                raise Bad
            c, at = seg[0], 1
        if c >= comps:
            raise Bad
        if m == 0xFF53:
            if len(seg) <= at:
                raise Bad
            value = _coding(seg, at + 1, bool(seg[at] & 1))
            if c < 4:
                p["coc"][c] = value
        else:
            value = _quant(seg, at)
            if c < 4:
                p["qcc"][c] = value
    elif m == 0xFF5C:
        p["qcd"] = _quant(seg, 0)
    elif m in (0xFF5E, 0xFF5F, 0xFF60, 0xFF61):
        raise Bad
    elif m in (0xFF55, 0xFF57, 0xFF58, 0xFF63, 0xFF64) or 0xFF30 <= m <= 0xFF3F:
        pass
    else:
        raise Bad


class TileComp:
    def __init__(self, rect, coding, quant, plane, decoded):
        self.rect, self.coding, self.quant, self.plane, self.decoded = rect, coding, quant, plane, decoded

    def res(self, r: int):
        s = self.coding["levels"] - r
        return tuple(_ceil_shift(v, s) for v in self.rect)

    def band(self, r: int, b: int):
        if r == 0:
            return self.res(0)
        level = self.coding["levels"] - r
        xo, yo = (b & 1) << level, (b >> 1) << level
        x0, y0, x1, y1 = self.rect
        return (_ceil_shift(x0 - xo, level + 1), _ceil_shift(y0 - yo, level + 1),
                _ceil_shift(x1 - xo, level + 1), _ceil_shift(y1 - yo, level + 1))

    def grid(self, r: int):
        x0, y0, x1, y1 = self.res(r)
        px, py = self.coding["precincts"][r] & 15, self.coding["precincts"][r] >> 4
        empty = x0 == x1 or y0 == y1
        return (px, py, x0 >> px, y0 >> py, 0 if empty else _ceil_shift(x1, px) - (x0 >> px),
                0 if empty else _ceil_shift(y1, py) - (y0 >> py))


def _neighbours(flags, f, fs) -> bool:
    return bool((flags[f - fs - 1] | flags[f - fs] | flags[f - fs + 1] | flags[f - 1] | flags[f + 1]
                 | flags[f + fs - 1] | flags[f + fs] | flags[f + fs + 1]) & SIG)


def _zero_context(flags, f, fs, orient) -> int:
    h = (flags[f - 1] & SIG) + (flags[f + 1] & SIG)
    v = (flags[f - fs] & SIG) + (flags[f + fs] & SIG)
    d = (flags[f - fs - 1] & SIG) + (flags[f - fs + 1] & SIG) + (flags[f + fs - 1] & SIG) + (flags[f + fs + 1] & SIG)
    if orient == 3:
        hv = h + v
        return min(hv, 2) if d == 0 else 3 + min(hv, 2) if d == 1 else (6 if hv == 0 else 7) if d == 2 else 8
    if orient == 1:
        h, v = v, h
    if h == 2:
        return 8
    if h == 1:
        return 7 if v else 6 if d else 5
    return 2 + v if v else min(d, 2)


def _significant(mq, flags, f, fs, plane, at, value) -> None:
    def c(b):
        return 0 if not b & SIG else -1 if b & NEG else 1

    h = max(-1, min(1, c(flags[f - 1]) + c(flags[f + 1])))
    v = max(-1, min(1, c(flags[f - fs]) + c(flags[f + fs])))
    flip = 0
    if h < 0 or (h == 0 and v < 0):
        h, v, flip = -h, -v, 1
    cx = (CTX_SIGN if v == 0 else CTX_SIGN + 1) if h == 0 else CTX_SIGN + 3 + v
    negative = mq.decode(cx) ^ flip
    plane[at] = -value if negative else value
    flags[f] |= SIG | (NEG if negative else 0)


def _code_block(flag_cap, data, plane, at, stride, w, h, orient, numbps, passes, style, half_step=None) -> None:
    fs = w + 2
    if fs * (h + 2) > flag_cap:
        raise Bad
    flags = [0] * (fs * (h + 2))
    mq = Mq(data)
    bp, kind, left = numbps, 2, passes
    while left > 0 and bp >= 1:
        one = 1 << bp
        oph, half = one | (one >> 1), one >> 1
        for y0 in range(0, h, 4):
            for x in range(w):
                if kind == 0:
                    for y in range(y0, min(y0 + 4, h)):
                        f = (y + 1) * fs + x + 1
                        if flags[f] & SIG or not _neighbours(flags, f, fs):
                            continue
                        if mq.decode(_zero_context(flags, f, fs, orient)):
                            _significant(mq, flags, f, fs, plane, at + y * stride + x, oph)
                        flags[f] |= VISITED
                elif kind == 1:
                    for y in range(y0, min(y0 + 4, h)):
                        f = (y + 1) * fs + x + 1
                        if flags[f] & (SIG | VISITED) != SIG:
                            continue
                        cx = CTX_REFINE + 2 if flags[f] & REFINED else CTX_REFINE + 1 if _neighbours(flags, f, fs) else CTX_REFINE
                        v = mq.decode(cx)
                        k = at + y * stride + x
                        plane[k] = _i32(plane[k] + half) if (v == 1) != (plane[k] < 0) else _i32(plane[k] - half)
                        flags[f] |= REFINED
                else:
                    y = y0
                    if y0 + 4 <= h:
                        quiet = all(not flags[(yy + 1) * fs + x + 1] & (SIG | VISITED)
                                    and not _neighbours(flags, (yy + 1) * fs + x + 1, fs) for yy in range(y0, y0 + 4))
                        if quiet:
                            if mq.decode(CTX_RUN) == 0:
                                continue
                            r = mq.decode(CTX_UNIFORM) << 1
                            r |= mq.decode(CTX_UNIFORM)
                            y = y0 + r
                            _significant(mq, flags, (y + 1) * fs + x + 1, fs, plane, at + y * stride + x, oph)
                            y += 1
                    while y < min(y0 + 4, h):
                        f = (y + 1) * fs + x + 1
                        if not flags[f] & (SIG | VISITED) and mq.decode(_zero_context(flags, f, fs, orient)):
                            _significant(mq, flags, f, fs, plane, at + y * stride + x, oph)
                        y += 1
        if kind == 2:
            flags = [b & ~VISITED for b in flags]
            if style & 32:
                for _ in range(4):
                    mq.decode(CTX_UNIFORM)
        if style & 2:
            mq.reset()
        kind += 1
        if kind == 3:
            kind, bp = 0, bp - 1
        left -= 1
    for y in range(h):
        for x in range(w):
            v = plane[at + y * stride + x]
            plane[at + y * stride + x] = _trunc2(v) if half_step is None else np.float32(v) * half_step


def _packet(st, tc, r, p, data, pos, end, scod) -> int:
    if scod & 2 and pos + 6 <= end and data[pos] == 0xFF and data[pos + 1] == 0x91:
        pos += 6
    px, py, gx0, gy0, gw, gh = tc.grid(r)
    pi, pj = p % gw, p // gw
    bands = 1 if r == 0 else 3
    shift = 0 if r == 0 else 1
    xcb, ycb = min(tc.coding["xcb"], px - shift), min(tc.coding["ycb"], py - shift)
    bits = Bits(data, pos, end)
    present = bits.bit()
    grids, blocks = [], []
    for bi in range(bands):
        b = 0 if r == 0 else bi + 1
        bx0, by0, bx1, by1 = tc.band(r, b)
        sx, sy = px - shift, py - shift
        x0, y0 = max(bx0, (gx0 + pi) << sx), max(by0, (gy0 + pj) << sy)
        x1, y1 = min(bx1, (gx0 + pi + 1) << sx), min(by1, (gy0 + pj + 1) << sy)
        grid = (0, 0, 0, 0) if x0 >= x1 or y0 >= y1 else (x0 >> xcb, y0 >> ycb, _ceil_shift(x1, xcb), _ceil_shift(y1, ycb))
        nw, nh = grid[2] - grid[0], grid[3] - grid[1]
        if nw * nh > st["max_blocks"]:
            raise Bad
        grids.append(grid)
        found = {}
        blocks.append(found)
        if not present or nw * nh == 0:
            continue
        inclusion = TagTree(nw, nh, st["max_nodes"])
        zeros = TagTree(nw, nh, st["max_nodes"])
        for j in range(nh):
            for i in range(nw):
                if not inclusion.decode(bits, i, j, 1):
                    continue
                z = 0
                while not zeros.decode(bits, i, j, z + 1):
                    z += 1
                    if z > 64:
                        raise Bad
                n = 1
                if bits.bit():
                    n = 2
                    if bits.bit():
                        n = 3 + bits.bits(2)
                        if n == 6:
                            n = 6 + bits.bits(5)
                            if n == 37:
                                n = 37 + bits.bits(7)
                lblock = 3
                while bits.bit():
                    lblock += 1
                    if lblock > 32:
                        raise Bad
                nbits = lblock + n.bit_length() - 1
                if nbits > 32:
                    raise Bad
                found[(i, j)] = (bits.bits(nbits), n, z + 1)
    bits.align()
    pos = bits.pos
    if scod & 4 and pos + 2 <= end and data[pos] == 0xFF and data[pos + 1] == 0x92:
        pos += 2
    if not present:
        return pos
    for bi in range(bands):
        b = 0 if r == 0 else bi + 1
        bx0, by0, bx1, by1 = tc.band(r, b)
        gx0_, gy0_, gx1_, gy1_ = grids[bi]
        ox, oy = bx0, by0
        if r > 0:
            lx0, ly0, lx1, ly1 = tc.res(r - 1)
            if b & 1:
                ox -= lx1 - lx0
            if b & 2:
                oy -= ly1 - ly0
        index = 0 if r == 0 else 3 * (r - 1) + b
        if index >= len(tc.quant["expn"]):
            raise Bad
        mb = tc.quant["guard"] + tc.quant["expn"][index] - 1
        for j in range(gy1_ - gy0_):
            for i in range(gx1_ - gx0_):
                if (i, j) not in blocks[bi]:
                    continue
                length, n, zero = blocks[bi][(i, j)]
                if length > end - pos:
                    raise Bad
                chunk = data[pos:pos + length]
                pos += length
                if not tc.decoded:
                    continue
                if mb + 1 < zero:
                    raise Bad
                numbps = mb + 1 - zero
                if numbps >= 31:
                    raise Bad
                cx0 = max((gx0_ + i) << xcb, bx0)
                cy0 = max((gy0_ + j) << ycb, by0)
                cx1 = min((gx0_ + i + 1) << xcb, bx1)
                cy1 = min((gy0_ + j + 1) << ycb, by1)
                px_ = cx0 - ox + tc.rect[0] - st["xo"]
                py_ = cy0 - oy + tc.rect[1] - st["yo"]
                if px_ < 0 or py_ < 0 or cx1 <= cx0 or cy1 <= cy0:
                    raise Bad
                at = py_ * st["width"] + px_
                w, h = cx1 - cx0, cy1 - cy0
                if (h - 1) * st["width"] + at + w > len(tc.plane):
                    raise Bad
                half_step = None if tc.coding["reversible"] else _half_step(tc.quant, index)
                _code_block(st["flags"], chunk, tc.plane, at, st["width"], w, h, b, numbps, n, tc.coding["style"], half_step)
    return pos


def _lift53(x: list, cas: int) -> None:
    n = len(x)
    if n == 1:
        if cas:
            x[0] = _trunc2(x[0])
        return

    def refl(i):
        return x[-i if i < 0 else 2 * (n - 1) - i if i >= n else i]

    for p in range(cas, n, 2):
        x[p] = _i32(x[p] - (_i32(refl(p - 1) + refl(p + 1) + 2) >> 2))
    for p in range(1 - cas, n, 2):
        x[p] = _i32(x[p] + (_i32(refl(p - 1) + refl(p + 1)) >> 1))


LIFT97 = ((0, np.float32(-0.443506852)), (1, np.float32(-0.882911075)), (0, np.float32(0.052980118)),
          (1, np.float32(1.586134342)))
"""The 9/7 lifting steps of OpenJPEG's decoder: (low 0 / high 1 samples updated, constant)."""


def _lift97(x: list, cas: int) -> None:
    n = len(x)
    if n == 1:
        return
    first = (cas, 1 - cas)
    for k in range(first[0], n, 2):
        x[k] = x[k] * np.float32(1.230174105)
    for k in range(first[1], n, 2):
        x[k] = x[k] * np.float32(1.625732422)
    for which, c in LIFT97:
        for k in range(first[which], n, 2):
            if k == 0:
                x[k] = x[k] + (x[1] + x[1]) * c
            elif k + 1 >= n:
                x[k] = x[k] + x[k - 1] * (c + c)
            else:
                x[k] = x[k] + (x[k - 1] + x[k + 1]) * c


def _shifted(v) -> int:
    """A 9/7 sample rounded half to even (lrintf), plus 128, clamped to 0..255."""
    if not -1.0e9 < v < 1.0e9:
        return 255 if v > 0 else 0
    return max(0, min(255, int(np.rint(v)) + 128))


def _inverse_wavelet(st, tc) -> None:
    width = st["width"]
    base = (tc.rect[1] - st["yo"]) * width + tc.rect[0] - st["xo"]
    plane = tc.plane
    for r in range(1, tc.coding["levels"] + 1):
        x0, y0, x1, y1 = tc.res(r)
        lx0, ly0, lx1, ly1 = tc.res(r - 1)
        w, h, sw, sh = x1 - x0, y1 - y0, lx1 - lx0, ly1 - ly0
        if w == 0 or h == 0:
            continue
        cx, cy = x0 & 1, y0 & 1
        for y in range(h):
            row = base + y * width
            line = [plane[row + (q >> 1)] if (q + cx) & 1 == 0 else plane[row + sw + (q >> 1)] for q in range(w)]
            (_lift53 if tc.coding["reversible"] else _lift97)(line, cx)
            plane[row:row + w] = line
        for x in range(w):
            line = [plane[base + ((q >> 1) if (q + cy) & 1 == 0 else sh + (q >> 1)) * width + x] for q in range(h)]
            (_lift53 if tc.coding["reversible"] else _lift97)(line, cy)
            for q in range(h):
                plane[base + q * width + x] = line[q]


def _packets(st, tcs, max_levels, order, scod, rect, data, pos, end) -> int:
    if order <= 1:
        for r in range(max_levels + 1):
            for tc in tcs:
                if r > tc.coding["levels"]:
                    continue
                g = tc.grid(r)
                for p in range(g[4] * g[5]):
                    pos = _packet(st, tc, r, p, data, pos, end, scod)
        return pos
    dx = dy = 1 << 62
    for tc in tcs:
        for r in range(tc.coding["levels"] + 1):
            g = tc.grid(r)
            level = tc.coding["levels"] - r
            dx, dy = min(dx, 1 << (g[0] + level)), min(dy, 1 << (g[1] + level))

    def visit(tc, r, x, y, pos):
        if r > tc.coding["levels"]:
            return pos
        px, py, gx0, gy0, gw, gh = tc.grid(r)
        if gw == 0 or gh == 0:
            return pos
        level = tc.coding["levels"] - r
        rx0, ry0, _, _ = tc.res(r)
        xs, ys = px + level, py + level
        if not (y % (1 << ys) == 0 or (y == rect[1] and (ry0 << level) % (1 << ys) != 0)):
            return pos
        if not (x % (1 << xs) == 0 or (x == rect[0] and (rx0 << level) % (1 << xs) != 0)):
            return pos
        pi = (_ceil_shift(x, level) >> px) - gx0
        pj = (_ceil_shift(y, level) >> py) - gy0
        if pi < 0 or pj < 0 or pi >= gw or pj >= gh:
            raise Bad
        return _packet(st, tc, r, pi + pj * gw, data, pos, end, scod)

    def positions():
        y = rect[1]
        while y < rect[3]:
            x = rect[0]
            while x < rect[2]:
                yield x, y
                x += dx - x % dx
            y += dy - y % dy

    if order == 2:
        for r in range(max_levels + 1):
            for x, y in positions():
                for tc in tcs:
                    pos = visit(tc, r, x, y, pos)
    elif order == 3:
        for x, y in positions():
            for tc in tcs:
                for r in range(max_levels + 1):
                    pos = visit(tc, r, x, y, pos)
    else:
        for tc in tcs:
            for x, y in positions():
                for r in range(max_levels + 1):
                    pos = visit(tc, r, x, y, pos)
    return pos


def _codestream(data: bytes) -> bytes:
    at, depth_end = 0, len(data)
    while at + 8 <= len(data):
        length, kind, header = _be(data, at, 4), data[at + 4:at + 8], 8
        if length == 1:
            if at + 16 > len(data):
                raise Bad
            length, header = _be(data, at + 8, 8), 16
        elif length == 0:
            length = len(data) - at
        if length < header or length > len(data) - at:
            raise Bad
        body = data[at + header:at + length]
        if kind == b"jp2c":
            return body
        if kind == b"pclr":
            raise Bad
        if kind == b"colr" and len(body) >= 7 and body[0] == 1 and _be(body, 3, 4) == 18:
            raise Bad
        if kind == b"jp2h":
            depth_end = at + length
            at += header
        else:
            at += length
        if at > depth_end:
            raise Bad
        if at == depth_end:
            depth_end = len(data)
    raise Bad


def _decode(data: bytes, height: int, width: int, format: str) -> np.ndarray:  # noqa: C901
    cs = _codestream(data) if data[:12] == JP2_SIGNATURE else data
    if cs[:4] != J2K_START:
        raise Bad
    lsiz = _be(cs, 4, 2)
    if lsiz < 41 or 4 + lsiz > len(cs):
        raise Bad
    siz = cs[6:4 + lsiz]
    xsiz, ysiz, xo, yo, xt, yt, xto, yto = (_be(siz, 2 + 4 * k, 4) for k in range(8))
    comps = _be(siz, 34, 2)
    if xsiz - xo != width or ysiz - yo != height:
        raise Bad
    if xt == 0 or yt == 0 or xto > xo or yto > yo or xto + xt <= xo or yto + yt <= yo:
        raise Bad
    if comps in (0, 2) or comps > 4 or len(siz) != 36 + 3 * comps:
        raise Bad
    if any(siz[36 + 3 * c:39 + 3 * c] != b"\x07\x01\x01" for c in range(comps)):
        raise Bad
    tiles_x, tiles_y = -(-(xsiz - xto) // xt), -(-(ysiz - yto) // yt)
    if tiles_x > width or tiles_y > height:
        raise Bad
    blocks = max_blocks(height, width)
    st = {"width": width, "xo": xo, "yo": yo, "max_blocks": blocks, "max_nodes": 2 * blocks + 64,
          "flags": flag_bytes(height, width)}
    planes = [[0] * (height * width) for _ in range(3)]

    def fresh():
        return {"scod": 0, "progression": 0, "layers": 0, "mct": 0, "cod": None, "coc": [None] * 4, "qcd": None, "qcc": [None] * 4}

    main = fresh()
    pos = 4 + lsiz
    while True:
        m = _be(cs, pos, 2)
        if m == 0xFF90:
            break
        length = _be(cs, pos + 2, 2)
        if length < 2 or pos + 2 + length > len(cs):
            raise Bad
        _marker(main, m, cs[pos + 4:pos + 2 + length], comps)
        pos += 2 + length
    if main["cod"] is None or main["qcd"] is None:
        raise Bad
    for tile in range(tiles_x * tiles_y):
        if _be(cs, pos, 2) != 0xFF90 or _be(cs, pos + 2, 2) != 10:
            raise Bad
        isot, psot = _be(cs, pos + 4, 2), _be(cs, pos + 6, 4)
        if isot != tile or pos + 12 > len(cs) or cs[pos + 10] != 0 or cs[pos + 11] > 1:
            raise Bad
        if psot == 0:
            if len(cs) < pos + 14:
                raise Bad
            end = len(cs) - 2
        else:
            end = pos + psot
            if psot < 14 or end > len(cs):
                raise Bad
        p = fresh()
        for k in ("scod", "progression", "layers", "mct"):
            p[k] = main[k]
        at = pos + 12
        while True:
            m = _be(cs, at, 2)
            if m == 0xFF93:
                break
            length = _be(cs, at + 2, 2)
            if length < 2 or at + 2 + length > end:
                raise Bad
            _marker(p, m, cs[at + 4:at + 2 + length], comps)
            at += 2 + length
        at += 2
        if at > end:
            raise Bad
        tx, ty = tile % tiles_x, tile // tiles_x
        rect = (max(xto + tx * xt, xo), max(yto + ty * yt, yo), min(xto + (tx + 1) * xt, xsiz), min(yto + (ty + 1) * yt, ysiz))
        tcs = []
        for c in range(comps):
            coding = p["coc"][c] or p["cod"] or main["coc"][c] or main["cod"]
            quant = p["qcc"][c] or p["qcd"] or main["qcc"][c] or main["qcd"]
            tcs.append(TileComp(rect, coding, quant, planes[c] if c < 3 else [], c < 3))
            if c < 3:
                zero = 0 if coding["reversible"] else np.float32(0)
                for y in range(rect[1] - yo, rect[3] - yo):
                    planes[c][y * width + rect[0] - xo:y * width + rect[2] - xo] = [zero] * (rect[2] - rect[0])
        max_levels = max(tc.coding["levels"] for tc in tcs)
        at = _packets(st, tcs, max_levels, p["progression"], p["scod"], rect, cs, at, end)
        for tc in tcs[:3]:
            _inverse_wavelet(st, tc)
        if p["mct"] == 1 and comps < 3:
            raise Bad
        reversible = tcs[0].coding["reversible"]
        if p["mct"] == 1 and any(tc.coding["reversible"] != reversible for tc in tcs[1:3]):
            raise Bad
        for y in range(rect[1] - yo, rect[3] - yo):
            for x in range(rect[0] - xo, rect[2] - xo):
                k = y * width + x
                if p["mct"] == 1 and not reversible:  # ICT in float32, as OpenJPEG
                    y0, u, v = planes[0][k], planes[1][k], planes[2][k]
                    planes[0][k] = y0 + v * np.float32(1.402)
                    planes[1][k] = y0 - u * np.float32(0.34413) - v * np.float32(0.71414)
                    planes[2][k] = y0 + u * np.float32(1.772)
                elif p["mct"] == 1:
                    y0, u, v = planes[0][k], planes[1][k], planes[2][k]
                    g = _i32(y0 - (_i32(u + v) >> 2))
                    planes[0][k], planes[1][k], planes[2][k] = _i32(v + g), g, _i32(u + g)
                for c in range(min(comps, 3)):
                    if tcs[c].coding["reversible"]:
                        planes[c][k] = max(0, min(255, _i32(planes[c][k] + 128)))
                    else:
                        planes[c][k] = _shifted(planes[c][k])
        pos = end
    if _be(cs, pos, 2) != 0xFFD9:
        raise Bad
    image = np.array(planes[:3] if comps >= 3 else planes[:1], np.int64).reshape(-1, height, width).transpose(1, 2, 0)
    rgb = comps >= 3
    color = image if rgb else np.repeat(image, 3, axis=-1)
    if format == "gray":
        gray = image[..., 0] if not rgb else (color[..., 0] * 19595 + color[..., 1] * 38470 + color[..., 2] * 7471 + 0x8000) >> 16
        return gray[..., None].astype(np.uint8)
    return (color if format == "rgb" else color[..., ::-1]).astype(np.uint8)


def decode_jp2(data: bytes, height: int, width: int, format: str) -> np.ndarray | None:
    """The pixels of a JPEG 2000 image of height x width ("rgb", "bgr" or "gray"), or None when
    dialects/image_jp2.zig refuses the bytes."""
    try:
        with np.errstate(all="ignore"):  # a corrupted 9/7 file may overflow to inf, as the Zig's f32
            return _decode(data, height, width, format)
    except (Bad, IndexError):
        return None
