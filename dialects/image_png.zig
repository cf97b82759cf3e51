/// PNG (8-bit samples, not interlaced) decoded for an image of `height` x `width` known at compile
/// time, with no heap and bounded work (image.decode_png).
///
/// Memory: the encoded bytes `data[0..size]` are only read; `work[0..zant_png_work_bytes(height,
/// width)]` receives the inflated rows (a filter byte and W·4 samples each at most), which are
/// also the LZ77 window: a back reference reads what was inflated before it; the Huffman tables
/// (about 1.3 KB) are locals. Every index is checked, so no byte outside the three buffers is
/// read or written, whatever the input.
///
/// Work: every chunk's CRC is one pass over its bytes; inflate emits at most the rows' bytes, a
/// symbol takes at most 15 bits plus 13 extra, a block's code lengths at most 316 symbols;
/// unfiltering and the final copy are one pass each.
///
/// Result: true with `out` written (height x width x 3, or x 1 for .gray, from gray, gray+alpha,
/// RGB, RGBA or palette images, alpha dropped), or false with `out` untouched: another width or
/// height than compiled, another bit depth than 8, interlacing, a bad signature or chunk CRC
/// (each chunk up to the first IDAT, and each IDAT read), a zlib stream that is malformed (zlib's
/// checks: incomplete codes too), fails its Adler-32 or gives other than the rows' bytes, a
/// palette index past the palette, an unknown filter type. Grayscale of a colour image is PIL's
/// convert("L") of its RGB, as onnx's reference computes it.
/// The inflated rows of a height x width PNG with up to 4 samples a pixel.
fn zant_png_work_bytes(comptime height: usize, comptime width: usize) usize {
    return height * (1 + 4 * width);
}

