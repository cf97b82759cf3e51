/// Baseline JPEG (sequential DCT, Huffman, 8-bit samples) decoded for an image of `height` x
/// `width` known at compile time, with no heap and bounded work (image.decode_jpeg).
///
/// Memory: the encoded bytes `data[0..size]` are only read; `work[0..zant_jpeg_work_bytes(height,
/// width)]` holds the component planes (3 planes of the image rounded up to 16 x 16, enough for
/// sampling factors of 1 and 2) and the 4 + 4 Huffman tables as bytes (273 each: defined, 16
/// counts, 256 symbols); the 4 quantization tables, the frame's 3 components and one 8 x 8 block
/// are locals of fixed size (about 1.8 KB of stack). Every index into those is checked against
/// its array, so no byte outside them is ever read or written, whatever the input.
///
/// Work: the marker loop advances at least two bytes per step, the entropy decoder reads at most
/// 16 bits per Huffman symbol and 15 per coefficient, 64 coefficients per block and the blocks a
/// scan of the compiled size holds; the number of scans is bounded by the bytes. Every loop is
/// bounded by `size` or by the image's size.
///
/// Result: true with `out` written (height x width x channels, row-major), or false, with `out`
/// untouched, when the bytes are not such a JPEG: another marker layout (progressive,
/// arithmetic, lossless, 12-bit), another width or height than compiled, sampling factors other
/// than 1 and 2, 2 or 4 components, a table used before it is defined, entropy-coded data that
/// ends (a marker or the end of the input) before the last block of a scan, or a component no
/// scan covered. The pixels follow libjpeg(-turbo) with its defaults, as PIL decodes them: the
/// "islow" integer IDCT, "fancy" (triangular) chroma upsampling, its fixed-point YCbCr -> RGB;
/// Grayscale is PIL's convert("L") of that RGB (ITU-R 601-2 luma, 16-bit fixed point).
/// The bytes of `work` the decoder of a height x width image uses: three planes of the image
/// rounded up to whole 16 x 16 MCUs (a plane of a component sampled below the maximum is smaller),
/// then the 8 Huffman tables.
fn zant_jpeg_work_bytes(comptime height: usize, comptime width: usize) usize {
    return zant_jpeg_plane_bytes(height, width) + 8 * ZantJpeg.table_bytes;
}

fn zant_jpeg_plane_bytes(comptime height: usize, comptime width: usize) usize {
    return 3 * ((height + 15) / 16 * 16) * ((width + 15) / 16 * 16);
}

