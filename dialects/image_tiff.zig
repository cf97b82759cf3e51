/// Uncompressed TIFF (baseline: 8-bit samples, chunky, strips) decoded for an image of `height` x
/// `width` known at compile time, with no heap and bounded work (image.decode_tiff).
///
/// Memory: the encoded bytes `data[0..size]` are only read and the pixels copied from them
/// into `out`; `work` is not used. Every field and strip is checked against the input before
/// anything is written, so no byte outside the buffers is read or written, whatever the input.
///
/// Work: one pass over the first IFD's entries (each 12 bytes of the input), one over the strip
/// tables (their counts are the compiled height's strips), one over the pixels.
///
/// Result: true with `out` written (height x width x 3, or x 1 for .gray; gray, gray + alpha,
/// RGB and RGBA images, alpha dropped), or false with `out` untouched: another width or height
/// than compiled, compression (only 1, none, is read), a bit depth other than 8, planar
/// (separate) samples, a predictor, a photometric interpretation other than BlackIsZero or RGB,
/// a sample format other than unsigned, tiles, strips that do not cover the image or lie past
/// the end of the input. Grayscale of RGB is PIL's convert("L"), as onnx's reference computes it.
const ZantTiff = struct {
    const Bad = error{Bad};

    const Reader = struct {
        data: []const u8,
        big: bool,

        fn uint(self: Reader, at: usize, bytes: usize) Bad!u32 {
            if (at > self.data.len or bytes > self.data.len - at) return error.Bad;
            var v: u32 = 0;
            for (0..bytes) |k| {
                const b: u32 = self.data[if (self.big) at + k else at + bytes - 1 - k];
                v = v << 8 | b;
            }
            return v;
        }
    };

    /// An IFD entry's values: `count` SHORTs or LONGs, inline when they fit in 4 bytes.
    const Field = struct {
        at: usize = 0, // where the values are
        size: usize = 0, // bytes a value
        count: usize = 0,

        fn get(self: Field, r: Reader, k: usize) Bad!u32 {
            if (k >= self.count) return error.Bad;
            return r.uint(self.at + k * self.size, self.size);
        }
    };

    fn field(r: Reader, entry: usize) Bad!Field {
        const kind = try r.uint(entry + 2, 2);
        const count = try r.uint(entry + 4, 4);
        const size: usize = switch (kind) {
            3 => 2, // SHORT
            4 => 4, // LONG
            else => return error.Bad,
        };
        if (count == 0 or count > r.data.len) return error.Bad;
        const at = if (count * size <= 4) entry + 8 else try r.uint(entry + 8, 4);
        if (at > r.data.len or count * size > r.data.len - at) return error.Bad;
        return .{ .at = at, .size = size, .count = count };
    }

    fn decode(
        comptime height: usize,
        comptime width: usize,
        comptime format: ZantImageFormat,
        data: []const u8,
        out: []u8,
        _: []u8, // no work buffer: the pixels are copied from the input
    ) Bad!void {
        if (data.len < 8) return error.Bad;
        const big = data[0] == 'M';
        if (!((data[0] == 'I' and data[1] == 'I') or (data[0] == 'M' and data[1] == 'M'))) return error.Bad;
        const r = Reader{ .data = data, .big = big };
        if (try r.uint(2, 2) != 42) return error.Bad;
        const ifd = try r.uint(4, 4);
        const entries = try r.uint(ifd, 2);
        if (ifd + 2 + 12 * @as(usize, entries) > data.len) return error.Bad;
        var w: u32 = 0;
        var h: u32 = 0;
        var bits: ?Field = null;
        var offsets: ?Field = null;
        var counts: ?Field = null;
        var samples: u32 = 1;
        var rows_per_strip: u32 = 0xFFFFFFFF;
        var photometric: u32 = 0xFFFF;
        for (0..entries) |k| {
            const entry = ifd + 2 + 12 * k;
            const tag = try r.uint(entry, 2);
            switch (tag) {
                256, 257, 259, 262, 277, 278, 284, 317, 339 => {
                    const f = try field(r, entry);
                    const v = try f.get(r, 0);
                    for (1..f.count) |j| if (try f.get(r, j) != v) return error.Bad; // one value for all samples
                    switch (tag) {
                        256 => w = v,
                        257 => h = v,
                        259 => if (v != 1) return error.Bad, // compression: none
                        262 => photometric = v,
                        277 => samples = v,
                        278 => rows_per_strip = v,
                        284 => if (v != 1) return error.Bad, // chunky
                        317 => if (v != 1) return error.Bad, // no predictor
                        else => if (v != 1) return error.Bad, // unsigned samples
                    }
                },
                258 => bits = try field(r, entry),
                273 => offsets = try field(r, entry),
                279 => counts = try field(r, entry),
                322, 323, 324, 325 => return error.Bad, // tiles
                else => {},
            }
        }
        if (w != width or h != height or rows_per_strip == 0) return error.Bad;
        const rgb = switch (photometric) {
            1 => false, // BlackIsZero gray
            2 => true, // RGB
            else => return error.Bad,
        };
        if (samples < (if (rgb) @as(u32, 3) else 1) or samples > (if (rgb) @as(u32, 4) else 2)) return error.Bad;
        const depths = bits orelse return error.Bad;
        if (depths.count != samples) return error.Bad;
        for (0..samples) |j| if (try depths.get(r, j) != 8) return error.Bad;
        const starts = offsets orelse return error.Bad;
        const lengths = counts orelse return error.Bad;
        const per_strip: usize = @min(rows_per_strip, height);
        const strips = (height + per_strip - 1) / per_strip;
        if (starts.count != strips or lengths.count != strips) return error.Bad;
        const row_bytes = width * samples;
        for (0..strips) |s| { // every strip inside the input and as long as its rows
            const rows = @min(per_strip, height - s * per_strip);
            const start = try starts.get(r, s);
            if (try lengths.get(r, s) < rows * row_bytes) return error.Bad;
            if (start > data.len or rows * row_bytes > data.len - start) return error.Bad;
        }
        const channels: usize = if (format == .gray) 1 else 3;
        for (0..height) |y| {
            const row = data[(try starts.get(r, y / per_strip)) + (y % per_strip) * row_bytes ..][0..row_bytes];
            for (0..width) |x| {
                const p = row[x * samples ..][0..samples];
                const c: [3]u32 = if (rgb) .{ p[0], p[1], p[2] } else .{ p[0], p[0], p[0] };
                const gray: ?u8 = if (rgb) null else p[0];
                zant_image_pixel(format, out[(y * width + x) * channels ..][0..channels], c, gray);
            }
        }
    }
};

/// Decode the `size` bytes at `data` into `out` (height x width x 3, or x 1 for .gray); false,
/// with `out` untouched, unless they are an uncompressed TIFF of that size that ZantTiff reads.
/// `work` (`work_size` bytes) is not used: the pixels are copied from the input.
fn zant_tiff_decode(
    comptime height: usize,
    comptime width: usize,
    comptime format: ZantImageFormat,
    comptime size: usize,
    comptime work_size: usize,
    data: *const u8,
    out: *u8,
    work: *u8,
) bool {
    return zant_image_decode(ZantTiff, 0, height, width, format, size, work_size, data, out, work);
}