const ZantPng = struct {
    const Bad = error{Bad};

    fn be32(data: []const u8, at: usize) u32 {
        return @as(u32, data[at]) << 24 | @as(u32, data[at + 1]) << 16 | @as(u32, data[at + 2]) << 8 | data[at + 3];
    }

    fn crc32(bytes: []const u8) u32 {
        var crc: u32 = 0xFFFFFFFF;
        for (bytes) |b| {
            crc ^= b;
            for (0..8) |_| crc = if (crc & 1 != 0) (crc >> 1) ^ 0xEDB88320 else crc >> 1;
        }
        return ~crc;
    }

    /// The bytes of the consecutive IDAT chunks as one stream, read LSB-first bit by bit.
    const Stream = struct {
        data: []const u8,
        pos: usize, // the next byte of the current chunk's data
        left: usize, // bytes of it still to read
        bits: u32 = 0,
        count: u5 = 0,

        fn byte(self: *Stream) Bad!u32 {
            while (self.left == 0) { // the next chunk must be another IDAT (after this one's CRC)
                const at = self.pos + 4;
                if (at + 8 > self.data.len) return error.Bad;
                const length = be32(self.data, at);
                if (!std.mem.eql(u8, self.data[at + 4 .. at + 8], "IDAT")) return error.Bad;
                if (length > self.data.len - at - 12) return error.Bad;
                if (crc32(self.data[at + 4 .. at + 8 + length]) != be32(self.data, at + 8 + length)) return error.Bad;
                self.pos = at + 8;
                self.left = length;
            }
            const b = self.data[self.pos];
            self.pos += 1;
            self.left -= 1;
            return b;
        }

        fn need(self: *Stream, n: u5) Bad!u32 {
            while (self.count < n) {
                self.bits |= (try self.byte()) << self.count;
                self.count += 8;
            }
            const v = self.bits & ((@as(u32, 1) << n) - 1);
            self.bits >>= n;
            self.count -= n;
            return v;
        }
    };

    /// Canonical Huffman codes of up to `n` symbols.
    fn Huffman(comptime n: usize) type {
        return struct {
            count: [16]u16 = @splat(0), // codes of each length
            symbol: [n]u16 = @splat(0), // symbols in canonical order

            /// Canonical codes from code lengths; false, as zlib, for an over-subscribed set and
            /// for an incomplete one unless it is one code of length 1 (or none at all) and
            /// `complete` is not asked for (the code-length code must be complete).
            fn build(self: *@This(), lengths: []const u8, complete: bool) bool {
                self.count = @splat(0);
                for (lengths) |l| self.count[l] += 1;
                var left: i32 = 1;
                var longest: usize = 0;
                for (1..16) |len| {
                    left = left * 2 - @as(i32, self.count[len]);
                    if (left < 0) return false;
                    if (self.count[len] != 0) longest = len;
                }
                if (left > 0 and longest != 0 and (complete or longest != 1)) return false;
                var offsets: [16]u16 = undefined;
                offsets[1] = 0;
                for (1..15) |len| offsets[len + 1] = offsets[len] + self.count[len];
                for (lengths, 0..) |l, s| {
                    if (l != 0) {
                        self.symbol[offsets[l]] = @intCast(s);
                        offsets[l] += 1;
                    }
                }
                return true;
            }

            fn decode(self: *const @This(), in: *Stream) Bad!u32 {
                var code: i32 = 0;
                var first: i32 = 0;
                var index: i32 = 0;
                for (1..16) |len| {
                    code |= @intCast(try in.need(1));
                    const c: i32 = self.count[len];
                    if (code - first < c) return self.symbol[@intCast(index + code - first)];
                    index += c;
                    first = (first + c) * 2;
                    code *= 2;
                }
                return error.Bad;
            }
        };
    }
    const Literals = Huffman(288);
    const Distances = Huffman(32);

    const length_base = [29]u16{ 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258 };
    const length_extra = [29]u5{ 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0 };
    const distance_base = [30]u16{ 1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577 };
    const distance_extra = [30]u5{ 0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13 };
    const order = [19]u8{ 16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15 };

    /// One Huffman-coded block's symbols into out[at..]; returns the new end. More bytes than
    /// `out` holds fail.
    fn codes(in: *Stream, lit: *const Literals, dist: *const Distances, out: []u8, start: usize) Bad!usize {
        var at = start;
        while (true) {
            const s = try lit.decode(in);
            if (s < 256) {
                if (at >= out.len) return error.Bad;
                out[at] = @intCast(s);
                at += 1;
            } else if (s == 256) {
                return at;
            } else {
                const l = s - 257;
                if (l >= 29) return error.Bad;
                const length = length_base[l] + try in.need(length_extra[l]);
                const d = try dist.decode(in);
                if (d >= 30) return error.Bad;
                const distance = distance_base[d] + try in.need(distance_extra[d]);
                if (distance > at or length > out.len - at) return error.Bad;
                for (0..length) |_| {
                    out[at] = out[at - distance];
                    at += 1;
                }
            }
        }
    }

    /// The zlib stream of the IDAT chunks into `out`, which it must fill exactly, its Adler-32
    /// checked (as zlib checks it when the stream ends with the rows, as encoders end it).
    fn inflate(in: *Stream, out: []u8) Bad!void {
        const cmf = try in.need(8);
        const flg = try in.need(8);
        if (cmf & 15 != 8 or cmf >> 4 > 7 or (cmf * 256 + flg) % 31 != 0 or flg & 32 != 0) return error.Bad;
        var lit = Literals{};
        var dist = Distances{};
        var lengths: [320]u8 = undefined;
        var at: usize = 0;
        while (true) {
            const final = try in.need(1);
            const kind = try in.need(2);
            switch (kind) {
                0 => { // stored: from the next byte boundary, LEN and its complement
                    in.bits = 0;
                    in.count = 0;
                    const len = try in.need(16);
                    const nlen = try in.need(16);
                    if (len != (~nlen & 0xFFFF) or len > out.len - at) return error.Bad;
                    for (0..len) |_| {
                        out[at] = @intCast(try in.byte());
                        at += 1;
                    }
                },
                1 => { // fixed codes
                    for (0..288) |s| lengths[s] = if (s < 144) 8 else if (s < 256) 9 else if (s < 280) 7 else 8;
                    for (288..320) |s| lengths[s] = 5;
                    _ = lit.build(lengths[0..288], false);
                    _ = dist.build(lengths[288..320], false);
                    at = try codes(in, &lit, &dist, out, at);
                },
                2 => { // dynamic codes
                    const nlit = try in.need(5) + 257;
                    const ndist = try in.need(5) + 1;
                    const ncode = try in.need(4) + 4;
                    if (nlit > 286 or ndist > 30) return error.Bad;
                    lengths = @splat(0);
                    for (0..ncode) |k| lengths[order[k]] = @intCast(try in.need(3));
                    var lencode = Huffman(19){};
                    if (!lencode.build(lengths[0..19], true)) return error.Bad;
                    var k: usize = 0;
                    while (k < nlit + ndist) {
                        const s = try lencode.decode(in);
                        if (s < 16) {
                            lengths[k] = @intCast(s);
                            k += 1;
                            continue;
                        }
                        var value: u8 = 0;
                        var repeat: u32 = 0;
                        if (s == 16) {
                            if (k == 0) return error.Bad;
                            value = lengths[k - 1];
                            repeat = 3 + try in.need(2);
                        } else if (s == 17) {
                            repeat = 3 + try in.need(3);
                        } else {
                            repeat = 11 + try in.need(7);
                        }
                        if (k + repeat > nlit + ndist) return error.Bad;
                        for (0..repeat) |_| {
                            lengths[k] = value;
                            k += 1;
                        }
                    }
                    if (lengths[256] == 0) return error.Bad; // no end-of-block code
                    if (!lit.build(lengths[0..nlit], false)) return error.Bad;
                    if (!dist.build(lengths[nlit .. nlit + ndist], false)) return error.Bad;
                    at = try codes(in, &lit, &dist, out, at);
                },
                else => return error.Bad,
            }
            if (final == 1) break;
        }
        if (at != out.len) return error.Bad;
        // Adler-32 of the rows, big-endian, from the next byte boundary
        in.bits = 0;
        in.count = 0;
        var a: u32 = 1;
        var b: u32 = 0;
        for (out) |x| {
            a = (a + x) % 65521;
            b = (b + a) % 65521;
        }
        var stored: u32 = 0;
        for (0..4) |_| stored = stored << 8 | try in.byte();
        if (stored != (b << 16 | a)) return error.Bad;
    }

    fn paeth(a: i32, b: i32, c: i32) i32 {
        const p = a + b - c;
        const pa = @abs(p - a);
        const pb = @abs(p - b);
        const pc = @abs(p - c);
        return if (pa <= pb and pa <= pc) a else if (pb <= pc) b else c;
    }

    fn decode(
        comptime height: usize,
        comptime width: usize,
        comptime format: ZantImageFormat,
        data: []const u8,
        out: []u8,
        work: []u8,
    ) Bad!void {
        const signature = [8]u8{ 0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n' };
        if (data.len < 8 + 25 or !std.mem.eql(u8, data[0..8], &signature)) return error.Bad;
        // IHDR, first
        if (be32(data, 8) != 13 or !std.mem.eql(u8, data[12..16], "IHDR")) return error.Bad;
        if (crc32(data[12..29]) != be32(data, 29)) return error.Bad;
        const ihdr = data[16..29];
        if (be32(ihdr, 0) != width or be32(ihdr, 4) != height) return error.Bad;
        const depth = ihdr[8];
        const color = ihdr[9];
        if (depth != 8 or ihdr[10] != 0 or ihdr[11] != 0 or ihdr[12] != 0) return error.Bad;
        const samples: usize = switch (color) {
            0 => 1, // gray
            2 => 3, // RGB
            3 => 1, // palette index
            4 => 2, // gray + alpha
            6 => 4, // RGBA
            else => return error.Bad,
        };
        // chunks up to the first IDAT: a palette, if any; the others skipped
        var palette: []const u8 = data[0..0];
        var pos: usize = 33;
        while (true) {
            if (pos + 8 > data.len) return error.Bad;
            const length = be32(data, pos);
            if (length > data.len - pos - 12) return error.Bad;
            const kind = data[pos + 4 .. pos + 8];
            if (crc32(data[pos + 4 .. pos + 8 + length]) != be32(data, pos + 8 + length)) return error.Bad;
            if (std.mem.eql(u8, kind, "IDAT")) break;
            if (std.mem.eql(u8, kind, "IEND")) return error.Bad;
            if (std.mem.eql(u8, kind, "PLTE")) {
                if (length % 3 != 0 or length == 0 or length > 768) return error.Bad;
                palette = data[pos + 8 .. pos + 8 + length];
            }
            pos += 12 + length;
        }
        if (color == 3 and palette.len == 0) return error.Bad;
        const stride = 1 + samples * width;
        const rows = work[0 .. height * stride];
        var in = Stream{ .data = data, .pos = pos + 8, .left = be32(data, pos) };
        try inflate(&in, rows);
        // unfilter in place, row by row (the row above already unfiltered)
        for (0..height) |y| {
            const row = rows[y * stride + 1 .. (y + 1) * stride];
            const filter = rows[y * stride];
            if (filter > 4) return error.Bad;
            for (0..samples * width) |i| {
                const a: i32 = if (i >= samples) row[i - samples] else 0;
                const b: i32 = if (y > 0) rows[(y - 1) * stride + 1 + i] else 0;
                const c: i32 = if (y > 0 and i >= samples) rows[(y - 1) * stride + 1 + i - samples] else 0;
                const predicted: i32 = switch (filter) {
                    0 => 0,
                    1 => a,
                    2 => b,
                    3 => @divTrunc(a + b, 2),
                    else => paeth(a, b, c),
                };
                row[i] = @truncate(@as(u32, @bitCast(@as(i32, row[i]) + predicted)));
            }
        }
        if (color == 3) { // every index inside the palette, before anything is written
            for (0..height) |y| {
                for (rows[y * stride + 1 .. (y + 1) * stride]) |index| {
                    if (3 * @as(usize, index) + 3 > palette.len) return error.Bad;
                }
            }
        }
        const channels: usize = if (format == .gray) 1 else 3;
        for (0..height) |y| {
            const row = rows[y * stride + 1 .. (y + 1) * stride];
            for (0..width) |x| {
                const p = row[x * samples ..][0..samples];
                var rgb: [3]u32 = undefined;
                switch (color) {
                    0, 4 => rgb = .{ p[0], p[0], p[0] },
                    3 => {
                        const e = palette[3 * @as(usize, p[0]) ..][0..3];
                        rgb = .{ e[0], e[1], e[2] };
                    },
                    else => rgb = .{ p[0], p[1], p[2] },
                }
                const gray: ?u8 = if (color == 0 or color == 4) p[0] else null;
                zant_image_pixel(format, out[(y * width + x) * channels ..][0..channels], rgb, gray);
            }
        }
    }
};

/// Decode the `size` bytes at `data` into `out` (height x width x 3, or x 1 for .gray), with the
/// `work_size` bytes at `work`; false, with `out` untouched, unless they are a PNG of that size
/// that ZantPng decodes.
fn zant_png_decode(
    comptime height: usize,
    comptime width: usize,
    comptime format: ZantImageFormat,
    comptime size: usize,
    comptime work_size: usize,
    data: *const u8,
    out: *u8,
    work: *u8,
) bool {
    return zant_image_decode(ZantPng, zant_png_work_bytes(height, width), height, width, format, size, work_size, data, out, work);
}
