/// JPEG 2000 (a JP2 file or a bare J2K codestream; Part 1, the reversible 5/3 or irreversible 9/7
/// wavelet, 8-bit unsigned samples) decoded for an image of `height` x `width` known at compile
/// time, with no heap and bounded work (image.decode_jp2).
///
/// Memory: the encoded bytes `data[0..size]` are only read; `work[0..zant_jp2_work_bytes(height,
/// width)]` holds three 32-bit component planes of the image (the wavelet coefficients, i32 for
/// 5/3 and f32 bits for 9/7, then the samples), one line for the inverse wavelet, the u16 states
/// of one code block's samples (with their neighbours' significance, so a context is one load and
/// a table), and the code blocks and tag trees of one precinct (bounded by the image size: a
/// precinct needing more is refused). The decoder state (coding and quantization parameters, the
/// MQ decoder) is locals of fixed size. Every index into those is checked, so no byte outside the
/// three buffers is read or written, whatever the input.
///
/// Work: the marker loops advance at least two bytes per step; every packet header bit is a byte
/// of the tile's data; a code block decodes at most 3·30 coding passes over its samples; the
/// inverse wavelet is two passes over each resolution; the colour transform one pass over the
/// image. Every loop is bounded by `size` or by the image's size.
///
/// Result: true with `out` written (height x width x 3, or x 1 for .gray), or false, with `out`
/// untouched, when the bytes are not such an image: another width or height than compiled,
/// samples other than 8-bit unsigned, 2 or more than 4 components (a 4th, alpha, is dropped; a
/// 2nd of 2 too), subsampled components, more than one quality layer, code-block styles other
/// than reset, predictable termination and segmentation symbols (arithmetic bypass, termination
/// on each pass, vertically causal contexts), ROI (RGN), progression changes (POC), packed headers
/// (PPM/PPT), tiles in more than one tile-part or out of order, a colour transform over components
/// of both wavelets, a palette or sYCC JP2 colour space, and any marker, box, packet header or
/// length that runs past its end. The pixels are OpenJPEG's (what PIL decodes with): its
/// reconstruction of truncated code blocks, its f32 9/7 lifting, dequantization and ICT, the
/// reversible colour transform, the DC level shift (9/7 samples rounded half to even), clamped to
/// 0..255; Grayscale of a colour image is PIL's convert("L") of its RGB.
fn zant_jp2_work_bytes(comptime height: usize, comptime width: usize) usize {
    const blocks = ZantJp2.maxBlocks(height, width);
    const flags = ZantJp2.flagBytes(height, width);
    return 4 + 4 * 3 * height * width + 4 * @as(usize, @max(height, width)) + 2 * flags + 3 * blocks * 6 + 3 * 2 * ZantJp2.maxNodes(height, width) * 4;
}

