/// The pixel orders ImageDecoder writes (its pixel_format attribute), shared by the decoders.
const ZantImageFormat = enum { rgb, bgr, gray };

/// Write one decoded pixel into `o` in `format`'s order: `rgb` its three samples (0..255, any
/// integer type), `gray` the image's own sample when it has one channel, else null: Grayscale is
/// then PIL's convert("L") of the RGB (ITU-R 601-2 luma in 16-bit fixed point), as onnx's
/// reference computes it.
fn zant_image_pixel(comptime format: ZantImageFormat, o: []u8, rgb: anytype, gray: ?u8) void {
    switch (format) {
        .rgb => for (0..3) |k| {
            o[k] = @intCast(rgb[k]);
        },
        .bgr => for (0..3) |k| {
            o[k] = @intCast(rgb[2 - k]);
        },
        .gray => o[0] = gray orelse @intCast((rgb[0] * 19595 + rgb[1] * 38470 + rgb[2] * 7471 + 0x8000) >> 16),
    }
}

/// Each decoder's entry (`zant_<format>_decode`): decode the `size` bytes at `data` with
/// `Decoder.decode` into `out` (height x width x 3, or x 1 for .gray), lending it `need` of the
/// `work_size` bytes at `work`; false, with `out` untouched, when `Decoder` refuses them.
fn zant_image_decode(
    comptime Decoder: type,
    comptime need: usize,
    comptime height: usize,
    comptime width: usize,
    comptime format: ZantImageFormat,
    comptime size: usize,
    comptime work_size: usize,
    data: *const u8,
    out: *u8,
    work: *u8,
) bool {
    if (comptime work_size < need) @compileError(@typeName(Decoder) ++ ": the work buffer is too small");
    const channels: usize = if (format == .gray) 1 else 3;
    const bytes: [*]const u8 = @ptrCast(data);
    const pixels: [*]u8 = @ptrCast(out);
    const scratch: [*]u8 = @ptrCast(work);
    Decoder.decode(height, width, format, bytes[0..size], pixels[0 .. height * width * channels], scratch[0..need]) catch return false;
    return true;
}