const ZantJpeg = struct {
    const natural_order = [64]u8{
        0,  1,  8,  16, 9,  2,  3,  10, 17, 24, 32, 25, 18, 11, 4,  5,
        12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6,  7,  14, 21, 28,
        35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51,
        58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
    };

    const Bad = error{Bad};

    /// A Huffman table in `work`: byte 0 is 1 once defined, bytes 1..16 the number of codes of
    /// each length, then the symbols in code order (canonical codes: each length's first code is
    /// the previous length's last plus one, doubled).
    const table_bytes = 1 + 16 + 256;

    const Component = struct {
        id: u8 = 0,
        h: u8 = 1,
        v: u8 = 1,
        tq: u8 = 0,
        td: u8 = 0,
        ta: u8 = 0,
        predictor: i32 = 0,
        decoded: bool = false,
        base: usize = 0, // the plane's first byte in work
        stride: usize = 0, // bytes per plane row (whole MCUs)
        rows: usize = 0, // plane rows (whole MCUs)
        width: usize = 0, // downsampled width and height: samples that are image
        height: usize = 0,
        quant: [64]u16 = @splat(0), // latched at the start of its scan, natural order
    };

    /// The entropy-coded bits of a scan: 0xFF 0x00 is a data byte 0xFF; any other marker, or
    /// the end of the bytes, ends them and a read past it fails.
    const Bits = struct {
        data: []const u8,
        pos: usize,
        byte: u32 = 0,
        left: u4 = 0,

        fn bit(self: *Bits) Bad!u32 {
            if (self.left == 0) {
                if (self.pos >= self.data.len) return error.Bad;
                const b = self.data[self.pos];
                if (b == 0xFF) {
                    if (self.pos + 1 >= self.data.len or self.data[self.pos + 1] != 0) return error.Bad;
                    self.pos += 2;
                } else {
                    self.pos += 1;
                }
                self.byte = b;
                self.left = 8;
            }
            self.left -= 1;
            return (self.byte >> self.left) & 1;
        }

        fn receive(self: *Bits, s: u32) Bad!i32 {
            var v: i32 = 0;
            for (0..s) |_| v = v * 2 + @as(i32, @intCast(try self.bit()));
            return v;
        }

        /// A magnitude category's `s` bits as the signed value they code (JPEG's EXTEND).
        fn extended(self: *Bits, s: u32) Bad!i32 {
            if (s == 0) return 0;
            const v = try self.receive(s);
            const half = @as(i32, 1) << @intCast(s - 1);
            return if (v < half) v - 2 * half + 1 else v;
        }

        /// The next symbol of `table` (table_bytes of work): the code read bit by bit until it is
        /// below the end of its length's codes.
        fn decode(self: *Bits, codes: []const u8) Bad!u32 {
            var code: i32 = 0;
            var first: i32 = 0; // the first code of this length
            var index: i32 = 0; // the index of its symbol
            for (1..17) |length| {
                code = code * 2 + @as(i32, @intCast(try self.bit()));
                const n: i32 = codes[length];
                if (code - first < n) return codes[17 + @as(usize, @intCast(index + code - first))];
                index += n;
                first = (first + n) * 2;
            }
            return error.Bad;
        }
    };

    fn be16(data: []const u8, at: usize) u32 {
        return @as(u32, data[at]) << 8 | data[at + 1];
    }

    /// libjpeg's post-IDCT range limit: the low 10 bits as a signed value, +128, clamped.
    fn limit(x: i32) u8 {
        const wrapped: i32 = @as(i32, @as(i10, @truncate(x)));
        return @intCast(@min(@max(wrapped + 128, 0), 255));
    }

    /// Dequantized 8 x 8 block -> samples: libjpeg's jpeg_idct_islow (13-bit constants, 2 bits
    /// kept between the passes), in wrapping 32-bit arithmetic as on a 32-bit core.
    fn idct(coef: *const [64]i32, quant: *const [64]u16, out: []u8, stride: usize) void {
        const c_0_298631336: i32 = 2446;
        const c_0_390180644: i32 = 3196;
        const c_0_541196100: i32 = 4433;
        const c_0_765366865: i32 = 6270;
        const c_0_899976223: i32 = 7373;
        const c_1_175875602: i32 = 9633;
        const c_1_501321110: i32 = 12299;
        const c_1_847759065: i32 = 15137;
        const c_1_961570560: i32 = 16069;
        const c_2_053119869: i32 = 16819;
        const c_2_562915447: i32 = 20995;
        const c_3_072711026: i32 = 25172;
        var ws: [64]i32 = undefined;
        for (0..2) |pass| {
            for (0..8) |i| {
                // pass 0: column i of the coefficients; pass 1: row i of the workspace
                var x: [8]i32 = undefined;
                for (0..8) |k| {
                    x[k] = if (pass == 0) coef[8 * k + i] *% @as(i32, quant[8 * k + i]) else ws[8 * i + k];
                }
                const shift: u5 = if (pass == 0) 11 else 18; // CONST_BITS -/+ PASS1_BITS (+3)
                var z2 = x[2];
                var z3 = x[6];
                var z1 = (z2 +% z3) *% c_0_541196100;
                var tmp2 = z1 +% z3 *% -c_1_847759065;
                var tmp3 = z1 +% z2 *% c_0_765366865;
                z2 = x[0];
                z3 = x[4];
                var tmp0 = (z2 +% z3) *% 8192;
                var tmp1 = (z2 -% z3) *% 8192;
                const tmp10 = tmp0 +% tmp3;
                const tmp13 = tmp0 -% tmp3;
                const tmp11 = tmp1 +% tmp2;
                const tmp12 = tmp1 -% tmp2;
                tmp0 = x[7];
                tmp1 = x[5];
                tmp2 = x[3];
                tmp3 = x[1];
                z1 = tmp0 +% tmp3;
                z2 = tmp1 +% tmp2;
                z3 = tmp0 +% tmp2;
                var z4 = tmp1 +% tmp3;
                const z5 = (z3 +% z4) *% c_1_175875602;
                tmp0 = tmp0 *% c_0_298631336;
                tmp1 = tmp1 *% c_2_053119869;
                tmp2 = tmp2 *% c_3_072711026;
                tmp3 = tmp3 *% c_1_501321110;
                z1 = z1 *% -c_0_899976223;
                z2 = z2 *% -c_2_562915447;
                z3 = z3 *% -c_1_961570560;
                z4 = z4 *% -c_0_390180644;
                z3 +%= z5;
                z4 +%= z5;
                tmp0 +%= z1 +% z3;
                tmp1 +%= z2 +% z4;
                tmp2 +%= z2 +% z3;
                tmp3 +%= z1 +% z4;
                const r = [8]i32{
                    tmp10 +% tmp3, tmp11 +% tmp2, tmp12 +% tmp1, tmp13 +% tmp0,
                    tmp13 -% tmp0, tmp12 -% tmp1, tmp11 -% tmp2, tmp10 -% tmp3,
                };
                const round: i32 = @as(i32, 1) << (shift - 1);
                for (0..8) |k| {
                    const v = (r[k] +% round) >> shift;
                    if (pass == 0) {
                        ws[8 * k + i] = v;
                    } else {
                        out[i * stride + k] = limit(v);
                    }
                }
            }
        }
    }

    const State = struct {
        quant: [4][64]u16 = @splat(@splat(0)),
        quant_defined: [4]bool = @splat(false),
        tables: usize = 0, // where the Huffman tables start in work: DC 0..3, then AC 0..3
        components: [3]Component = @splat(.{}),
        count: usize = 0, // components (0 before the frame header)
        hmax: usize = 1,
        vmax: usize = 1,
        restart: usize = 0,
        adobe_rgb: bool = false,
    };

    fn frame(st: *State, seg: []const u8, height: usize, width: usize, capacity: usize) Bad!void {
        if (st.count != 0 or seg.len < 6) return error.Bad;
        if (seg[0] != 8 or be16(seg, 1) != height or be16(seg, 3) != width) return error.Bad;
        const n: usize = seg[5];
        if ((n != 1 and n != 3) or seg.len != 6 + 3 * n) return error.Bad;
        for (0..n) |c| {
            const p = seg[6 + 3 * c ..][0..3];
            const h = p[1] >> 4;
            const v = p[1] & 15;
            if (h < 1 or h > 2 or v < 1 or v > 2 or p[2] > 3) return error.Bad;
            for (0..c) |d| if (st.components[d].id == p[0]) return error.Bad;
            st.components[c] = .{ .id = p[0], .h = h, .v = v, .tq = p[2] };
            st.hmax = @max(st.hmax, h);
            st.vmax = @max(st.vmax, v);
        }
        if (n == 1) { // one component: its blocks are the MCUs, whatever factors it states
            st.components[0].h = 1;
            st.components[0].v = 1;
            st.hmax = 1;
            st.vmax = 1;
        }
        const mcux = (width + 8 * st.hmax - 1) / (8 * st.hmax);
        const mcuy = (height + 8 * st.vmax - 1) / (8 * st.vmax);
        var base: usize = 0;
        for (st.components[0..n]) |*comp| {
            comp.stride = mcux * comp.h * 8;
            comp.rows = mcuy * comp.v * 8;
            comp.width = (width * comp.h + st.hmax - 1) / st.hmax;
            comp.height = (height * comp.v + st.vmax - 1) / st.vmax;
            comp.base = base;
            base += comp.stride * comp.rows;
        }
        if (base > capacity) return error.Bad; // cannot happen with factors 1 and 2
        st.count = n;
    }

    fn quantization(st: *State, seg: []const u8) Bad!void {
        var at: usize = 0;
        while (at < seg.len) {
            const precision = seg[at] >> 4;
            const t = seg[at] & 15;
            const bytes: usize = if (precision == 0) 64 else 128;
            if (precision > 1 or t > 3 or at + 1 + bytes > seg.len) return error.Bad;
            for (0..64) |k| {
                const v: u16 = if (precision == 0) seg[at + 1 + k] else @intCast(be16(seg, at + 1 + 2 * k));
                st.quant[t][natural_order[k]] = v;
            }
            st.quant_defined[t] = true;
            at += 1 + bytes;
        }
    }

    fn table(st: *const State, work: []u8, class: usize, t: usize) []u8 {
        const at = st.tables + (4 * class + t) * table_bytes;
        return work[at .. at + table_bytes];
    }

    fn huffman(st: *State, seg: []const u8, work: []u8) Bad!void {
        var at: usize = 0;
        while (at < seg.len) {
            if (at + 17 > seg.len) return error.Bad;
            const class = seg[at] >> 4;
            const t = seg[at] & 15;
            if (class > 1 or t > 3) return error.Bad;
            var total: usize = 0;
            for (seg[at + 1 .. at + 17]) |n| total += n;
            if (total > 256 or at + 17 + total > seg.len) return error.Bad;
            var code: i32 = 0;
            for (1..17) |length| {
                code += seg[at + length];
                if (code > (@as(i32, 1) << @intCast(length))) return error.Bad; // not a prefix code
                code *= 2;
            }
            const bytes = table(st, work, class, t);
            bytes[0] = 1;
            @memcpy(bytes[1 .. 17 + total], seg[at + 1 .. at + 17 + total]);
            at += 17 + total;
        }
    }

    fn block(st: *State, bits: *Bits, comp: *Component, work: []u8, row: usize, column: usize) Bad!void {
        var coef: [64]i32 = @splat(0);
        const s = try bits.decode(table(st, work, 0, comp.td));
        if (s > 15) return error.Bad;
        comp.predictor +%= try bits.extended(s);
        coef[0] = @as(i16, @truncate(comp.predictor)); // a JCOEF
        var k: usize = 1;
        while (k < 64) : (k += 1) {
            const rs = try bits.decode(table(st, work, 1, comp.ta));
            const run = rs >> 4;
            const size = rs & 15;
            if (size == 0) {
                if (run != 15) break;
                k += 15;
                continue;
            }
            k += run;
            // Past the last coefficient libjpeg's natural-order table repeats position 63.
            coef[natural_order[@min(k, 63)]] = @as(i16, @truncate(try bits.extended(size)));
        }
        const at = comp.base + row * 8 * comp.stride + column * 8;
        idct(&coef, &comp.quant, work[at .. at + 7 * comp.stride + 8], comp.stride);
    }

    /// One scan: its header `seg`, then its entropy-coded data from `data[start..]`; returns where
    /// the data end (the next marker).
    fn scan(st: *State, seg: []const u8, data: []const u8, start: usize, work: []u8) Bad!usize {
        if (st.count == 0 or seg.len < 1) return error.Bad;
        const n: usize = seg[0];
        if (n < 1 or n > st.count or seg.len != 4 + 2 * n) return error.Bad;
        if (seg[1 + 2 * n] != 0 or seg[2 + 2 * n] != 63 or seg[3 + 2 * n] != 0) return error.Bad;
        var members: [3]usize = undefined;
        for (0..n) |j| {
            const id = seg[1 + 2 * j];
            const tables = seg[2 + 2 * j];
            var found: ?usize = null;
            for (st.components[0..st.count], 0..) |comp, c| {
                if (comp.id == id) found = c;
            }
            const c = found orelse return error.Bad;
            for (members[0..j]) |m| if (m == c) return error.Bad;
            const comp = &st.components[c];
            comp.td = tables >> 4;
            comp.ta = tables & 15;
            if (comp.td > 3 or comp.ta > 3) return error.Bad;
            if (table(st, work, 0, comp.td)[0] != 1 or table(st, work, 1, comp.ta)[0] != 1) return error.Bad;
            if (!st.quant_defined[comp.tq]) return error.Bad;
            comp.quant = st.quant[comp.tq];
            comp.predictor = 0;
            members[j] = c;
        }
        var bits = Bits{ .data = data, .pos = start };
        // A scan of several components is interleaved in MCUs; one of one component holds its
        // blocks that cover image samples, row by row.
        const single = n == 1;
        const first = &st.components[members[0]];
        const mcux = if (single) (first.width + 7) / 8 else first.stride / (8 * first.h);
        const mcuy = if (single) (first.height + 7) / 8 else first.rows / (8 * first.v);
        var restarts: usize = 0;
        for (0..mcuy) |my| {
            for (0..mcux) |mx| {
                const index = my * mcux + mx;
                if (st.restart != 0 and index != 0 and index % st.restart == 0) {
                    // byte-aligned RSTn marker; the predictors start again
                    if (bits.pos + 1 >= data.len or data[bits.pos] != 0xFF) return error.Bad;
                    if (data[bits.pos + 1] != 0xD0 + @as(u8, @intCast(restarts % 8))) return error.Bad;
                    bits = Bits{ .data = data, .pos = bits.pos + 2 };
                    restarts += 1;
                    for (members[0..n]) |c| st.components[c].predictor = 0;
                }
                for (members[0..n]) |c| {
                    const comp = &st.components[c];
                    const bh: usize = if (single) 1 else comp.h;
                    const bv: usize = if (single) 1 else comp.v;
                    for (0..bv) |y| {
                        for (0..bh) |x| try block(st, &bits, comp, work, my * bv + y, mx * bh + x);
                    }
                }
            }
        }
        for (members[0..n]) |c| st.components[c].decoded = true;
        return bits.pos;
    }

    /// One output row of a component, upsampled as libjpeg-turbo does with fancy upsampling:
    /// triangular (3/4, 1/4) for a factor 2 horizontally (when the component is more than 2
    /// samples wide) and vertically, replicating edges; else the nearest sample. The rows it
    /// reads and its kind are found once per output row (`outputRow`), the sample per pixel (`at`).
    const Row = struct {
        const Kind = enum { full, h2_box, h2, h1v2, h2v2_box, h2v2 };

        kind: Kind,
        near: []const u8, // the plane row nearest the output row
        far: []const u8, // the next nearest (vertical factor 2), else `near`
        last: usize, // the last sample of the component's width
        bias: i32, // h1v2: 1 for an even output row, 2 for an odd one

        fn at(self: *const Row, x: usize) i32 {
            const c = x / 2;
            const left = if (c > 0) c - 1 else 0;
            const right = @min(c + 1, self.last);
            switch (self.kind) {
                .full => return self.near[x],
                .h2_box, .h2v2_box => return self.near[c],
                .h2 => {
                    const near: i32 = @as(i32, self.near[c]) * 3;
                    if (x % 2 == 0) return (near + self.near[left] + 1) >> 2;
                    return (near + self.near[right] + 2) >> 2;
                },
                .h1v2 => return (@as(i32, self.near[x]) * 3 + self.far[x] + self.bias) >> 2,
                .h2v2 => {
                    const near = self.sum(c) * 3;
                    if (x % 2 == 0) return (near + self.sum(left) + 8) >> 4;
                    return (near + self.sum(right) + 7) >> 4;
                },
            }
        }

        fn sum(self: *const Row, col: usize) i32 {
            return @as(i32, self.near[col]) * 3 + self.far[col];
        }
    };

    fn outputRow(st: *const State, comp: *const Component, work: []const u8, y: usize) Row {
        const rh = st.hmax / comp.h;
        const rv = st.vmax / comp.v;
        const plane = work[comp.base .. comp.base + comp.stride * comp.rows];
        const fancy_h = rh == 2 and comp.width > 2;
        const r = if (rv == 2) y / 2 else y;
        const other = if (rv == 1) r else if (y % 2 == 0) (if (r > 0) r - 1 else 0) else @min(r + 1, comp.height - 1);
        const kind: Row.Kind = if (rv == 1)
            (if (rh == 1) .full else if (fancy_h) .h2 else .h2_box)
        else
            (if (rh == 1) .h1v2 else if (fancy_h) .h2v2 else .h2v2_box);
        return .{
            .kind = kind,
            .near = plane[r * comp.stride ..][0..comp.stride],
            .far = plane[other * comp.stride ..][0..comp.stride],
            .last = comp.width - 1,
            .bias = if (y % 2 == 0) 1 else 2,
        };
    }

    fn clamp(x: i32) i32 {
        return @min(@max(x, 0), 255);
    }

    fn decode(
        comptime height: usize,
        comptime width: usize,
        comptime format: ZantImageFormat,
        data: []const u8,
        out: []u8,
        work: []u8,
    ) Bad!void {
        if (data.len < 4 or data[0] != 0xFF or data[1] != 0xD8) return error.Bad;
        var st = State{ .tables = zant_jpeg_plane_bytes(height, width) };
        for (0..8) |k| work[st.tables + k * table_bytes] = 0; // no table defined yet
        var pos: usize = 2;
        while (true) {
            // a marker, after any fill bytes 0xFF; the end of the bytes ends the image
            if (pos >= data.len) break;
            if (data[pos] != 0xFF) return error.Bad;
            while (pos < data.len and data[pos] == 0xFF) pos += 1;
            if (pos >= data.len) return error.Bad;
            const marker = data[pos];
            pos += 1;
            if (marker == 0xD9) break; // EOI
            if (marker == 0x01 or (marker >= 0xD0 and marker <= 0xD7)) continue; // no segment
            if (pos + 2 > data.len) return error.Bad;
            const length = be16(data, pos);
            if (length < 2 or pos + length > data.len) return error.Bad;
            const seg = data[pos + 2 .. pos + length];
            pos += length;
            switch (marker) {
                0xC0, 0xC1 => try frame(&st, seg, height, width, st.tables),
                0xC4 => try huffman(&st, seg, work),
                0xDB => try quantization(&st, seg),
                0xDD => {
                    if (seg.len != 2) return error.Bad;
                    st.restart = be16(seg, 0);
                },
                0xDA => pos = try scan(&st, seg, data, pos, work),
                0xEE => { // Adobe APP14: transform 0 says the 3 components are RGB
                    if (seg.len >= 12 and seg[0] == 'A' and seg[1] == 'd' and seg[2] == 'o' and seg[3] == 'b' and seg[4] == 'e') {
                        st.adobe_rgb = seg[11] == 0;
                    }
                },
                0xC2, 0xC3, 0xC5...0xC7, 0xC9...0xCB, 0xCD...0xCF, 0xDC, 0xDE, 0xDF => return error.Bad,
                else => {}, // APPn, COM and others: skipped
            }
        }
        if (st.count == 0) return error.Bad;
        for (st.components[0..st.count]) |comp| if (!comp.decoded) return error.Bad;
        const channels: usize = if (format == .gray) 1 else 3;
        for (0..height) |y| {
            var rows: [3]Row = undefined;
            for (0..st.count) |c| rows[c] = outputRow(&st, &st.components[c], work, y);
            for (0..width) |x| {
                var rgb: [3]i32 = undefined;
                const luma = rows[0].at(x);
                if (st.count == 1) {
                    rgb = .{ luma, luma, luma };
                } else {
                    const a = rows[1].at(x);
                    const b = rows[2].at(x);
                    if (st.adobe_rgb) {
                        rgb = .{ luma, a, b };
                    } else { // libjpeg's ycc_rgb_convert: 16-bit fixed point
                        const cb = a - 128;
                        const cr = b - 128;
                        rgb = .{
                            clamp(luma + ((91881 * cr + 32768) >> 16)),
                            clamp(luma + ((-22554 * cb - 46802 * cr + 32768) >> 16)),
                            clamp(luma + ((116130 * cb + 32768) >> 16)),
                        };
                    }
                }
                const gray: ?u8 = if (st.count == 1) @as(u8, @intCast(luma)) else null;
                zant_image_pixel(format, out[(y * width + x) * channels ..][0..channels], rgb, gray);
            }
        }
    }
};

/// Decode the `size` bytes at `data` into `out` (height x width x 3, or x 1 for .gray), with the
/// `work_size` bytes at `work`; false, with `out` untouched, unless they are a baseline JPEG of
/// that size (see ZantJpeg).
fn zant_jpeg_decode(
    comptime height: usize,
    comptime width: usize,
    comptime format: ZantImageFormat,
    comptime size: usize,
    comptime work_size: usize,
    data: *const u8,
    out: *u8,
    work: *u8,
) bool {
    return zant_image_decode(ZantJpeg, zant_jpeg_work_bytes(height, width), height, width, format, size, work_size, data, out, work);
}