const ZantJp2 = struct {
    const Bad = error{Bad};

    /// The code blocks of one subband in one precinct the work buffer holds.
    fn maxBlocks(comptime height: usize, comptime width: usize) usize {
        return ((width + 3) / 4 + 1) * ((height + 3) / 4 + 1);
    }

    /// The significance states of the largest code block (4,096 samples, sides up to 1,024, at
    /// most the image's), with a border of one.
    fn flagBytes(comptime height: usize, comptime width: usize) usize {
        const w: usize = if (width < 1024) width else 1024;
        const h: usize = if (height < 1024) height else 1024;
        return if ((w + 2) * (h + 2) < 6156) (w + 2) * (h + 2) else 6156;
    }

    /// The nodes of one tag tree the work buffer holds.
    fn maxNodes(comptime height: usize, comptime width: usize) usize {
        return 2 * maxBlocks(height, width) + 64;
    }

    // The MQ decoder's probability estimation (T.800 Table C.2): Qe, next state after an MPS and
    // an LPS, and whether an LPS switches the MPS.
    const qe = [47]u16{
        0x5601, 0x3401, 0x1801, 0x0AC1, 0x0521, 0x0221, 0x5601, 0x5401, 0x4801, 0x3801, 0x3001, 0x2401,
        0x1C01, 0x1601, 0x5601, 0x5401, 0x5101, 0x4801, 0x3801, 0x3401, 0x3001, 0x2801, 0x2401, 0x2201,
        0x1C01, 0x1801, 0x1601, 0x1401, 0x1201, 0x1101, 0x0AC1, 0x09C1, 0x08A1, 0x0521, 0x0441, 0x02A1,
        0x0221, 0x0141, 0x0111, 0x0085, 0x0049, 0x0025, 0x0015, 0x0009, 0x0005, 0x0001, 0x5601,
    };
    const nmps = [47]u8{
        1,  2,  3,  4,  5,  38, 7,  8,  9,  10, 11, 12, 13, 29, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24,
        25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 45, 46,
    };
    const nlps = [47]u8{
        1,  6,  9,  12, 29, 33, 6,  14, 14, 14, 17, 18, 20, 21, 14, 14, 15, 16, 17, 18, 19, 19, 20, 21,
        22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 46,
    };
    const switches = [47]u1{ 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };

    // EBCOT's 19 contexts: 0..8 zero coding, 9..13 sign, 14..16 refinement, 17 run length, 18 uniform.
    const ctx_sign = 9;
    const ctx_refine = 14;
    const ctx_run = 17;
    const ctx_uniform = 18;

    /// The MQ arithmetic decoder (T.800 Annex C) over one code block's bytes; bytes past them read
    /// as 0xFF (a marker: the decoder then feeds ones), as OpenJPEG pads a segment.
    const Mq = struct {
        data: []const u8,
        pos: usize,
        c: u32 = 0,
        a: u32 = 0x8000,
        ct: u32 = 0,
        state: [19]u8 = @splat(0),
        mps: [19]u1 = @splat(0),

        fn at(self: *const Mq, i: usize) u32 {
            return if (i < self.data.len) self.data[i] else 0xFF;
        }

        fn init(data: []const u8) Mq {
            var m = Mq{ .data = data, .pos = 0 };
            m.reset();
            m.c = m.at(0) << 16;
            m.byteIn();
            m.c <<= 7;
            m.ct -= 7;
            m.a = 0x8000;
            return m;
        }

        fn reset(self: *Mq) void {
            self.state = @splat(0);
            self.mps = @splat(0);
            self.state[ctx_uniform] = 46;
            self.state[ctx_run] = 3;
            self.state[0] = 4;
        }

        fn byteIn(self: *Mq) void {
            const next = self.at(self.pos + 1);
            if (self.at(self.pos) == 0xFF) {
                if (next > 0x8F) {
                    self.c +%= 0xFF00;
                    self.ct = 8;
                } else {
                    self.pos += 1;
                    self.c +%= next << 9;
                    self.ct = 7;
                }
            } else {
                if (self.pos < self.data.len) self.pos += 1;
                self.c +%= next << 8;
                self.ct = 8;
            }
        }

        fn decode(self: *Mq, cx: usize) u32 {
            const s = self.state[cx];
            const q: u32 = qe[s];
            var d: u32 = self.mps[cx];
            self.a -%= q;
            if ((self.c >> 16) < q) {
                if (self.a < q) {
                    self.state[cx] = nmps[s];
                } else {
                    d ^= 1;
                    if (switches[s] == 1) self.mps[cx] ^= 1;
                    self.state[cx] = nlps[s];
                }
                self.a = q;
            } else {
                self.c -%= q << 16;
                if (self.a & 0x8000 != 0) return d;
                if (self.a < q) {
                    d ^= 1;
                    if (switches[s] == 1) self.mps[cx] ^= 1;
                    self.state[cx] = nlps[s];
                } else {
                    self.state[cx] = nmps[s];
                }
            }
            while (true) { // renormalize
                if (self.ct == 0) self.byteIn();
                self.a <<= 1;
                self.c <<= 1;
                self.ct -= 1;
                if (self.a & 0x8000 != 0) break;
            }
            return d;
        }
    };

    /// Packet-header bits: MSB first, seven bits in the byte after a 0xFF; past `end` is an error.
    const Bits = struct {
        data: []const u8,
        pos: usize,
        end: usize,
        last: u32 = 0,
        ct: u5 = 0,

        fn bit(self: *Bits) Bad!u32 {
            if (self.ct == 0) {
                if (self.pos >= self.end) return error.Bad;
                self.ct = if (self.last == 0xFF) 7 else 8;
                self.last = self.data[self.pos];
                self.pos += 1;
            }
            self.ct -= 1;
            return (self.last >> self.ct) & 1;
        }

        fn bits(self: *Bits, n: u32) Bad!u32 {
            var v: u32 = 0;
            for (0..n) |_| v = v << 1 | try self.bit();
            return v;
        }

        /// The header ends on a byte; after a 0xFF the next byte (a stuffed bit) is part of it.
        fn alignByte(self: *Bits) Bad!void {
            if (self.last == 0xFF) {
                if (self.pos >= self.end) return error.Bad;
                self.pos += 1;
            }
            self.last = 0;
            self.ct = 0;
        }
    };

    /// A tag tree (T.800 B.10.2) over w x h leaves: each node's value (0xFFFF: not known yet) and
    /// the lower bound known so far, levels stored leaves first.
    const TagTree = struct {
        value: []u16,
        low: []u16,
        w: [20]u32 = @splat(0),
        h: [20]u32 = @splat(0),
        start: [20]u32 = @splat(0),
        levels: u32 = 0,

        fn init(value: []u16, low: []u16, w: u32, h: u32) Bad!TagTree {
            var t = TagTree{ .value = value, .low = low };
            var cw = w;
            var ch = h;
            var total: u32 = 0;
            while (true) {
                if (t.levels >= 20) return error.Bad;
                t.w[t.levels] = cw;
                t.h[t.levels] = ch;
                t.start[t.levels] = total;
                total += cw * ch;
                if (total > value.len) return error.Bad;
                t.levels += 1;
                if (cw <= 1 and ch <= 1) break;
                cw = (cw + 1) / 2;
                ch = (ch + 1) / 2;
            }
            @memset(value[0..total], 0xFFFF);
            @memset(low[0..total], 0);
            return t;
        }

        /// Whether leaf (x, y)'s value is below `threshold`, reading the bits that tell.
        fn decode(self: *TagTree, in: *Bits, x: u32, y: u32, threshold: u32) Bad!bool {
            var path: [20]u32 = undefined;
            for (0..self.levels) |l| path[l] = self.start[l] + (y >> @intCast(l)) * self.w[l] + (x >> @intCast(l));
            var low: u32 = 0;
            var l = self.levels;
            var node: u32 = 0;
            while (l > 0) {
                l -= 1;
                node = path[l];
                if (low > self.low[node]) self.low[node] = @intCast(low) else low = self.low[node];
                while (low < threshold and low < self.value[node]) {
                    if (try in.bit() == 1) self.value[node] = @intCast(low) else low += 1;
                }
                self.low[node] = @intCast(low);
            }
            return self.value[node] < threshold;
        }
    };

    /// A component's coding style (COD/COC): levels, code-block size exponents and style,
    /// precinct size exponents per resolution (PPx | PPy << 4).
    const Coding = struct {
        levels: u32 = 0,
        xcb: u32 = 0,
        ycb: u32 = 0,
        style: u32 = 0,
        reversible: bool = false,
        precincts: [33]u8 = @splat(0xFF),
    };

    /// A component's quantization (QCD/QCC): guard bits and each subband's exponent.
    const Quant = struct {
        guard: u32 = 0,
        count: u32 = 0,
        steps: [97]u16 = @splat(0), // exponent << 11 | mantissa, a subband

        fn expn(self: *const Quant, index: usize) u32 {
            return self.steps[index] >> 11;
        }

        /// Half the quantization step of subband `index` (the decoded values carry a half step
        /// below their last bit plane), as OpenJPEG computes it for the 9/7 wavelet: Rb is the
        /// 8-bit precision with no subband gain, the step rounded once from double to float.
        fn halfStep(self: *const Quant, index: usize) f32 {
            const e: i32 = 8 - @as(i32, @intCast(self.expn(index)));
            const scale: f64 = if (e >= 0) @floatFromInt(@as(u64, 1) << @intCast(e)) else 1.0 / @as(f64, @floatFromInt(@as(u64, 1) << @intCast(-e)));
            const step: f32 = @floatCast((1.0 + @as(f64, @floatFromInt(self.steps[index] & 0x7FF)) / 2048.0) * scale);
            return 0.5 * step;
        }
    };

    /// The coding parameters in force: the main header's, then a tile-part header's.
    const Params = struct {
        scod: u32 = 0,
        progression: u32 = 0,
        layers: u32 = 0,
        mct: u32 = 0,
        cod: ?Coding = null,
        coc: [4]?Coding = @splat(null),
        qcd: ?Quant = null,
        qcc: [4]?Quant = @splat(null),
    };

    fn be16(d: []const u8, at: usize) Bad!u32 {
        if (at > d.len or d.len - at < 2) return error.Bad;
        return @as(u32, d[at]) << 8 | d[at + 1];
    }

    fn be32(d: []const u8, at: usize) Bad!u32 {
        return (try be16(d, at)) << 16 | try be16(d, at + 2);
    }

    fn codingFrom(seg: []const u8, at: usize, precincts_defined: bool) Bad!Coding {
        if (seg.len < at + 5) return error.Bad;
        var c = Coding{ .levels = seg[at], .xcb = @as(u32, seg[at + 1]) + 2, .ycb = @as(u32, seg[at + 2]) + 2, .style = seg[at + 3] };
        if (c.levels > 32 or c.xcb > 10 or c.ycb > 10 or c.xcb + c.ycb > 12) return error.Bad;
        c.reversible = switch (seg[at + 4]) {
            1 => true,
            0 => false, // the irreversible 9/7 wavelet
            else => return error.Bad,
        };
        if (c.style & (1 | 4 | 8) != 0 or c.style > 63) return error.Bad; // bypass, termall, causal
        for (0..c.levels + 1) |r| {
            if (precincts_defined) {
                if (seg.len <= at + 5 + r) return error.Bad;
                const p = seg[at + 5 + r];
                if (r > 0 and (p & 15 == 0 or p >> 4 == 0)) return error.Bad;
                c.precincts[r] = p;
            } else c.precincts[r] = 0xFF; // 2^15 x 2^15: one precinct
        }
        return c;
    }

    fn quantFrom(seg: []const u8, at: usize) Bad!Quant {
        if (seg.len <= at) return error.Bad;
        const s = seg[at];
        var q = Quant{ .guard = s >> 5 };
        const body = seg[at + 1 ..];
        switch (s & 31) {
            0 => { // no quantization: an exponent a subband
                if (body.len == 0 or body.len > 97) return error.Bad;
                q.count = @intCast(body.len);
                for (0..q.count) |b| q.steps[b] = @as(u16, body[b] >> 3) << 11;
            },
            1 => { // scalar derived: the LL step, the others' exponents one less per level
                if (body.len != 2) return error.Bad;
                q.count = 97;
                const e0: u32 = body[0] >> 3;
                const m0: u16 = @intCast((@as(u32, body[0] & 7) << 8) | body[1]);
                for (0..97) |b| {
                    const down: u32 = if (b == 0) 0 else @intCast((b - 1) / 3);
                    q.steps[b] = @as(u16, @intCast(if (e0 > down) e0 - down else 0)) << 11 | m0;
                }
            },
            2 => { // scalar expounded: an exponent and a mantissa a subband
                if (body.len == 0 or body.len % 2 != 0 or body.len > 2 * 97) return error.Bad;
                q.count = @intCast(body.len / 2);
                for (0..q.count) |b| {
                    q.steps[b] = @as(u16, body[2 * b]) << 8 | body[2 * b + 1];
                }
            },
            else => return error.Bad,
        }
        return q;
    }

    /// Read one marker segment of a main or tile-part header into `p`; false for a marker that
    /// is skipped.
    fn marker(p: *Params, m: u32, seg: []const u8, comps: u32) Bad!void {
        const wide = comps > 256;
        switch (m) {
            0xFF52 => { // COD
                if (seg.len < 5) return error.Bad;
                p.scod = seg[0];
                if (p.scod > 7) return error.Bad;
                p.progression = seg[1];
                if (p.progression > 4) return error.Bad;
                p.layers = try be16(seg, 2);
                p.mct = seg[4];
                if (p.mct > 1 or p.layers != 1) return error.Bad; // one quality layer
                p.cod = try codingFrom(seg, 5, p.scod & 1 != 0);
            },
            0xFF53 => { // COC
                const c: u32 = if (wide) try be16(seg, 0) else if (seg.len > 0) seg[0] else return error.Bad;
                const at: usize = if (wide) 2 else 1;
                if (c >= comps or seg.len <= at) return error.Bad;
                const coding = try codingFrom(seg, at + 1, seg[at] & 1 != 0);
                if (c < 4) p.coc[c] = coding;
            },
            0xFF5C => p.qcd = try quantFrom(seg, 0), // QCD
            0xFF5D => { // QCC
                const c: u32 = if (wide) try be16(seg, 0) else if (seg.len > 0) seg[0] else return error.Bad;
                if (c >= comps) return error.Bad;
                const q = try quantFrom(seg, if (wide) 2 else 1);
                if (c < 4) p.qcc[c] = q;
            },
            0xFF5E, 0xFF5F, 0xFF60, 0xFF61 => return error.Bad, // RGN, POC, PPM, PPT
            0xFF55, 0xFF57, 0xFF58, 0xFF63, 0xFF64 => {}, // TLM, PLM, PLT, CRG, COM
            else => if (m < 0xFF30 or m > 0xFF3F) return error.Bad, // reserved markers are skipped
        }
    }

    const Rect = struct { x0: i64, y0: i64, x1: i64, y1: i64 };

    fn ceilShift(a: i64, s: u6) i64 {
        return (a + (@as(i64, 1) << s) - 1) >> s;
    }

    /// The geometry one component of one tile needs: its rectangle and parameters.
    const TileComp = struct {
        rect: Rect,
        coding: *const Coding,
        quant: *const Quant,
        plane: []i32, // the component's image plane; the tile at (x0 - ox, y0 - oy)
        ox: i64,
        oy: i64,
        stride: usize,
        decoded: bool, // false for components past the third (alpha): parsed, not decoded

        fn res(self: *const TileComp, r: u32) Rect {
            const s: u6 = @intCast(self.coding.levels - r);
            return .{ .x0 = ceilShift(self.rect.x0, s), .y0 = ceilShift(self.rect.y0, s), .x1 = ceilShift(self.rect.x1, s), .y1 = ceilShift(self.rect.y1, s) };
        }

        /// Subband b (0 LL at r = 0; 1 HL, 2 LH, 3 HH above) of resolution r.
        fn band(self: *const TileComp, r: u32, b: u32) Rect {
            if (r == 0) return self.res(0);
            const level: u6 = @intCast(self.coding.levels - r);
            const xo: i64 = @as(i64, b & 1) << level;
            const yo: i64 = @as(i64, b >> 1) << level;
            return .{ .x0 = ceilShift(self.rect.x0 - xo, level + 1), .y0 = ceilShift(self.rect.y0 - yo, level + 1), .x1 = ceilShift(self.rect.x1 - xo, level + 1), .y1 = ceilShift(self.rect.y1 - yo, level + 1) };
        }

        /// Precinct grid of resolution r: its exponents, first precinct index, count per row and
        /// column.
        fn precinctGrid(self: *const TileComp, r: u32) struct { px: u6, py: u6, x0: i64, y0: i64, w: i64, h: i64 } {
            const rr = self.res(r);
            const px: u6 = @intCast(self.coding.precincts[r] & 15);
            const py: u6 = @intCast(self.coding.precincts[r] >> 4);
            const empty = rr.x0 == rr.x1 or rr.y0 == rr.y1;
            return .{
                .px = px,
                .py = py,
                .x0 = rr.x0 >> px,
                .y0 = rr.y0 >> py,
                .w = if (empty) 0 else ceilShift(rr.x1, px) - (rr.x0 >> px),
                .h = if (empty) 0 else ceilShift(rr.y1, py) - (rr.y0 >> py),
            };
        }
    };

    /// The state of one decode: the work buffer's parts.
    const Work = struct {
        line: []i32,
        flags: []u16,
        lens: []u32, // 3 bands x max blocks
        passes: []u8,
        zero: []u8, // zero bit planes + 1; 0 for a block not included
        tree_value: []u16, // 3 bands x 2 trees x max nodes
        tree_low: []u16,
        max_blocks: usize,
        max_nodes: usize,
    };

    // Flags of one code-block sample: its state, and which of its 8 neighbours are significant
    // (set when they become so, so that a context is one load and a table).
    const SIG: u16 = 1;
    const NEG: u16 = 2;
    const REFINED: u16 = 4;
    const VISITED: u16 = 8;
    const N: u16 = 16;
    const S: u16 = 32;
    const W: u16 = 64;
    const E: u16 = 128;
    const NW: u16 = 256;
    const NE: u16 = 512;
    const SW: u16 = 1024;
    const SE: u16 = 2048;
    const NEIGHBOURS: u16 = 0xFF0;

    /// The zero-coding context (T.800 Table D.1) of each neighbourhood (flags >> 4) for the
    /// orientations LL/LH (0), HL (1, vertical neighbours first) and HH (2).
    const zero_contexts: [3][256]u8 = blk: {
        @setEvalBranchQuota(20000);
        var t: [3][256]u8 = undefined;
        for (0..3) |o| for (0..256) |n| {
            const b = @as(u16, n) << 4;
            const one = struct {
                fn of(x: u16) u32 {
                    return if (x != 0) 1 else 0;
                }
            }.of;
            var h: u32 = one(b & W) + one(b & E);
            var v: u32 = one(b & N) + one(b & S);
            const d: u32 = one(b & NW) + one(b & NE) + one(b & SW) + one(b & SE);
            if (o == 2) {
                const hv: u32 = if (h + v > 2) 2 else h + v;
                const cx: u32 = switch (d) {
                    0 => hv,
                    1 => 3 + hv,
                    2 => if (hv == 0) 6 else 7,
                    else => 8,
                };
                t[o][n] = @intCast(cx);
                continue;
            }
            if (o == 1) {
                const swap = h;
                h = v;
                v = swap;
            }
            const cx: u32 = if (h == 2) 8 else if (h == 1) (if (v > 0) 7 else if (d > 0) 6 else 5) else if (v > 0) 2 + v else if (d > 2) 2 else d;
            t[o][n] = @intCast(cx);
        };
        break :blk t;
    };

    /// One code block: `passes` coding passes of `bytes` into `plane` (w x h at `at`, stride),
    /// as OpenJPEG decodes them (the value of bit plane p is 2^p with a half step below, halved
    /// at the end for the reversible transform).
    fn codeBlock(wk: *Work, bytes: []const u8, plane: []i32, at: usize, stride: usize, w: usize, h: usize, orient: u32, numbps: u32, passes: u32, style: u32, half_step: ?f32) Bad!void {
        const fs = w + 2;
        if (fs * (h + 2) > wk.flags.len) return error.Bad;
        const flags = wk.flags[0 .. fs * (h + 2)];
        @memset(flags, 0);
        if (w == 0 or h == 0) return;
        if ((h - 1) * stride + at + w > plane.len) return error.Bad;
        var mq = Mq.init(bytes);
        const zero = &zero_contexts[if (orient == 3) 2 else if (orient == 1) 1 else 0];
        var bp: u32 = numbps; // bit plane + 1 of the current pass
        var kind: u32 = 2; // 0 significance, 1 refinement, 2 cleanup
        var left = passes;
        while (left > 0 and bp >= 1) : (left -= 1) {
            const one: i32 = @as(i32, 1) << @intCast(bp);
            const half = one >> 1;
            switch (kind) {
                0 => {
                    var y0: usize = 0;
                    while (y0 < h) : (y0 += 4) for (0..w) |x| for (y0..@min(y0 + 4, h)) |y| {
                        const f = (y + 1) * fs + x + 1;
                        if (flags[f] & (SIG | NEIGHBOURS) == 0 or flags[f] & SIG != 0) continue;
                        if (mq.decode(zero[flags[f] >> 4 & 0xFF]) == 1) significant(&mq, flags, f, fs, plane, at + y * stride + x, one | half);
                        flags[f] |= VISITED;
                    };
                },
                1 => {
                    var y0: usize = 0;
                    while (y0 < h) : (y0 += 4) for (0..w) |x| for (y0..@min(y0 + 4, h)) |y| {
                        const f = (y + 1) * fs + x + 1;
                        if (flags[f] & (SIG | VISITED) != SIG) continue;
                        const cx: usize = if (flags[f] & REFINED != 0) ctx_refine + 2 else if (flags[f] & NEIGHBOURS != 0) ctx_refine + 1 else ctx_refine;
                        const v = mq.decode(cx);
                        const p = &plane[at + y * stride + x];
                        p.* = if ((v == 1) != (p.* < 0)) p.* +% half else p.* -% half;
                        flags[f] |= REFINED;
                    };
                },
                else => {
                    var y0: usize = 0;
                    while (y0 < h) : (y0 += 4) for (0..w) |x| {
                        var y = y0;
                        if (y0 + 4 <= h) {
                            var quiet = true;
                            for (y0..y0 + 4) |yy| {
                                const f = (yy + 1) * fs + x + 1;
                                if (flags[f] & (SIG | VISITED | NEIGHBOURS) != 0) quiet = false;
                            }
                            if (quiet) {
                                if (mq.decode(ctx_run) == 0) continue;
                                const r = mq.decode(ctx_uniform) << 1 | mq.decode(ctx_uniform);
                                y = y0 + r;
                                const f = (y + 1) * fs + x + 1;
                                significant(&mq, flags, f, fs, plane, at + y * stride + x, one | half);
                                y += 1;
                            }
                        }
                        while (y < @min(y0 + 4, h)) : (y += 1) {
                            const f = (y + 1) * fs + x + 1;
                            if (flags[f] & (SIG | VISITED) == 0 and mq.decode(zero[flags[f] >> 4 & 0xFF]) == 1)
                                significant(&mq, flags, f, fs, plane, at + y * stride + x, one | half);
                        }
                    };
                    for (flags) |*f| f.* &= ~VISITED;
                    if (style & 32 != 0) { // segmentation symbol
                        for (0..4) |_| _ = mq.decode(ctx_uniform);
                    }
                },
            }
            if (style & 2 != 0) mq.reset();
            kind += 1;
            if (kind == 3) {
                kind = 0;
                bp -= 1;
            }
        }
        // Reversible: the value halved (towards zero); irreversible: times half the step, as a
        // float (the plane holds its bits until the wavelet).
        for (0..h) |y| for (plane[at + y * stride ..][0..w]) |*v| {
            v.* = if (half_step) |q| @bitCast(@as(f32, @floatFromInt(v.*)) * q) else @divTrunc(v.*, 2);
        };
    }

    /// A sample becoming significant: its sign decoded (T.800 Table D.3), its value set.
    fn significant(mq: *Mq, flags: []u16, f: usize, fs: usize, plane: []i32, at: usize, value: i32) void {
        const c = struct {
            fn contribution(b: u16) i32 {
                if (b & SIG == 0) return 0;
                return if (b & NEG != 0) -1 else 1;
            }
        }.contribution;
        var h = std.math.clamp(c(flags[f - 1]) + c(flags[f + 1]), -1, 1);
        var v = std.math.clamp(c(flags[f - fs]) + c(flags[f + fs]), -1, 1);
        var flip: u32 = 0;
        if (h < 0 or (h == 0 and v < 0)) {
            h = -h;
            v = -v;
            flip = 1;
        }
        const cx: usize = if (h == 0) (if (v == 0) ctx_sign else ctx_sign + 1) else @intCast(ctx_sign + 3 + v);
        const negative = mq.decode(cx) ^ flip;
        plane[at] = if (negative == 1) -value else value;
        flags[f] |= SIG | (if (negative == 1) NEG else 0);
        flags[f - fs - 1] |= SE;
        flags[f - fs] |= S;
        flags[f - fs + 1] |= SW;
        flags[f - 1] |= E;
        flags[f + 1] |= W;
        flags[f + fs - 1] |= NE;
        flags[f + fs] |= N;
        flags[f + fs + 1] |= NW;
    }

    /// One packet: the header of precinct `p` of resolution `r` of component `tc`, then its code
    /// blocks' bytes, from `data[pos.*..end]`.
    fn packet(wk: *Work, tc: *const TileComp, r: u32, p: i64, data: []const u8, pos: *usize, end: usize, scod: u32) Bad!void {
        if (scod & 2 != 0 and pos.* + 6 <= end and data[pos.*] == 0xFF and data[pos.* + 1] == 0x91) pos.* += 6; // SOP
        const g = tc.precinctGrid(r);
        const pi = @mod(p, g.w);
        const pj = @divTrunc(p, g.w);
        const bands: u32 = if (r == 0) 1 else 3;
        const shift: u6 = if (r == 0) 0 else 1;
        const xcb: u6 = @intCast(@min(tc.coding.xcb, @as(u32, g.px) - shift));
        const ycb: u6 = @intCast(@min(tc.coding.ycb, @as(u32, g.py) - shift));
        var rects: [3]Rect = undefined; // the code-block grid of each band in the precinct
        var in = Bits{ .data = data, .pos = pos.*, .end = end };
        const present = try in.bit();
        for (0..bands) |bi| {
            const b: u32 = if (r == 0) 0 else @intCast(bi + 1);
            const br = tc.band(r, b);
            const sx: u6 = g.px - shift;
            const sy: u6 = g.py - shift;
            const prc = Rect{
                .x0 = @max(br.x0, (g.x0 + pi) << sx),
                .y0 = @max(br.y0, (g.y0 + pj) << sy),
                .x1 = @min(br.x1, (g.x0 + pi + 1) << sx),
                .y1 = @min(br.y1, (g.y0 + pj + 1) << sy),
            };
            rects[bi] = if (prc.x0 >= prc.x1 or prc.y0 >= prc.y1) .{ .x0 = 0, .y0 = 0, .x1 = 0, .y1 = 0 } else .{
                .x0 = prc.x0 >> xcb,
                .y0 = prc.y0 >> ycb,
                .x1 = ceilShift(prc.x1, xcb),
                .y1 = ceilShift(prc.y1, ycb),
            };
            const nw: usize = @intCast(rects[bi].x1 - rects[bi].x0);
            const nh: usize = @intCast(rects[bi].y1 - rects[bi].y0);
            if (nw * nh > wk.max_blocks) return error.Bad;
            @memset(wk.zero[bi * wk.max_blocks ..][0 .. nw * nh], 0);
            if (present == 0 or nw * nh == 0) continue;
            const nodes = wk.max_nodes;
            const t = (bi * 2) * nodes;
            var inclusion = try TagTree.init(wk.tree_value[t..][0..nodes], wk.tree_low[t..][0..nodes], @intCast(nw), @intCast(nh));
            var zeros = try TagTree.init(wk.tree_value[t + nodes ..][0..nodes], wk.tree_low[t + nodes ..][0..nodes], @intCast(nw), @intCast(nh));
            for (0..nh) |j| for (0..nw) |i| {
                const k = bi * wk.max_blocks + j * nw + i;
                if (!try inclusion.decode(&in, @intCast(i), @intCast(j), 1)) continue;
                var z: u32 = 0;
                while (!try zeros.decode(&in, @intCast(i), @intCast(j), z + 1)) {
                    z += 1;
                    if (z > 64) return error.Bad;
                }
                var n: u32 = 1; // coding passes
                if (try in.bit() == 1) {
                    n = 2;
                    if (try in.bit() == 1) {
                        n = 3 + try in.bits(2);
                        if (n == 6) {
                            n = 6 + try in.bits(5);
                            if (n == 37) n = 37 + try in.bits(7);
                        }
                    }
                }
                var lblock: u32 = 3;
                while (try in.bit() == 1) {
                    lblock += 1;
                    if (lblock > 32) return error.Bad;
                }
                const bits = lblock + std.math.log2_int(u32, n);
                if (bits > 32) return error.Bad;
                wk.lens[k] = try in.bits(bits);
                wk.passes[k] = @intCast(n);
                wk.zero[k] = @intCast(z + 1);
            };
        }
        try in.alignByte();
        pos.* = in.pos;
        if (scod & 4 != 0 and pos.* + 2 <= end and data[pos.*] == 0xFF and data[pos.* + 1] == 0x92) pos.* += 2; // EPH
        if (present == 0) return;
        for (0..bands) |bi| {
            const b: u32 = if (r == 0) 0 else @intCast(bi + 1);
            const br = tc.band(r, b);
            const nw: usize = @intCast(rects[bi].x1 - rects[bi].x0);
            const nh: usize = @intCast(rects[bi].y1 - rects[bi].y0);
            // Where the band lies in the plane: HL right of, LH below the lower resolution.
            var ox = br.x0;
            var oy = br.y0;
            if (r > 0) {
                const lower = tc.res(r - 1);
                if (b & 1 != 0) ox -= lower.x1 - lower.x0;
                if (b & 2 != 0) oy -= lower.y1 - lower.y0;
            }
            const index: u32 = if (r == 0) 0 else 3 * (r - 1) + b;
            if (index >= tc.quant.count) return error.Bad;
            const mb1: u32 = tc.quant.guard + tc.quant.expn(index); // Mb + 1 (T.800 E-2)
            for (0..nh) |j| for (0..nw) |i| {
                const k = bi * wk.max_blocks + j * nw + i;
                if (wk.zero[k] == 0) continue;
                const len = wk.lens[k];
                if (len > end - pos.*) return error.Bad;
                const bytes = data[pos.*..][0..len];
                pos.* += len;
                if (!tc.decoded) continue;
                if (mb1 < wk.zero[k]) return error.Bad;
                const numbps = mb1 - wk.zero[k];
                if (numbps >= 31) return error.Bad;
                const cx0 = @max((rects[bi].x0 + @as(i64, @intCast(i))) << xcb, br.x0);
                const cy0 = @max((rects[bi].y0 + @as(i64, @intCast(j))) << ycb, br.y0);
                const cx1 = @min((rects[bi].x0 + @as(i64, @intCast(i)) + 1) << xcb, br.x1);
                const cy1 = @min((rects[bi].y0 + @as(i64, @intCast(j)) + 1) << ycb, br.y1);
                // The precinct's bounds clip the block too.
                const px = cx0 - ox + tc.rect.x0 - tc.ox;
                const py = cy0 - oy + tc.rect.y0 - tc.oy;
                if (px < 0 or py < 0 or cx1 <= cx0 or cy1 <= cy0) return error.Bad;
                const at = @as(usize, @intCast(py)) * tc.stride + @as(usize, @intCast(px));
                const half_step: ?f32 = if (tc.coding.reversible) null else tc.quant.halfStep(index);
                try codeBlock(wk, bytes, tc.plane, at, tc.stride, @intCast(cx1 - cx0), @intCast(cy1 - cy0), b, numbps, wk.passes[k], tc.coding.style, half_step);
            };
        }
    }

    /// The inverse reversible 5/3 wavelet of one line of n samples starting at an even (cas 0)
    /// or odd (cas 1) coordinate, interleaved in `x` (T.800 F.3.8, symmetric extension).
    fn lift53(x: []i32, cas: u1) void {
        const n = x.len;
        if (n == 1) {
            if (cas == 1) x[0] = @divTrunc(x[0], 2);
            return;
        }
        const refl = struct {
            fn at(v: []const i32, i: isize) i32 {
                const m: isize = @intCast(v.len);
                const k = if (i < 0) -i else if (i >= m) 2 * (m - 1) - i else i;
                return v[@intCast(k)];
            }
        }.at;
        var p: isize = cas; // even coordinates: the low-pass samples
        while (p < n) : (p += 2) x[@intCast(p)] -%= (refl(x, p - 1) +% refl(x, p + 1) +% 2) >> 2;
        p = 1 - @as(isize, cas);
        while (p < n) : (p += 2) x[@intCast(p)] +%= (refl(x, p - 1) +% refl(x, p + 1)) >> 1;
    }

    fn lift(line: []i32, cas: u1, reversible: bool) void {
        if (reversible) return lift53(line, cas);
        const floats: [*]f32 = @ptrCast(line.ptr);
        lift97(floats[0..line.len], cas);
    }

    /// The inverse irreversible 9/7 wavelet of one line, as OpenJPEG computes it in f32 (its
    /// decoder's scaling constants K and 2/K'; each lifting step X[k] += (X[k-1] + X[k+1]) * c,
    /// a missing neighbour the other one, no fused multiply-add); one sample is left as it is.
    fn lift97(x: []f32, cas: u1) void {
        const n = x.len;
        if (n == 1) return;
        const low: usize = cas; // the low-pass samples: even coordinates
        const high: usize = 1 - @as(usize, cas);
        var k = low;
        while (k < n) : (k += 2) x[k] *= 1.230174105;
        k = high;
        while (k < n) : (k += 2) x[k] *= 1.625732422;
        const steps = [4]struct { first: usize, c: f32 }{
            .{ .first = low, .c = -0.443506852 },
            .{ .first = high, .c = -0.882911075 },
            .{ .first = low, .c = 0.052980118 },
            .{ .first = high, .c = 1.586134342 },
        };
        for (steps) |step| {
            k = step.first;
            while (k < n) : (k += 2) {
                if (k == 0) {
                    x[k] = x[k] + (x[1] + x[1]) * step.c;
                } else if (k + 1 >= n) {
                    x[k] = x[k] + x[k - 1] * (step.c + step.c);
                } else {
                    x[k] = x[k] + (x[k - 1] + x[k + 1]) * step.c;
                }
            }
        }
    }

    fn inverseWavelet(wk: *Work, tc: *const TileComp) void {
        const base: usize = @intCast((tc.rect.y0 - tc.oy) * @as(i64, @intCast(tc.stride)) + (tc.rect.x0 - tc.ox));
        for (1..tc.coding.levels + 1) |r| {
            const rr = tc.res(@intCast(r));
            const lower = tc.res(@intCast(r - 1));
            const w: usize = @intCast(rr.x1 - rr.x0);
            const h: usize = @intCast(rr.y1 - rr.y0);
            const sw: usize = @intCast(lower.x1 - lower.x0);
            const sh: usize = @intCast(lower.y1 - lower.y0);
            if (w == 0 or h == 0) continue;
            const line = wk.line[0..@max(w, h)];
            const cx: u1 = @intCast(rr.x0 & 1);
            const cy: u1 = @intCast(rr.y0 & 1);
            for (0..h) |y| {
                const row = tc.plane[base + y * tc.stride ..][0..w];
                for (0..w) |q| line[q] = if ((q + cx) & 1 == 0) row[q >> 1] else row[sw + (q >> 1)];
                lift(line[0..w], cx, tc.coding.reversible);
                @memcpy(row, line[0..w]);
            }
            for (0..w) |x| {
                for (0..h) |q| line[q] = tc.plane[base + (if ((q + cy) & 1 == 0) q >> 1 else sh + (q >> 1)) * tc.stride + x];
                lift(line[0..h], cy, tc.coding.reversible);
                for (0..h) |q| tc.plane[base + q * tc.stride + x] = line[q];
            }
        }
    }

    fn decode(
        comptime height: usize,
        comptime width: usize,
        comptime format: ZantImageFormat,
        input: []const u8,
        out: []u8,
        work: []u8,
    ) Bad!void {
        // JP2 boxes around the codestream, or a bare codestream.
        var cs = input;
        if (input.len >= 12 and std.mem.eql(u8, input[0..12], "\x00\x00\x00\x0cjP  \r\n\x87\n")) {
            cs = try codestream(input);
        }
        if (cs.len < 4 or try be16(cs, 0) != 0xFF4F or try be16(cs, 2) != 0xFF51) return error.Bad;
        // SIZ
        const lsiz = try be16(cs, 4);
        if (lsiz < 41 or 4 + @as(usize, lsiz) > cs.len) return error.Bad;
        const siz = cs[6 .. 4 + lsiz];
        const xsiz: i64 = try be32(siz, 2);
        const ysiz: i64 = try be32(siz, 6);
        const xo: i64 = try be32(siz, 10);
        const yo: i64 = try be32(siz, 14);
        const xt: i64 = try be32(siz, 18);
        const yt: i64 = try be32(siz, 22);
        const xto: i64 = try be32(siz, 26);
        const yto: i64 = try be32(siz, 30);
        const comps = try be16(siz, 34);
        if (xsiz - xo != width or ysiz - yo != height) return error.Bad;
        if (xt == 0 or yt == 0 or xto > xo or yto > yo or xto + xt <= xo or yto + yt <= yo) return error.Bad;
        if (comps == 0 or comps == 2 or comps > 4 or siz.len != 36 + 3 * @as(usize, comps)) return error.Bad;
        for (0..comps) |c| {
            if (siz[36 + 3 * c] != 7 or siz[37 + 3 * c] != 1 or siz[38 + 3 * c] != 1) return error.Bad; // 8-bit unsigned, not subsampled
        }
        const tiles_x: i64 = @divTrunc(xsiz - xto + xt - 1, xt);
        const tiles_y: i64 = @divTrunc(ysiz - yto + yt - 1, yt);
        if (tiles_x > width or tiles_y > height) return error.Bad;

        // The work buffer (zant_jp2_work_bytes), from its first 4-byte boundary: the planes, the
        // line, the block lengths, the tag trees, the flags (i32, u32, u16), then the blocks'
        // pass counts and zero bit planes (bytes).
        const max_blocks = maxBlocks(height, width);
        const max_nodes = maxNodes(height, width);
        const nflags = flagBytes(height, width);
        const skip = (4 - @intFromPtr(work.ptr) % 4) % 4;
        const base: [*]align(4) u8 = @alignCast(work[skip..].ptr);
        const planes = @as([*]i32, @ptrCast(base))[0 .. 3 * height * width];
        var at_byte: usize = 4 * 3 * height * width;
        const line = @as([*]i32, @ptrCast(@alignCast(base + at_byte)))[0..@as(usize, @max(height, width))];
        at_byte += 4 * @as(usize, @max(height, width));
        const lens = @as([*]u32, @ptrCast(@alignCast(base + at_byte)))[0 .. 3 * max_blocks];
        at_byte += 4 * 3 * max_blocks;
        const tree_value = @as([*]u16, @ptrCast(@alignCast(base + at_byte)))[0 .. 6 * max_nodes];
        at_byte += 2 * 6 * max_nodes;
        const tree_low = @as([*]u16, @ptrCast(@alignCast(base + at_byte)))[0 .. 6 * max_nodes];
        at_byte += 2 * 6 * max_nodes;
        const flags = @as([*]u16, @ptrCast(@alignCast(base + at_byte)))[0..nflags];
        at_byte += 2 * nflags;
        const bytes = work[skip + at_byte ..];
        var wk = Work{
            .line = line,
            .lens = lens,
            .tree_value = tree_value,
            .tree_low = tree_low,
            .flags = flags,
            .passes = bytes[0 .. 3 * max_blocks],
            .zero = bytes[3 * max_blocks ..][0 .. 3 * max_blocks],
            .max_blocks = max_blocks,
            .max_nodes = max_nodes,
        };

        // Main header.
        var main = Params{};
        var pos: usize = 4 + lsiz;
        while (true) {
            const m = try be16(cs, pos);
            if (m == 0xFF90) break;
            const l = try be16(cs, pos + 2);
            if (l < 2 or pos + 2 + l > cs.len) return error.Bad;
            try marker(&main, m, cs[pos + 4 .. pos + 2 + l], comps);
            pos += 2 + l;
        }
        if (main.cod == null or main.qcd == null) return error.Bad;

        // Tiles, one tile-part each, in order.
        const tiles: usize = @intCast(tiles_x * tiles_y);
        for (0..tiles) |tile| {
            if (try be16(cs, pos) != 0xFF90 or try be16(cs, pos + 2) != 10) return error.Bad;
            const isot = try be16(cs, pos + 4);
            const psot = try be32(cs, pos + 6);
            if (isot != tile or pos + 12 > cs.len or cs[pos + 10] != 0 or cs[pos + 11] > 1) return error.Bad;
            const end: usize = if (psot == 0) (if (cs.len >= pos + 14) cs.len - 2 else return error.Bad) else pos + psot;
            if (psot != 0 and (psot < 14 or end > cs.len)) return error.Bad;
            var p = main;
            p.cod = null;
            p.coc = @splat(null);
            p.qcd = null;
            p.qcc = @splat(null);
            var at = pos + 12;
            while (true) {
                const m = try be16(cs, at);
                if (m == 0xFF93) break;
                const l = try be16(cs, at + 2);
                if (l < 2 or at + 2 + l > end) return error.Bad;
                try marker(&p, m, cs[at + 4 .. at + 2 + l], comps);
                at += 2 + l;
            }
            at += 2;
            if (at > end) return error.Bad;
            if (p.cod == null) {
                p.scod = main.scod;
                p.progression = main.progression;
                p.layers = main.layers;
                p.mct = main.mct;
            }
            // The tile's components, parameters resolved: tile COC, tile COD, main COC, main COD.
            const tx = @as(i64, @intCast(tile)) - @divTrunc(@as(i64, @intCast(tile)), tiles_x) * tiles_x;
            const ty = @divTrunc(@as(i64, @intCast(tile)), tiles_x);
            const rect = Rect{ .x0 = @max(xto + tx * xt, xo), .y0 = @max(yto + ty * yt, yo), .x1 = @min(xto + (tx + 1) * xt, xsiz), .y1 = @min(yto + (ty + 1) * yt, ysiz) };
            var tcs: [4]TileComp = undefined;
            var max_levels: u32 = 0;
            for (0..comps) |c| {
                const coding: *const Coding = if (p.coc[c] != null) &p.coc[c].? else if (p.cod != null) &p.cod.? else if (main.coc[c] != null) &main.coc[c].? else &main.cod.?;
                const quant: *const Quant = if (p.qcc[c] != null) &p.qcc[c].? else if (p.qcd != null) &p.qcd.? else if (main.qcc[c] != null) &main.qcc[c].? else &main.qcd.?;
                const plane = if (c < 3) planes[c * height * width ..][0 .. height * width] else planes[0..0];
                tcs[c] = .{ .rect = rect, .coding = coding, .quant = quant, .plane = plane, .ox = xo, .oy = yo, .stride = width, .decoded = c < 3 };
                max_levels = @max(max_levels, coding.levels);
                if (c < 3) for (0..@intCast(rect.y1 - rect.y0)) |y| {
                    const row = @as(usize, @intCast(rect.y0 - yo)) + y;
                    @memset(plane[row * width + @as(usize, @intCast(rect.x0 - xo)) ..][0..@intCast(rect.x1 - rect.x0)], 0);
                };
            }
            try packets(&wk, tcs[0..comps], max_levels, p.progression, p.scod, rect, cs, &at, end);
            for (0..@min(comps, 3)) |c| inverseWavelet(&wk, &tcs[c]);
            // Colour transform, DC level shift, clamp.
            if (p.mct == 1 and comps < 3) return error.Bad;
            const reversible = tcs[0].coding.reversible;
            if (p.mct == 1 and (tcs[1].coding.reversible != reversible or tcs[2].coding.reversible != reversible)) return error.Bad;
            for (0..@intCast(rect.y1 - rect.y0)) |y| for (0..@intCast(rect.x1 - rect.x0)) |x| {
                const k = (@as(usize, @intCast(rect.y0 - yo)) + y) * width + @as(usize, @intCast(rect.x0 - xo)) + x;
                if (p.mct == 1 and !reversible) { // ICT, in f32 as OpenJPEG
                    const y0: f32 = @bitCast(planes[k]);
                    const u: f32 = @bitCast(planes[height * width + k]);
                    const v: f32 = @bitCast(planes[2 * height * width + k]);
                    planes[k] = @bitCast(y0 + v * 1.402);
                    planes[height * width + k] = @bitCast(y0 - u * 0.34413 - v * 0.71414);
                    planes[2 * height * width + k] = @bitCast(y0 + u * 1.772);
                } else if (p.mct == 1) {
                    const y0 = planes[k];
                    const u = planes[height * width + k];
                    const v = planes[2 * height * width + k];
                    const g = y0 -% ((u +% v) >> 2);
                    planes[k] = v +% g;
                    planes[height * width + k] = g;
                    planes[2 * height * width + k] = u +% g;
                }
                for (0..@min(comps, 3)) |c| {
                    const s = &planes[c * height * width + k];
                    s.* = if (tcs[c].coding.reversible) std.math.clamp(s.* +% 128, 0, 255) else shifted(@bitCast(s.*));
                }
            };
            pos = end;
        }
        if (try be16(cs, pos) != 0xFFD9) return error.Bad; // EOC: a stream cut short is refused
        // Every pixel: RGB of three components, or the gray one repeated.
        const channels: usize = if (format == .gray) 1 else 3;
        for (0..height * width) |k| {
            const c: [3]u32 = if (comps >= 3)
                .{ @intCast(planes[k]), @intCast(planes[height * width + k]), @intCast(planes[2 * height * width + k]) }
            else
                .{ @intCast(planes[k]), @intCast(planes[k]), @intCast(planes[k]) };
            const gray: ?u8 = if (comps >= 3) null else @intCast(planes[k]);
            zant_image_pixel(format, out[k * channels ..][0..channels], c, gray);
        }
    }

    /// An irreversible sample: rounded to the nearest integer, ties to even (OpenJPEG's lrintf),
    /// plus 128, clamped to 0..255.
    fn shifted(v: f32) i32 {
        if (!(v > -1.0e9 and v < 1.0e9)) return if (v > 0) 255 else 0; // and NaN
        const r = @floor(v);
        const rest = v - r;
        var i: i64 = @intFromFloat(r);
        if (rest > 0.5 or (rest == 0.5 and @mod(i, 2) != 0)) i += 1;
        return @intCast(std.math.clamp(i + 128, 0, 255));
    }

    /// The packets of one tile in its progression order (one layer: LRCP and RLCP visit
    /// resolution, component, precinct; RPCL, PCRL and CPRL go by precinct position).
    fn packets(wk: *Work, tcs: []const TileComp, max_levels: u32, order: u32, scod: u32, rect: Rect, data: []const u8, pos: *usize, end: usize) Bad!void {
        if (order <= 1) {
            for (0..max_levels + 1) |r| for (tcs) |*tc| {
                if (r > tc.coding.levels) continue;
                const g = tc.precinctGrid(@intCast(r));
                var p: i64 = 0;
                while (p < g.w * g.h) : (p += 1) try packet(wk, tc, @intCast(r), p, data, pos, end, scod);
            };
            return;
        }
        // Position orders: the smallest precinct step over components and resolutions.
        var dx: i64 = 1 << 62;
        var dy: i64 = 1 << 62;
        for (tcs) |*tc| for (0..tc.coding.levels + 1) |r| {
            const g = tc.precinctGrid(@intCast(r));
            const level: u6 = @intCast(tc.coding.levels - r);
            dx = @min(dx, @as(i64, 1) << (g.px + level));
            dy = @min(dy, @as(i64, 1) << (g.py + level));
        };
        const Visit = struct {
            fn at(w: *Work, tc: *const TileComp, r: u32, x: i64, y: i64, rc: Rect, d: []const u8, ps: *usize, e: usize, sc: u32) Bad!void {
                if (r > tc.coding.levels) return;
                const g = tc.precinctGrid(r);
                if (g.w == 0 or g.h == 0) return;
                const level: u6 = @intCast(tc.coding.levels - r);
                const rr = tc.res(r);
                const xs: u6 = g.px + level;
                const ys: u6 = g.py + level;
                if (!(@mod(y, @as(i64, 1) << ys) == 0 or (y == rc.y0 and @mod(rr.y0 << level, @as(i64, 1) << ys) != 0))) return;
                if (!(@mod(x, @as(i64, 1) << xs) == 0 or (x == rc.x0 and @mod(rr.x0 << level, @as(i64, 1) << xs) != 0))) return;
                const pi = (ceilShift(x, level) >> g.px) - g.x0;
                const pj = (ceilShift(y, level) >> g.py) - g.y0;
                if (pi < 0 or pj < 0 or pi >= g.w or pj >= g.h) return error.Bad;
                try packet(w, tc, r, pi + pj * g.w, d, ps, e, sc);
            }
        }.at;
        switch (order) {
            2 => for (0..max_levels + 1) |r| { // RPCL
                var y = rect.y0;
                while (y < rect.y1) : (y += dy - @mod(y, dy)) {
                    var x = rect.x0;
                    while (x < rect.x1) : (x += dx - @mod(x, dx)) for (tcs) |*tc| try Visit(wk, tc, @intCast(r), x, y, rect, data, pos, end, scod);
                }
            },
            3 => { // PCRL
                var y = rect.y0;
                while (y < rect.y1) : (y += dy - @mod(y, dy)) {
                    var x = rect.x0;
                    while (x < rect.x1) : (x += dx - @mod(x, dx)) for (tcs) |*tc| for (0..max_levels + 1) |r| try Visit(wk, tc, @intCast(r), x, y, rect, data, pos, end, scod);
                }
            },
            else => for (tcs) |*tc| { // CPRL
                var y = rect.y0;
                while (y < rect.y1) : (y += dy - @mod(y, dy)) {
                    var x = rect.x0;
                    while (x < rect.x1) : (x += dx - @mod(x, dx)) for (0..max_levels + 1) |r| try Visit(wk, tc, @intCast(r), x, y, rect, data, pos, end, scod);
                }
            },
        }
    }

    /// The codestream of a JP2 file: the contents of its first jp2c box; a palette (pclr) or an
    /// sYCC colour space (colr) before it is refused.
    fn codestream(input: []const u8) Bad![]const u8 {
        var at: usize = 0;
        var depth_end: usize = input.len; // the end of the jp2h super box while inside it
        while (at + 8 <= input.len) {
            var len: u64 = try be32(input, at);
            const kind = input[at + 4 .. at + 8];
            var header: usize = 8;
            if (len == 1) {
                if (at + 16 > input.len) return error.Bad;
                len = @as(u64, try be32(input, at + 8)) << 32 | try be32(input, at + 12);
                header = 16;
            } else if (len == 0) len = input.len - at;
            if (len < header or len > input.len - at) return error.Bad;
            const body = input[at + header .. at + @as(usize, @intCast(len))];
            if (std.mem.eql(u8, kind, "jp2c")) return body;
            if (std.mem.eql(u8, kind, "pclr")) return error.Bad;
            if (std.mem.eql(u8, kind, "colr") and body.len >= 7 and body[0] == 1 and try be32(body, 3) == 18) return error.Bad;
            if (std.mem.eql(u8, kind, "jp2h")) {
                depth_end = at + @as(usize, @intCast(len));
                at += header; // its boxes
            } else at += @intCast(len);
            if (at > depth_end) return error.Bad;
            if (at == depth_end) depth_end = input.len;
        }
        return error.Bad;
    }
};

/// Decode the `size` bytes at `data` into `out` (height x width x 3, or x 1 for .gray); false,
/// with `out` untouched, unless they are a JPEG 2000 image of that size that ZantJp2 decodes.
/// `work` (`work_size` bytes) holds the planes, the code-block state and the tag trees.
fn zant_jp2_decode(
    comptime height: usize,
    comptime width: usize,
    comptime format: ZantImageFormat,
    comptime size: usize,
    comptime work_size: usize,
    data: *const u8,
    out: *u8,
    work: *u8,
) bool {
    return zant_image_decode(ZantJp2, zant_jp2_work_bytes(height, width), height, width, format, size, work_size, data, out, work);
}
