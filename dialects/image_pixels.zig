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
