/// Lossy WebP (a RIFF container holding one 'VP8 ' key frame, RFC 6386) decoded for an image of
/// `height` x `width` known at compile time, with no heap and bounded work (image.decode_webp).
///
/// Memory: the encoded bytes `data[0..size]` are only read; `work[0..zant_webp_work_bytes(height,
/// width)]` holds the Y, U and V planes of the frame rounded up to whole 16 x 16 macroblocks, one
/// byte per macroblock for the loop filter (segment, 4x4 prediction, coded coefficients) and the
/// contexts of the macroblock row above (4 subblock modes, 9 non-zero flags per macroblock). The
/// probabilities, one macroblock's coefficients and its prediction buffers are locals of fixed
/// size (3,540 bytes of stack measured on the Cortex-M4). Indices computed from the bytes are either bounded by
/// construction (tree decodes, 2-bit segments, clamped quantizer indices) or checked, so no byte
/// outside the three buffers is read or written, whatever the input.
///
/// Work: the boolean decoder reads every partition at most once (a read past the end yields zero
/// bits and marks the partition exhausted, which fails the frame as libwebp does), each
/// macroblock decodes at most 25 x 16 coefficients, and the compiled size fixes the number of
/// macroblocks; the loop filter and the colour conversion each visit every sample once.
///
/// Result: true with `out` written (height x width x 3, or x 1 for .gray), or false with `out`
/// untouched when the bytes are not such a WebP: another width or height than compiled, a lossless
/// ('VP8L') or animated file (an extended 'VP8X' file's alpha and metadata chunks are skipped,
/// its colour decoded), an inter frame, an invisible frame, a RIFF or chunk size past the end of
/// the input, partitions past the end of the chunk, or a partition that runs out before the last
/// macroblock. The pixels are libwebp's, as PIL decodes
/// them: its integer transforms and filters, its "fancy" chroma upsampling and its fixed-point
/// YUV -> RGB; Grayscale is PIL's convert("L") of that RGB.
fn zant_webp_work_bytes(comptime height: usize, comptime width: usize) usize {
    const mbw = (width + 15) / 16;
    const mbh = (height + 15) / 16;
    return 384 * mbw * mbh + mbw * mbh + 13 * mbw;
}

const ZantWebp = struct {
    const Bad = error{Bad};

    // RFC 6386's constants (section 13.5 coefficient probabilities, 13.4 their update
    // probabilities, 11.5 the subblock mode probabilities, 14.1 the quantizer steps).
    const coeff_probs = [1056]u8{
        128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128,
        128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 253, 136, 254, 255, 228, 219, 128, 128, 128, 128, 128,
        189, 129, 242, 255, 227, 213, 255, 219, 128, 128, 128, 106, 126, 227, 252, 214, 209, 255, 255, 128, 128, 128,
        1,   98,  248, 255, 236, 226, 255, 255, 128, 128, 128, 181, 133, 238, 254, 221, 234, 255, 154, 128, 128, 128,
        78,  134, 202, 247, 198, 180, 255, 219, 128, 128, 128, 1,   185, 249, 255, 243, 255, 128, 128, 128, 128, 128,
        184, 150, 247, 255, 236, 224, 128, 128, 128, 128, 128, 77,  110, 216, 255, 236, 230, 128, 128, 128, 128, 128,
        1,   101, 251, 255, 241, 255, 128, 128, 128, 128, 128, 170, 139, 241, 252, 236, 209, 255, 255, 128, 128, 128,
        37,  116, 196, 243, 228, 255, 255, 255, 128, 128, 128, 1,   204, 254, 255, 245, 255, 128, 128, 128, 128, 128,
        207, 160, 250, 255, 238, 128, 128, 128, 128, 128, 128, 102, 103, 231, 255, 211, 171, 128, 128, 128, 128, 128,
        1,   152, 252, 255, 240, 255, 128, 128, 128, 128, 128, 177, 135, 243, 255, 234, 225, 128, 128, 128, 128, 128,
        80,  129, 211, 255, 194, 224, 128, 128, 128, 128, 128, 1,   1,   255, 128, 128, 128, 128, 128, 128, 128, 128,
        246, 1,   255, 128, 128, 128, 128, 128, 128, 128, 128, 255, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128,
        198, 35,  237, 223, 193, 187, 162, 160, 145, 155, 62,  131, 45,  198, 221, 172, 176, 220, 157, 252, 221, 1,
        68,  47,  146, 208, 149, 167, 221, 162, 255, 223, 128, 1,   149, 241, 255, 221, 224, 255, 255, 128, 128, 128,
        184, 141, 234, 253, 222, 220, 255, 199, 128, 128, 128, 81,  99,  181, 242, 176, 190, 249, 202, 255, 255, 128,
        1,   129, 232, 253, 214, 197, 242, 196, 255, 255, 128, 99,  121, 210, 250, 201, 198, 255, 202, 128, 128, 128,
        23,  91,  163, 242, 170, 187, 247, 210, 255, 255, 128, 1,   200, 246, 255, 234, 255, 128, 128, 128, 128, 128,
        109, 178, 241, 255, 231, 245, 255, 255, 128, 128, 128, 44,  130, 201, 253, 205, 192, 255, 255, 128, 128, 128,
        1,   132, 239, 251, 219, 209, 255, 165, 128, 128, 128, 94,  136, 225, 251, 218, 190, 255, 255, 128, 128, 128,
        22,  100, 174, 245, 186, 161, 255, 199, 128, 128, 128, 1,   182, 249, 255, 232, 235, 128, 128, 128, 128, 128,
        124, 143, 241, 255, 227, 234, 128, 128, 128, 128, 128, 35,  77,  181, 251, 193, 211, 255, 205, 128, 128, 128,
        1,   157, 247, 255, 236, 231, 255, 255, 128, 128, 128, 121, 141, 235, 255, 225, 227, 255, 255, 128, 128, 128,
        45,  99,  188, 251, 195, 217, 255, 224, 128, 128, 128, 1,   1,   251, 255, 213, 255, 128, 128, 128, 128, 128,
        203, 1,   248, 255, 255, 128, 128, 128, 128, 128, 128, 137, 1,   177, 255, 224, 255, 128, 128, 128, 128, 128,
        253, 9,   248, 251, 207, 208, 255, 192, 128, 128, 128, 175, 13,  224, 243, 193, 185, 249, 198, 255, 255, 128,
        73,  17,  171, 221, 161, 179, 236, 167, 255, 234, 128, 1,   95,  247, 253, 212, 183, 255, 255, 128, 128, 128,
        239, 90,  244, 250, 211, 209, 255, 255, 128, 128, 128, 155, 77,  195, 248, 188, 195, 255, 255, 128, 128, 128,
        1,   24,  239, 251, 218, 219, 255, 205, 128, 128, 128, 201, 51,  219, 255, 196, 186, 128, 128, 128, 128, 128,
        69,  46,  190, 239, 201, 218, 255, 228, 128, 128, 128, 1,   191, 251, 255, 255, 128, 128, 128, 128, 128, 128,
        223, 165, 249, 255, 213, 255, 128, 128, 128, 128, 128, 141, 124, 248, 255, 255, 128, 128, 128, 128, 128, 128,
        1,   16,  248, 255, 255, 128, 128, 128, 128, 128, 128, 190, 36,  230, 255, 236, 255, 128, 128, 128, 128, 128,
        149, 1,   255, 128, 128, 128, 128, 128, 128, 128, 128, 1,   226, 255, 128, 128, 128, 128, 128, 128, 128, 128,
        247, 192, 255, 128, 128, 128, 128, 128, 128, 128, 128, 240, 128, 255, 128, 128, 128, 128, 128, 128, 128, 128,
        1,   134, 252, 255, 255, 128, 128, 128, 128, 128, 128, 213, 62,  250, 255, 255, 128, 128, 128, 128, 128, 128,
        55,  93,  255, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128,
        128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128,
        202, 24,  213, 235, 186, 191, 220, 160, 240, 175, 255, 126, 38,  182, 232, 169, 184, 228, 174, 255, 187, 128,
        61,  46,  138, 219, 151, 178, 240, 170, 255, 216, 128, 1,   112, 230, 250, 199, 191, 247, 159, 255, 255, 128,
        166, 109, 228, 252, 211, 215, 255, 174, 128, 128, 128, 39,  77,  162, 232, 172, 180, 245, 178, 255, 255, 128,
        1,   52,  220, 246, 198, 199, 249, 220, 255, 255, 128, 124, 74,  191, 243, 183, 193, 250, 221, 255, 255, 128,
        24,  71,  130, 219, 154, 170, 243, 182, 255, 255, 128, 1,   182, 225, 249, 219, 240, 255, 224, 128, 128, 128,
        149, 150, 226, 252, 216, 205, 255, 171, 128, 128, 128, 28,  108, 170, 242, 183, 194, 254, 223, 255, 255, 128,
        1,   81,  230, 252, 204, 203, 255, 192, 128, 128, 128, 123, 102, 209, 247, 188, 196, 255, 233, 128, 128, 128,
        20,  95,  153, 243, 164, 173, 255, 203, 128, 128, 128, 1,   222, 248, 255, 216, 213, 128, 128, 128, 128, 128,
        168, 175, 246, 252, 235, 205, 255, 255, 128, 128, 128, 47,  116, 215, 255, 211, 212, 255, 255, 128, 128, 128,
        1,   121, 236, 253, 212, 214, 255, 255, 128, 128, 128, 141, 84,  213, 252, 201, 202, 255, 219, 128, 128, 128,
        42,  80,  160, 240, 162, 185, 255, 205, 128, 128, 128, 1,   1,   255, 128, 128, 128, 128, 128, 128, 128, 128,
        244, 1,   255, 128, 128, 128, 128, 128, 128, 128, 128, 238, 1,   255, 128, 128, 128, 128, 128, 128, 128, 128,
    };
    const coeff_updates = [1056]u8{
        255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
        255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 176, 246, 255, 255, 255, 255, 255, 255, 255, 255, 255,
        223, 241, 252, 255, 255, 255, 255, 255, 255, 255, 255, 249, 253, 253, 255, 255, 255, 255, 255, 255, 255, 255,
        255, 244, 252, 255, 255, 255, 255, 255, 255, 255, 255, 234, 254, 254, 255, 255, 255, 255, 255, 255, 255, 255,
        253, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 246, 254, 255, 255, 255, 255, 255, 255, 255, 255,
        239, 253, 254, 255, 255, 255, 255, 255, 255, 255, 255, 254, 255, 254, 255, 255, 255, 255, 255, 255, 255, 255,
        255, 248, 254, 255, 255, 255, 255, 255, 255, 255, 255, 251, 255, 254, 255, 255, 255, 255, 255, 255, 255, 255,
        255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 253, 254, 255, 255, 255, 255, 255, 255, 255, 255,
        251, 254, 254, 255, 255, 255, 255, 255, 255, 255, 255, 254, 255, 254, 255, 255, 255, 255, 255, 255, 255, 255,
        255, 254, 253, 255, 254, 255, 255, 255, 255, 255, 255, 250, 255, 254, 255, 254, 255, 255, 255, 255, 255, 255,
        254, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
        255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
        217, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 225, 252, 241, 253, 255, 255, 254, 255, 255, 255, 255,
        234, 250, 241, 250, 253, 255, 253, 254, 255, 255, 255, 255, 254, 255, 255, 255, 255, 255, 255, 255, 255, 255,
        223, 254, 254, 255, 255, 255, 255, 255, 255, 255, 255, 238, 253, 254, 254, 255, 255, 255, 255, 255, 255, 255,
        255, 248, 254, 255, 255, 255, 255, 255, 255, 255, 255, 249, 254, 255, 255, 255, 255, 255, 255, 255, 255, 255,
        255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 253, 255, 255, 255, 255, 255, 255, 255, 255, 255,
        247, 254, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
        255, 253, 254, 255, 255, 255, 255, 255, 255, 255, 255, 252, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
        255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 254, 254, 255, 255, 255, 255, 255, 255, 255, 255,
        253, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
        255, 254, 253, 255, 255, 255, 255, 255, 255, 255, 255, 250, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
        254, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
        255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
        186, 251, 250, 255, 255, 255, 255, 255, 255, 255, 255, 234, 251, 244, 254, 255, 255, 255, 255, 255, 255, 255,
        251, 251, 243, 253, 254, 255, 254, 255, 255, 255, 255, 255, 253, 254, 255, 255, 255, 255, 255, 255, 255, 255,
        236, 253, 254, 255, 255, 255, 255, 255, 255, 255, 255, 251, 253, 253, 254, 254, 255, 255, 255, 255, 255, 255,
        255, 254, 254, 255, 255, 255, 255, 255, 255, 255, 255, 254, 254, 254, 255, 255, 255, 255, 255, 255, 255, 255,
        255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 254, 255, 255, 255, 255, 255, 255, 255, 255, 255,
        254, 254, 255, 255, 255, 255, 255, 255, 255, 255, 255, 254, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
        255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 254, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
        255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
        255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
        255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
        255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
        255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
        248, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 250, 254, 252, 254, 255, 255, 255, 255, 255, 255, 255,
        248, 254, 249, 253, 255, 255, 255, 255, 255, 255, 255, 255, 253, 253, 255, 255, 255, 255, 255, 255, 255, 255,
        246, 253, 253, 255, 255, 255, 255, 255, 255, 255, 255, 252, 254, 251, 254, 254, 255, 255, 255, 255, 255, 255,
        255, 254, 252, 255, 255, 255, 255, 255, 255, 255, 255, 248, 254, 253, 255, 255, 255, 255, 255, 255, 255, 255,
        253, 255, 254, 254, 255, 255, 255, 255, 255, 255, 255, 255, 251, 254, 255, 255, 255, 255, 255, 255, 255, 255,
        245, 251, 254, 255, 255, 255, 255, 255, 255, 255, 255, 253, 253, 254, 255, 255, 255, 255, 255, 255, 255, 255,
        255, 251, 253, 255, 255, 255, 255, 255, 255, 255, 255, 252, 253, 254, 255, 255, 255, 255, 255, 255, 255, 255,
        255, 254, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 252, 255, 255, 255, 255, 255, 255, 255, 255, 255,
        249, 255, 254, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 254, 255, 255, 255, 255, 255, 255, 255, 255,
        255, 255, 253, 255, 255, 255, 255, 255, 255, 255, 255, 250, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
        255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
        254, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
    };
    const bmode_probs = [900]u8{
        231, 120, 48,  89,  115, 113, 120, 152, 112, 152, 179, 64,  126, 170, 118, 46,  70,  95,  175, 69,  143, 80,  85,  82,  72,  155, 103,
        56,  58,  10,  171, 218, 189, 17,  13,  152, 114, 26,  17,  163, 44,  195, 21,  10,  173, 121, 24,  80,  195, 26,  62,  44,  64,  85,
        144, 71,  10,  38,  171, 213, 144, 34,  26,  170, 46,  55,  19,  136, 160, 33,  206, 71,  63,  20,  8,   114, 114, 208, 12,  9,   226,
        81,  40,  11,  96,  182, 84,  29,  16,  36,  134, 183, 89,  137, 98,  101, 106, 165, 148, 72,  187, 100, 130, 157, 111, 32,  75,  80,
        66,  102, 167, 99,  74,  62,  40,  234, 128, 41,  53,  9,   178, 241, 141, 26,  8,   107, 74,  43,  26,  146, 73,  166, 49,  23,  157,
        65,  38,  105, 160, 51,  52,  31,  115, 128, 104, 79,  12,  27,  217, 255, 87,  17,  7,   87,  68,  71,  44,  114, 51,  15,  186, 23,
        47,  41,  14,  110, 182, 183, 21,  17,  194, 66,  45,  25,  102, 197, 189, 23,  18,  22,  88,  88,  147, 150, 42,  46,  45,  196, 205,
        43,  97,  183, 117, 85,  38,  35,  179, 61,  39,  53,  200, 87,  26,  21,  43,  232, 171, 56,  34,  51,  104, 114, 102, 29,  93,  77,
        39,  28,  85,  171, 58,  165, 90,  98,  64,  34,  22,  116, 206, 23,  34,  43,  166, 73,  107, 54,  32,  26,  51,  1,   81,  43,  31,
        68,  25,  106, 22,  64,  171, 36,  225, 114, 34,  19,  21,  102, 132, 188, 16,  76,  124, 62,  18,  78,  95,  85,  57,  50,  48,  51,
        193, 101, 35,  159, 215, 111, 89,  46,  111, 60,  148, 31,  172, 219, 228, 21,  18,  111, 112, 113, 77,  85,  179, 255, 38,  120, 114,
        40,  42,  1,   196, 245, 209, 10,  25,  109, 88,  43,  29,  140, 166, 213, 37,  43,  154, 61,  63,  30,  155, 67,  45,  68,  1,   209,
        100, 80,  8,   43,  154, 1,   51,  26,  71,  142, 78,  78,  16,  255, 128, 34,  197, 171, 41,  40,  5,   102, 211, 183, 4,   1,   221,
        51,  50,  17,  168, 209, 192, 23,  25,  82,  138, 31,  36,  171, 27,  166, 38,  44,  229, 67,  87,  58,  169, 82,  115, 26,  59,  179,
        63,  59,  90,  180, 59,  166, 93,  73,  154, 40,  40,  21,  116, 143, 209, 34,  39,  175, 47,  15,  16,  183, 34,  223, 49,  45,  183,
        46,  17,  33,  183, 6,   98,  15,  32,  183, 57,  46,  22,  24,  128, 1,   54,  17,  37,  65,  32,  73,  115, 28,  128, 23,  128, 205,
        40,  3,   9,   115, 51,  192, 18,  6,   223, 87,  37,  9,   115, 59,  77,  64,  21,  47,  104, 55,  44,  218, 9,   54,  53,  130, 226,
        64,  90,  70,  205, 40,  41,  23,  26,  57,  54,  57,  112, 184, 5,   41,  38,  166, 213, 30,  34,  26,  133, 152, 116, 10,  32,  134,
        39,  19,  53,  221, 26,  114, 32,  73,  255, 31,  9,   65,  234, 2,   15,  1,   118, 73,  75,  32,  12,  51,  192, 255, 160, 43,  51,
        88,  31,  35,  67,  102, 85,  55,  186, 85,  56,  21,  23,  111, 59,  205, 45,  37,  192, 55,  38,  70,  124, 73,  102, 1,   34,  98,
        125, 98,  42,  88,  104, 85,  117, 175, 82,  95,  84,  53,  89,  128, 100, 113, 101, 45,  75,  79,  123, 47,  51,  128, 81,  171, 1,
        57,  17,  5,   71,  102, 57,  53,  41,  49,  38,  33,  13,  121, 57,  73,  26,  1,   85,  41,  10,  67,  138, 77,  110, 90,  47,  114,
        115, 21,  2,   10,  102, 255, 166, 23,  6,   101, 29,  16,  10,  85,  128, 101, 196, 26,  57,  18,  10,  102, 102, 213, 34,  20,  43,
        117, 20,  15,  36,  163, 128, 68,  1,   26,  102, 61,  71,  37,  34,  53,  31,  243, 192, 69,  60,  71,  38,  73,  119, 28,  222, 37,
        68,  45,  128, 34,  1,   47,  11,  245, 171, 62,  17,  19,  70,  146, 85,  55,  62,  70,  37,  43,  37,  154, 100, 163, 85,  160, 1,
        63,  9,   92,  136, 28,  64,  32,  201, 85,  75,  15,  9,   9,   64,  255, 184, 119, 16,  86,  6,   28,  5,   64,  255, 25,  248, 1,
        56,  8,   17,  132, 137, 255, 55,  116, 128, 58,  15,  20,  82,  135, 57,  26,  121, 40,  164, 50,  31,  137, 154, 133, 25,  35,  218,
        51,  103, 44,  131, 131, 123, 31,  6,   158, 86,  40,  64,  135, 148, 224, 45,  183, 128, 22,  26,  17,  131, 240, 154, 14,  1,   209,
        45,  16,  21,  91,  64,  222, 7,   1,   197, 56,  21,  39,  155, 60,  138, 23,  102, 213, 83,  12,  13,  54,  192, 255, 68,  47,  28,
        85,  26,  85,  85,  128, 128, 32,  146, 171, 18,  11,  7,   63,  144, 171, 4,   4,   246, 35,  27,  10,  146, 174, 171, 12,  26,  128,
        190, 80,  35,  99,  180, 80,  126, 54,  45,  85,  126, 47,  87,  176, 51,  41,  20,  32,  101, 75,  128, 139, 118, 146, 116, 128, 85,
        56,  41,  15,  176, 236, 85,  37,  9,   62,  71,  30,  17,  119, 118, 255, 17,  18,  138, 101, 38,  60,  138, 55,  70,  43,  26,  142,
        146, 36,  19,  30,  171, 255, 97,  27,  20,  138, 45,  61,  62,  219, 1,   81,  188, 64,  32,  41,  20,  117, 151, 142, 20,  21,  163,
        112, 19,  12,  61,  195, 128, 48,  4,   24,
    };
    const dc_table = [128]u16{
        4,   5,   6,   7,   8,   9,   10,  10,  11,  12,  13,  14,  15,  16,  17,  17,
        18,  19,  20,  20,  21,  21,  22,  22,  23,  23,  24,  25,  25,  26,  27,  28,
        29,  30,  31,  32,  33,  34,  35,  36,  37,  37,  38,  39,  40,  41,  42,  43,
        44,  45,  46,  46,  47,  48,  49,  50,  51,  52,  53,  54,  55,  56,  57,  58,
        59,  60,  61,  62,  63,  64,  65,  66,  67,  68,  69,  70,  71,  72,  73,  74,
        75,  76,  76,  77,  78,  79,  80,  81,  82,  83,  84,  85,  86,  87,  88,  89,
        91,  93,  95,  96,  98,  100, 101, 102, 104, 106, 108, 110, 112, 114, 116, 118,
        122, 124, 126, 128, 130, 132, 134, 136, 138, 140, 143, 145, 148, 151, 154, 157,
    };
    const ac_table = [128]u16{
        4,   5,   6,   7,   8,   9,   10,  11,  12,  13,  14,  15,  16,  17,  18,  19,
        20,  21,  22,  23,  24,  25,  26,  27,  28,  29,  30,  31,  32,  33,  34,  35,
        36,  37,  38,  39,  40,  41,  42,  43,  44,  45,  46,  47,  48,  49,  50,  51,
        52,  53,  54,  55,  56,  57,  58,  60,  62,  64,  66,  68,  70,  72,  74,  76,
        78,  80,  82,  84,  86,  88,  90,  92,  94,  96,  98,  100, 102, 104, 106, 108,
        110, 112, 114, 116, 119, 122, 125, 128, 131, 134, 137, 140, 143, 146, 149, 152,
        155, 158, 161, 164, 167, 170, 173, 177, 181, 185, 189, 193, 197, 201, 205, 209,
        213, 217, 221, 225, 229, 234, 239, 245, 249, 254, 259, 264, 269, 274, 279, 284,
    };
    const zigzag = [16]u8{ 0, 1, 4, 8, 5, 2, 3, 6, 9, 12, 13, 10, 7, 11, 14, 15 };
    /// The band of each coefficient position; the 17th is where a 16th coefficient would go.
    const bands = [17]u8{ 0, 1, 2, 3, 6, 4, 5, 6, 6, 6, 6, 6, 6, 6, 6, 7, 0 };
    const cat3 = [_]u8{ 173, 148, 140 };
    const cat4 = [_]u8{ 176, 155, 140, 135 };
    const cat5 = [_]u8{ 180, 157, 141, 134, 130 };
    const cat6 = [_]u8{ 254, 254, 243, 230, 196, 177, 153, 140, 133, 130, 129 };

    // Prediction modes, numbered as the subblock mode probabilities are indexed: the four
    // 16 x 16 / chroma modes are DC, TM, V (= VE) and H (= HE).
    const dc_pred = 0;
    const tm_pred = 1;
    const ve_pred = 2;
    const he_pred = 3;
    const rd_pred = 4;
    const vr_pred = 5;
    const ld_pred = 6;
    const vl_pred = 7;
    const hd_pred = 8;
    const hu_pred = 9;

    /// The boolean entropy decoder (RFC 6386 section 7): a 2-byte window, bytes past the end
    /// read as zeros. `exhausted` is set once a bit is decoded whose 8-bit window reaches past
    /// the last byte, where libwebp's reader sets its eof flag, and from the start when the first
    /// byte is 255: no encoder writes it (the value must start below the range, 255), and from
    /// such a value libwebp's result depends on its register width.
    const Bool = struct {
        data: []const u8,
        pos: usize = 0,
        value: u32 = 0,
        range: u32 = 255,
        count: u32 = 0,
        shifted: usize = 0,
        exhausted: bool = false,

        fn init(data: []const u8) Bool {
            var b = Bool{ .data = data };
            b.value = b.next() << 8;
            b.value |= b.next();
            b.exhausted = data.len == 0 or data[0] == 0xFF;
            return b;
        }

        fn next(self: *Bool) u32 {
            if (self.pos >= self.data.len) return 0;
            self.pos += 1;
            return self.data[self.pos - 1];
        }

        fn bit(self: *Bool, prob: u32) bool {
            if (self.shifted + 8 > 8 * self.data.len) self.exhausted = true;
            const split = 1 + (((self.range - 1) * prob) >> 8);
            const big = split << 8;
            var one = false;
            if (self.value >= big) {
                one = true;
                self.range -= split;
                self.value -= big;
            } else {
                self.range = split;
            }
            while (self.range < 128) {
                self.value <<= 1;
                self.range <<= 1;
                self.shifted += 1;
                self.count += 1;
                if (self.count == 8) {
                    self.count = 0;
                    self.value |= self.next();
                }
            }
            return one;
        }

        fn flag(self: *Bool) bool {
            return self.bit(128);
        }

        /// `n` bits at probability 1/2, most significant first.
        fn literal(self: *Bool, n: u5) i32 {
            var v: i32 = 0;
            for (0..n) |_| v = v * 2 + @intFromBool(self.flag());
            return v;
        }

        /// `n` bits of magnitude then a sign bit.
        fn signed(self: *Bool, n: u5) i32 {
            const v = self.literal(n);
            return if (self.flag()) -v else v;
        }

        /// An optional signed field: a flag, then the field when it is set, else 0.
        fn optional(self: *Bool, n: u5) i32 {
            return if (self.flag()) self.signed(n) else 0;
        }
    };

    const Quant = struct { y1: [2]i32, y2: [2]i32, uv: [2]i32 };

    const Filter = struct { limit: i32 = 0, inner_limit: i32 = 0, hev: i32 = 0 };

    /// The per-frame state the macroblocks read: probabilities, quantizers, filter strengths.
    const Frame = struct {
        probs: [4 * 8 * 3 * 11]u8 = coeff_probs,
        segment_probs: [3]u8 = .{ 255, 255, 255 },
        update_map: bool = false,
        skip_prob: ?u32 = null,
        quant: [4]Quant = undefined,
        filters: [4][2]Filter = undefined,
        simple: bool = false,
        filtered: bool = false,

        fn p(self: *const Frame, t: usize, band: usize, ctx: usize) []const u8 {
            return self.probs[((t * 8 + band) * 3 + ctx) * 11 ..][0..11];
        }
    };

    fn le(bytes: []const u8) u32 {
        var v: u32 = 0;
        for (0..bytes.len) |k| v |= @as(u32, bytes[k]) << @intCast(8 * k);
        return v;
    }

    fn clampIndex(v: i32, high: i32) usize {
        return @intCast(@min(@max(v, 0), high));
    }

    fn clip8(v: i32) u8 {
        return @intCast(@min(@max(v, 0), 255));
    }

    /// DCTextra's large values (RFC 6386 section 13.2), after a token tree's "not one".
    fn large(br: *Bool, p: []const u8) i32 {
        if (!br.bit(p[3])) {
            if (!br.bit(p[4])) return 2;
            return 3 + @as(i32, @intFromBool(br.bit(p[5])));
        }
        if (!br.bit(p[6])) {
            if (!br.bit(p[7])) return 5 + @as(i32, @intFromBool(br.bit(159)));
            return 7 + 2 * @as(i32, @intFromBool(br.bit(165))) + @as(i32, @intFromBool(br.bit(145)));
        }
        const high = @intFromBool(br.bit(p[8]));
        const low = @intFromBool(br.bit(p[9 + @as(usize, high)]));
        const cat: u5 = @as(u5, high) * 2 + low;
        const table: []const u8 = switch (cat) {
            0 => &cat3,
            1 => &cat4,
            2 => &cat5,
            else => &cat6,
        };
        var v: i32 = 0;
        for (table) |prob| v = v * 2 + @intFromBool(br.bit(prob));
        return v + 3 + (@as(i32, 8) << cat);
    }

    /// One block's tokens (type `t`, first position `first`) dequantized into `out` in raster
    /// order; returns the position after the last token read (libwebp's count: a run of zeros
    /// to the end counts 16), which sets the neighbours' contexts.
    fn coefficients(br: *Bool, f: *const Frame, t: usize, ctx: usize, dq: [2]i32, first: usize, out: *[16]i16) usize {
        var n = first;
        var p = f.p(t, bands[n], ctx);
        while (n < 16) : (n += 1) {
            if (!br.bit(p[0])) return n; // end of block
            while (!br.bit(p[1])) { // zero
                n += 1;
                if (n == 16) return 16;
                p = f.p(t, bands[n], 0);
            }
            var v: i32 = 1;
            if (!br.bit(p[2])) {
                p = f.p(t, bands[n + 1], 1);
            } else {
                v = large(br, p);
                p = f.p(t, bands[n + 1], 2);
            }
            if (br.flag()) v = -v;
            out[zigzag[n]] = @truncate(v *% dq[@intFromBool(n > 0)]);
        }
        return 16;
    }

    /// The inverse Walsh-Hadamard transform of the Y2 block into the DC of the 16 luma blocks.
    fn wht(in: *const [16]i16, coeffs: *[25][16]i16) void {
        var tmp: [16]i32 = undefined;
        for (0..4) |i| {
            const a0 = @as(i32, in[i]) + in[12 + i];
            const a1 = @as(i32, in[4 + i]) + in[8 + i];
            const a2 = @as(i32, in[4 + i]) - in[8 + i];
            const a3 = @as(i32, in[i]) - in[12 + i];
            tmp[i] = a0 + a1;
            tmp[8 + i] = a0 - a1;
            tmp[4 + i] = a3 + a2;
            tmp[12 + i] = a3 - a2;
        }
        for (0..4) |i| {
            const dc = tmp[i * 4] + 3;
            const a0 = dc + tmp[3 + i * 4];
            const a1 = tmp[1 + i * 4] + tmp[2 + i * 4];
            const a2 = tmp[1 + i * 4] - tmp[2 + i * 4];
            const a3 = dc - tmp[3 + i * 4];
            coeffs[i * 4 + 0][0] = @truncate((a0 + a1) >> 3);
            coeffs[i * 4 + 1][0] = @truncate((a3 + a2) >> 3);
            coeffs[i * 4 + 2][0] = @truncate((a0 - a1) >> 3);
            coeffs[i * 4 + 3][0] = @truncate((a3 - a2) >> 3);
        }
    }

    fn mul1(a: i32) i32 {
        return ((a *% 20091) >> 16) +% a;
    }

    fn mul2(a: i32) i32 {
        return (a *% 35468) >> 16;
    }

    /// The inverse DCT of one 4 x 4 block added to the prediction at `dst` (`stride` apart), in
    /// wrapping 32-bit arithmetic as libwebp's C on a 32-bit core.
    fn idctAdd(in: *const [16]i16, dst: []u8, stride: usize) void {
        var tmp: [16]i32 = undefined;
        for (0..4) |i| {
            const a = @as(i32, in[i]) + in[8 + i];
            const b = @as(i32, in[i]) - in[8 + i];
            const c = mul2(in[4 + i]) -% mul1(in[12 + i]);
            const d = mul1(in[4 + i]) +% mul2(in[12 + i]);
            tmp[i * 4 + 0] = a +% d;
            tmp[i * 4 + 1] = b +% c;
            tmp[i * 4 + 2] = b -% c;
            tmp[i * 4 + 3] = a -% d;
        }
        for (0..4) |i| {
            const dc = tmp[i] +% 4;
            const a = dc +% tmp[8 + i];
            const b = dc -% tmp[8 + i];
            const c = mul2(tmp[4 + i]) -% mul1(tmp[12 + i]);
            const d = mul1(tmp[4 + i]) +% mul2(tmp[12 + i]);
            const row = dst[i * stride ..][0..4];
            const v = [4]i32{ a +% d, b +% c, b -% c, a -% d };
            for (0..4) |k| row[k] = clip8(@as(i32, row[k]) + (v[k] >> 3));
        }
    }

    fn avg3(a: u8, b: u8, c: u8) u8 {
        return @intCast((@as(u32, a) + 2 * @as(u32, b) + c + 2) >> 2);
    }

    fn avg2(a: u8, b: u8) u8 {
        return @intCast((@as(u32, a) + b + 1) >> 1);
    }

    /// A prediction buffer as libwebp keeps it: `bps` bytes a row, the block at `origin`, the
    /// row above it (with the corner and, for luma, 4 bytes to the right) and the column to its
    /// left in place.
    const bps = 32;
    const origin = bps + 8;

    fn fill(buf: []u8, at: usize, n: usize, v: u8) void {
        for (0..n) |y| @memset(buf[at + y * bps ..][0..n], v);
    }

    /// 16 x 16 luma or 8 x 8 chroma prediction (`n`) of `mode`; DC is averaged over the edges
    /// that exist (`top`, `left`), 128 without either.
    fn predictBlock(buf: []u8, n: usize, mode: u8, top: bool, left: bool) void {
        const o = origin;
        switch (mode) {
            ve_pred => for (0..n) |y| @memcpy(buf[o + y * bps ..][0..n], buf[o - bps ..][0..n]),
            he_pred => for (0..n) |y| @memset(buf[o + y * bps ..][0..n], buf[o + y * bps - 1]),
            tm_pred => trueMotion(buf, o, n),
            else => {
                const shift: u5 = if (n == 16) 4 else 3;
                var sum: u32 = 0;
                for (0..n) |k| {
                    if (top) sum += buf[o - bps + k];
                    if (left) sum += buf[o + k * bps - 1];
                }
                const size: u32 = @intCast(n);
                const dc: u32 = if (top and left)
                    (sum + size) >> (shift + 1)
                else if (top or left)
                    (sum + size / 2) >> shift
                else
                    128;
                fill(buf, o, n, @intCast(dc));
            },
        }
    }

    fn trueMotion(buf: []u8, at: usize, n: usize) void {
        const corner: i32 = buf[at - bps - 1];
        for (0..n) |y| {
            const left: i32 = buf[at + y * bps - 1];
            for (0..n) |x| buf[at + y * bps + x] = clip8(left + buf[at - bps + x] - corner);
        }
    }

    /// One 4 x 4 subblock's prediction at `at` (RFC 6386 section 12.3; libwebp's rounding).
    fn predictSubblock(buf: []u8, at: usize, mode: u8) void {
        const top = buf[at - bps - 1 ..][0..9]; // corner, A..H
        const x = top[0];
        const l = [4]u8{ buf[at - 1], buf[at + bps - 1], buf[at + 2 * bps - 1], buf[at + 3 * bps - 1] };
        const a = top[1..9];
        var d: [4][4]u8 = undefined; // [row][column]
        switch (mode) {
            dc_pred => {
                var sum: u32 = 4;
                for (0..4) |k| sum += @as(u32, a[k]) + l[k];
                d = @splat(@splat(@intCast(sum >> 3)));
            },
            tm_pred => {
                trueMotion(buf, at, 4);
                return;
            },
            ve_pred => {
                const row = [4]u8{ avg3(x, a[0], a[1]), avg3(a[0], a[1], a[2]), avg3(a[1], a[2], a[3]), avg3(a[2], a[3], a[4]) };
                d = .{ row, row, row, row };
            },
            he_pred => {
                const v = [4]u8{ avg3(x, l[0], l[1]), avg3(l[0], l[1], l[2]), avg3(l[1], l[2], l[3]), avg3(l[2], l[3], l[3]) };
                for (0..4) |y| d[y] = @splat(v[y]);
            },
            rd_pred => {
                // Along the down-right diagonals: L[3], L[2], L[1], L[0], X, A, B, C, D.
                const e = [9]u8{ l[3], l[2], l[1], l[0], x, a[0], a[1], a[2], a[3] };
                for (0..4) |y| for (0..4) |c| {
                    const k = 3 - y + c; // the centre of the 3-tap average in `e`
                    d[y][c] = avg3(e[k], e[k + 1], e[k + 2]);
                };
            },
            ld_pred => for (0..4) |y| for (0..4) |c| {
                const k = y + c;
                d[y][c] = if (k == 6) avg3(a[6], a[7], a[7]) else avg3(a[k], a[k + 1], a[k + 2]);
            },
            vr_pred => {
                d[3][0] = avg3(l[2], l[1], l[0]);
                d[2][0] = avg3(l[1], l[0], x);
                d[1][0] = avg3(l[0], x, a[0]);
                d[3][1] = d[1][0];
                d[1][1] = avg3(x, a[0], a[1]);
                d[3][2] = d[1][1];
                d[1][2] = avg3(a[0], a[1], a[2]);
                d[3][3] = d[1][2];
                d[1][3] = avg3(a[1], a[2], a[3]);
                d[0][0] = avg2(x, a[0]);
                d[2][1] = d[0][0];
                d[0][1] = avg2(a[0], a[1]);
                d[2][2] = d[0][1];
                d[0][2] = avg2(a[1], a[2]);
                d[2][3] = d[0][2];
                d[0][3] = avg2(a[2], a[3]);
            },
            vl_pred => {
                d[0][0] = avg2(a[0], a[1]);
                d[0][1] = avg2(a[1], a[2]);
                d[2][0] = d[0][1];
                d[0][2] = avg2(a[2], a[3]);
                d[2][1] = d[0][2];
                d[0][3] = avg2(a[3], a[4]);
                d[2][2] = d[0][3];
                d[1][0] = avg3(a[0], a[1], a[2]);
                d[1][1] = avg3(a[1], a[2], a[3]);
                d[3][0] = d[1][1];
                d[1][2] = avg3(a[2], a[3], a[4]);
                d[3][1] = d[1][2];
                d[1][3] = avg3(a[3], a[4], a[5]);
                d[3][2] = d[1][3];
                d[2][3] = avg3(a[4], a[5], a[6]);
                d[3][3] = avg3(a[5], a[6], a[7]);
            },
            hd_pred => {
                d[0][0] = avg2(l[0], x);
                d[1][2] = d[0][0];
                d[1][0] = avg2(l[1], l[0]);
                d[2][2] = d[1][0];
                d[2][0] = avg2(l[2], l[1]);
                d[3][2] = d[2][0];
                d[3][0] = avg2(l[3], l[2]);
                d[0][3] = avg3(a[0], a[1], a[2]);
                d[0][2] = avg3(x, a[0], a[1]);
                d[0][1] = avg3(l[0], x, a[0]);
                d[1][3] = d[0][1];
                d[1][1] = avg3(l[1], l[0], x);
                d[2][3] = d[1][1];
                d[2][1] = avg3(l[2], l[1], l[0]);
                d[3][3] = d[2][1];
                d[3][1] = avg3(l[3], l[2], l[1]);
            },
            else => { // hu_pred
                d[0][0] = avg2(l[0], l[1]);
                d[0][2] = avg2(l[1], l[2]);
                d[1][0] = d[0][2];
                d[1][2] = avg2(l[2], l[3]);
                d[2][0] = d[1][2];
                d[0][1] = avg3(l[0], l[1], l[2]);
                d[0][3] = avg3(l[1], l[2], l[3]);
                d[1][1] = d[0][3];
                d[1][3] = avg3(l[2], l[3], l[3]);
                d[2][1] = d[1][3];
                d[2][2] = l[3];
                d[2][3] = l[3];
                d[3] = @splat(l[3]);
            },
        }
        for (0..4) |y| @memcpy(buf[at + y * bps ..][0..4], &d[y]);
    }

    /// The modes of one macroblock from the first partition (RFC 6386 sections 11.2-11.4):
    /// `top` (4 subblock modes of the macroblock above) and `left` are updated as contexts.
    const Modes = struct {
        segment: u8 = 0,
        skip: bool = false,
        i4: bool = false,
        y: [16]u8 = @splat(dc_pred),
        uv: u8 = dc_pred,
    };

    fn modes(br: *Bool, f: *const Frame, top: []u8, left: *[4]u8) Modes {
        var m = Modes{};
        if (f.update_map) {
            m.segment = if (!br.bit(f.segment_probs[0]))
                @intFromBool(br.bit(f.segment_probs[1]))
            else
                2 + @as(u8, @intFromBool(br.bit(f.segment_probs[2])));
        }
        if (f.skip_prob) |prob| m.skip = br.bit(prob);
        m.i4 = !br.bit(145);
        if (!m.i4) {
            const mode: u8 = if (br.bit(156))
                (if (br.bit(128)) tm_pred else he_pred)
            else
                (if (br.bit(163)) ve_pred else dc_pred);
            m.y[0] = mode;
            @memset(top[0..4], mode);
            left.* = @splat(mode);
        } else {
            for (0..4) |y| {
                var mode = left[y];
                for (0..4) |x| {
                    const p = bmode_probs[(@as(usize, top[x]) * 10 + mode) * 9 ..][0..9];
                    mode = if (!br.bit(p[0]))
                        dc_pred
                    else if (!br.bit(p[1]))
                        tm_pred
                    else if (!br.bit(p[2]))
                        ve_pred
                    else if (!br.bit(p[3]))
                        (if (!br.bit(p[4])) he_pred else if (!br.bit(p[5])) rd_pred else vr_pred)
                    else if (!br.bit(p[6]))
                        ld_pred
                    else if (!br.bit(p[7]))
                        vl_pred
                    else if (!br.bit(p[8]))
                        hd_pred
                    else
                        hu_pred;
                    top[x] = mode;
                    m.y[y * 4 + x] = mode;
                }
                left[y] = mode;
            }
        }
        m.uv = if (!br.bit(142)) dc_pred else if (!br.bit(114)) ve_pred else if (br.bit(183)) tm_pred else he_pred;
        return m;
    }

    /// The residual tokens of one macroblock into `coeffs` (blocks 0-15 luma, 16-19 U, 20-23 V,
    /// dequantized); `top` and `left` hold the non-zero contexts (4 luma, 2 U, 2 V, then Y2).
    /// Returns whether any block has coefficients (libwebp's test, which the loop filter's
    /// inner edges follow).
    fn residuals(br: *Bool, f: *const Frame, m: Modes, top: []u8, left: *[9]u8, coeffs: *[25][16]i16) bool {
        const q = f.quant[m.segment];
        var coded = false;
        var first: usize = 0;
        var t: usize = 3;
        if (!m.i4) {
            const n = coefficients(br, f, 1, @as(usize, top[8]) + left[8], q.y2, 0, &coeffs[24]);
            top[8] = @intFromBool(n > 0);
            left[8] = top[8];
            if (n > 1) {
                wht(&coeffs[24], coeffs);
            } else {
                const dc: i16 = @truncate((@as(i32, coeffs[24][0]) + 3) >> 3);
                for (0..16) |b| coeffs[b][0] = dc;
            }
            first = 1;
            t = 0;
        }
        for (0..4) |y| for (0..4) |x| {
            const b = y * 4 + x;
            const n = coefficients(br, f, t, @as(usize, top[x]) + left[y], q.y1, first, &coeffs[b]);
            top[x] = @intFromBool(n > first);
            left[y] = top[x];
            coded = coded or n > 1 or coeffs[b][0] != 0;
        };
        for (0..2) |c| for (0..2) |y| for (0..2) |x| {
            const b = 16 + c * 4 + y * 2 + x;
            const at = 4 + c * 2;
            const n = coefficients(br, f, 2, @as(usize, top[at + x]) + left[at + y], q.uv, 0, &coeffs[b]);
            top[at + x] = @intFromBool(n > 0);
            left[at + y] = top[at + x];
            coded = coded or n > 1 or coeffs[b][0] != 0;
        };
        return coded;
    }

    /// The planes in `work`: Y (`ys` bytes a row), U and V (`cs`), then one filter byte per
    /// macroblock and the row-above contexts.
    fn Planes(comptime height: usize, comptime width: usize) type {
        return struct {
            const mbw = (width + 15) / 16;
            const mbh = (height + 15) / 16;
            const ys = mbw * 16;
            const cs = mbw * 8;
            const y_at = 0;
            const u_at = ys * mbh * 16;
            const v_at = u_at + cs * mbh * 8;
            const info_at = v_at + cs * mbh * 8;
            const modes_at = info_at + mbw * mbh;
            const nz_at = modes_at + 4 * mbw;
            const end = nz_at + 9 * mbw;
        };
    }

    /// Predict one macroblock and add its residuals, reading its edges from the unfiltered
    /// planes (127 above the frame, 129 left of it) and writing it back into them.
    fn reconstruct(comptime P: type, work: []u8, mx: usize, my: usize, m: Modes, coeffs: *const [25][16]i16) void {
        var buf: [17 * bps]u8 = undefined;
        const ya = P.y_at + my * 16 * P.ys + mx * 16;
        // The row above (with the corner and 4 pixels to the right) and the column to the left.
        for (0..21) |k| {
            buf[origin - bps - 1 + k] = if (my == 0) 127 else if (k == 0 and mx == 0) 129 else if (k <= 16 or mx + 1 < P.mbw)
                work[ya - P.ys - 1 + k]
            else
                work[ya - P.ys + 15];
        }
        for (0..16) |y| buf[origin + y * bps - 1] = if (mx == 0) 129 else work[ya + y * P.ys - 1];
        if (m.i4) {
            // The subblocks of the right column take the pixels right of the macroblock above.
            for (1..4) |k| @memcpy(buf[origin + (4 * k - 1) * bps + 16 ..][0..4], buf[origin - bps + 16 ..][0..4]);
            for (0..16) |b| {
                const at = origin + (b / 4) * 4 * bps + (b % 4) * 4;
                predictSubblock(&buf, at, m.y[b]);
                idctAdd(&coeffs[b], buf[at..], bps);
            }
        } else {
            predictBlock(&buf, 16, m.y[0], my > 0, mx > 0);
            for (0..16) |b| idctAdd(&coeffs[b], buf[origin + (b / 4) * 4 * bps + (b % 4) * 4 ..], bps);
        }
        for (0..16) |y| @memcpy(work[ya + y * P.ys ..][0..16], buf[origin + y * bps ..][0..16]);
        for (0..2) |c| {
            const ca = (if (c == 0) P.u_at else P.v_at) + my * 8 * P.cs + mx * 8;
            var cbuf: [9 * bps]u8 = undefined;
            for (0..9) |k| {
                cbuf[origin - bps - 1 + k] = if (my == 0) 127 else if (k == 0 and mx == 0) 129 else work[ca - P.cs - 1 + k];
            }
            for (0..8) |y| cbuf[origin + y * bps - 1] = if (mx == 0) 129 else work[ca + y * P.cs - 1];
            predictBlock(&cbuf, 8, m.uv, my > 0, mx > 0);
            for (0..4) |b| idctAdd(&coeffs[16 + c * 4 + b], cbuf[origin + (b / 2) * 4 * bps + (b % 2) * 4 ..], bps);
            for (0..8) |y| @memcpy(work[ca + y * P.cs ..][0..8], cbuf[origin + y * bps ..][0..8]);
        }
    }

    // The loop filter (RFC 6386 section 15) as libwebp computes it, on a plane `s` around the
    // edge between `at - step` and `at`.

    fn sclamp(v: i32, low: i32, high: i32) i32 {
        return @min(@max(v, low), high);
    }

    fn abs(v: i32) i32 {
        return if (v < 0) -v else v;
    }

    fn tap(s: []u8, at: usize, step: usize, k: i32) i32 {
        const i: usize = if (k < 0) at - @as(usize, @intCast(-k)) * step else at + @as(usize, @intCast(k)) * step;
        return s[i];
    }

    fn put(s: []u8, at: usize, step: usize, k: i32, v: i32) void {
        const i: usize = if (k < 0) at - @as(usize, @intCast(-k)) * step else at + @as(usize, @intCast(k)) * step;
        s[i] = clip8(v);
    }

    fn filter2(s: []u8, at: usize, step: usize) void {
        const p1 = tap(s, at, step, -2);
        const p0 = tap(s, at, step, -1);
        const q0 = tap(s, at, step, 0);
        const q1 = tap(s, at, step, 1);
        const a = 3 * (q0 - p0) + sclamp(p1 - q1, -128, 127);
        const a1 = sclamp((a + 4) >> 3, -16, 15);
        const a2 = sclamp((a + 3) >> 3, -16, 15);
        put(s, at, step, -1, p0 + a2);
        put(s, at, step, 0, q0 - a1);
    }

    fn filter4(s: []u8, at: usize, step: usize) void {
        const p1 = tap(s, at, step, -2);
        const p0 = tap(s, at, step, -1);
        const q0 = tap(s, at, step, 0);
        const q1 = tap(s, at, step, 1);
        const a = 3 * (q0 - p0);
        const a1 = sclamp((a + 4) >> 3, -16, 15);
        const a2 = sclamp((a + 3) >> 3, -16, 15);
        const a3 = (a1 + 1) >> 1;
        put(s, at, step, -2, p1 + a3);
        put(s, at, step, -1, p0 + a2);
        put(s, at, step, 0, q0 - a1);
        put(s, at, step, 1, q1 - a3);
    }

    fn filter6(s: []u8, at: usize, step: usize) void {
        const p2 = tap(s, at, step, -3);
        const p1 = tap(s, at, step, -2);
        const p0 = tap(s, at, step, -1);
        const q0 = tap(s, at, step, 0);
        const q1 = tap(s, at, step, 1);
        const q2 = tap(s, at, step, 2);
        const a = sclamp(3 * (q0 - p0) + sclamp(p1 - q1, -128, 127), -128, 127);
        const a1 = (27 * a + 63) >> 7;
        const a2 = (18 * a + 63) >> 7;
        const a3 = (9 * a + 63) >> 7;
        put(s, at, step, -3, p2 + a3);
        put(s, at, step, -2, p1 + a2);
        put(s, at, step, -1, p0 + a1);
        put(s, at, step, 0, q0 - a1);
        put(s, at, step, 1, q1 - a2);
        put(s, at, step, 2, q2 - a3);
    }

    fn edgeSmall(s: []u8, at: usize, step: usize, t: i32) bool {
        return 4 * abs(tap(s, at, step, -1) - tap(s, at, step, 0)) + abs(tap(s, at, step, -2) - tap(s, at, step, 1)) <= t;
    }

    fn interiorSmall(s: []u8, at: usize, step: usize, it: i32) bool {
        var k: i32 = -4;
        while (k < 3) : (k += 1) {
            if (k == -1) continue; // the edge itself
            if (abs(tap(s, at, step, k) - tap(s, at, step, k + 1)) > it) return false;
        }
        return true;
    }

    fn highVariance(s: []u8, at: usize, step: usize, t: i32) bool {
        return abs(tap(s, at, step, -2) - tap(s, at, step, -1)) > t or abs(tap(s, at, step, 1) - tap(s, at, step, 0)) > t;
    }

    /// `n` positions along an edge (`along` apart), each filtered across it (`step`): the simple
    /// filter, or the normal one with the macroblock-edge (6-tap) or subblock (4-tap) adjustment.
    fn edge(s: []u8, at: usize, step: usize, along: usize, n: usize, simple: bool, outer: bool, limit: i32, fl: Filter) void {
        const t = 2 * limit + 1;
        for (0..n) |k| {
            const here = at + k * along;
            if (simple) {
                if (edgeSmall(s, here, step, t)) filter2(s, here, step);
            } else if (edgeSmall(s, here, step, t) and interiorSmall(s, here, step, fl.inner_limit)) {
                if (highVariance(s, here, step, fl.hev)) {
                    filter2(s, here, step);
                } else if (outer) {
                    filter6(s, here, step);
                } else {
                    filter4(s, here, step);
                }
            }
        }
    }

    /// The loop filter of every macroblock in raster order: left edge, inner vertical edges,
    /// top edge, inner horizontal edges (chroma too unless the filter is simple).
    fn loopFilter(comptime P: type, work: []u8, f: *const Frame) void {
        for (0..P.mbh) |my| for (0..P.mbw) |mx| {
            const info = work[P.info_at + my * P.mbw + mx];
            const fl = f.filters[info & 3][(info >> 2) & 1];
            const inner = (info & 12) != 0;
            if (fl.limit == 0) continue;
            for (0..3) |c| {
                if (c > 0 and f.simple) break;
                const n: usize = if (c == 0) 16 else 8;
                const stride = if (c == 0) P.ys else P.cs;
                const base = if (c == 0) P.y_at else if (c == 1) P.u_at else P.v_at;
                const at = base + my * n * stride + mx * n;
                const plane = work[base .. base + stride * P.mbh * n];
                const a = at - base;
                if (mx > 0) edge(plane, a, 1, stride, n, f.simple, true, fl.limit + 4, fl);
                if (inner) {
                    var x: usize = 4;
                    while (x < n) : (x += 4) edge(plane, a + x, 1, stride, n, f.simple, false, fl.limit, fl);
                }
                if (my > 0) edge(plane, a, stride, 1, n, f.simple, true, fl.limit + 4, fl);
                if (inner) {
                    var y: usize = 4;
                    while (y < n) : (y += 4) edge(plane, a + y * stride, stride, 1, n, f.simple, false, fl.limit, fl);
                }
            }
        };
    }

    /// libwebp's YUV -> RGB (src/dsp/yuv.h): 8.8 fixed-point products, 6 fraction bits kept.
    fn mulHi(v: i32, c: i32) i32 {
        return (v * c) >> 8;
    }

    fn clipRgb(v: i32) u32 {
        return if (v & ~@as(i32, 0x3FFF) == 0) @intCast(v >> 6) else if (v < 0) 0 else 255;
    }

    fn rgb(y: i32, u: i32, v: i32) [3]u32 {
        return .{
            clipRgb(mulHi(y, 19077) + mulHi(v, 26149) - 14234),
            clipRgb(mulHi(y, 19077) - mulHi(u, 6419) - mulHi(v, 13320) + 8708),
            clipRgb(mulHi(y, 19077) + mulHi(u, 33050) - 17685),
        };
    }

    /// libwebp's "fancy" upsampling of one chroma sample for pixel column `x` of an output row
    /// made from chroma rows `near` (the closer) and `far`: between columns, the two-step
    /// rounding of its UpsampleRgbLinePair; at the left edge (and the right one of an even
    /// width) only the vertical (3 near + far) / 4.
    fn chroma(plane: []const u8, near: usize, far: usize, x: usize, width: usize) i32 {
        const k = (x + 1) / 2; // the chroma column right of the pixel's pair boundary
        if (x == 0 or (x == width - 1 and width % 2 == 0)) {
            const c = if (x == 0) 0 else k - 1;
            return (3 * @as(i32, plane[near + c]) + plane[far + c] + 2) >> 2;
        }
        // Columns k - 1 and k; the pixel's own column is k - 1 for odd x, k for even x.
        const own = if (x % 2 == 1) k - 1 else k;
        const other = if (x % 2 == 1) k else k - 1;
        const n: i32 = plane[near + own];
        const side: i32 = plane[near + other];
        const below: i32 = plane[far + own];
        const diag: i32 = plane[far + other];
        const sum = n + side + below + diag + 8;
        return (((sum + 2 * (side + below)) >> 3) + n) >> 1;
    }

    /// The RIFF file in `data` (its size checked against the input, bytes after it cut off) and
    /// where its 'VP8 ' chunk starts: the first chunk, or, in an extended file ('VP8X', canvas of
    /// the compiled size, not animated), the first after its optional chunks (ALPH, ICCP, EXIF,
    /// XMP ..., each skipped with its pad byte; alpha is not decoded). A lossless 'VP8L' frame
    /// is refused.
    fn frameChunk(data: []const u8, comptime height: usize, comptime width: usize) Bad!struct { bytes: []const u8, at: usize } {
        if (data.len < 20) return error.Bad;
        if (!std.mem.eql(u8, data[0..4], "RIFF") or !std.mem.eql(u8, data[8..12], "WEBP")) return error.Bad;
        const riff = le(data[4..8]);
        if (riff < 12 or riff > data.len - 8) return error.Bad;
        const file = data[0 .. riff + 8];
        var at: usize = 12;
        if (std.mem.eql(u8, file[12..16], "VP8X")) {
            if (file.len < 30 or le(file[16..20]) != 10) return error.Bad;
            if (file[20] & 0x02 != 0) return error.Bad; // animation
            if (le(file[24..27]) + 1 != width or le(file[27..30]) + 1 != height) return error.Bad;
            at = 30;
            // Each step moves at least 8 bytes on: at most file.len / 8 chunks.
            while (file.len - at >= 8 and !std.mem.eql(u8, file[at..][0..4], "VP8 ")) {
                if (std.mem.eql(u8, file[at..][0..4], "VP8L")) return error.Bad;
                const size = le(file[at + 4 ..][0..4]);
                if (size > file.len - at - 8) return error.Bad;
                at += 8 + size;
                if (size % 2 == 1) at += 1; // chunks are padded to an even size
                if (at > file.len) return error.Bad;
            }
        }
        if (file.len - at < 8 or !std.mem.eql(u8, file[at..][0..4], "VP8 ")) return error.Bad;
        return .{ .bytes = file, .at = at };
    }

    fn decode(
        comptime height: usize,
        comptime width: usize,
        comptime format: ZantImageFormat,
        data: []const u8,
        out: []u8,
        work: []u8,
    ) Bad!void {
        const P = Planes(height, width);
        // The RIFF container: "RIFF", its size, "WEBP", then the 'VP8 ' chunk.
        const file = try frameChunk(data, height, width);
        const chunk = le(file.bytes[file.at + 4 ..][0..4]);
        if (chunk > file.bytes.len - file.at - 8) return error.Bad;
        const vp8 = file.bytes[file.at + 8 ..][0..chunk];
        // The frame tag and the key frame header (RFC 6386 section 9.1).
        if (vp8.len < 10) return error.Bad;
        const tag = le(vp8[0..3]);
        if (tag & 1 != 0 or (tag >> 1) & 7 > 3 or (tag >> 4) & 1 == 0) return error.Bad;
        const first_size = tag >> 5;
        if (vp8[3] != 0x9D or vp8[4] != 0x01 or vp8[5] != 0x2A) return error.Bad;
        if (le(vp8[6..8]) & 0x3FFF != width or le(vp8[8..10]) & 0x3FFF != height) return error.Bad;
        if (first_size > vp8.len - 10) return error.Bad;
        var br = Bool.init(vp8[10..][0..first_size]);
        const rest = vp8[10 + first_size ..];
        _ = br.flag(); // colour space
        _ = br.flag(); // clamping type
        // Segments (section 9.3).
        var f = Frame{};
        var seg_quant: [4]i32 = @splat(0);
        var seg_level: [4]i32 = @splat(0);
        var absolute = true; // libwebp's default when the segment data is not updated
        const segmented = br.flag();
        if (segmented) {
            f.update_map = br.flag();
            if (br.flag()) {
                absolute = br.flag();
                for (&seg_quant) |*q| q.* = br.optional(7);
                for (&seg_level) |*l| l.* = br.optional(6);
            }
            if (f.update_map) for (&f.segment_probs) |*p| {
                p.* = if (br.flag()) @intCast(br.literal(8)) else 255;
            };
        }
        if (br.exhausted) return error.Bad;
        // The loop filter's header (section 9.6).
        f.simple = br.flag();
        const level = br.literal(6);
        const sharpness = br.literal(3);
        var ref_delta: i32 = 0;
        var mode_delta: i32 = 0;
        if (br.flag() and br.flag()) {
            for (0..4) |k| if (br.flag()) {
                const v = br.signed(6);
                if (k == 0) ref_delta = v; // intra frame
            };
            for (0..4) |k| if (br.flag()) {
                const v = br.signed(6);
                if (k == 0) mode_delta = v; // B_PRED
            };
        }
        if (br.exhausted) return error.Bad;
        f.filtered = level != 0;
        // The token partitions (section 9.5): the sizes of all but the last, then their bytes.
        const count: usize = @as(usize, 1) << @intCast(br.literal(2));
        if (rest.len < 3 * (count - 1)) return error.Bad;
        var parts: [8]Bool = undefined;
        var start = 3 * (count - 1);
        for (0..count - 1) |k| {
            const size = @min(le(rest[3 * k ..][0..3]), rest.len - start);
            parts[k] = Bool.init(rest[start..][0..size]);
            start += size;
        }
        if (start >= rest.len) return error.Bad;
        parts[count - 1] = Bool.init(rest[start..]);
        // Quantizers (section 9.6, 14.1).
        const base = br.literal(7);
        const deltas = [5]i32{ br.optional(4), br.optional(4), br.optional(4), br.optional(4), br.optional(4) };
        for (0..4) |s| {
            const q = if (!segmented) base else if (absolute) seg_quant[s] else seg_quant[s] + base;
            var y2ac: i32 = (@as(i32, ac_table[clampIndex(q + deltas[2], 127)]) * 101581) >> 16;
            if (y2ac < 8) y2ac = 8;
            f.quant[s] = .{
                .y1 = .{ dc_table[clampIndex(q + deltas[0], 127)], ac_table[clampIndex(q, 127)] },
                .y2 = .{ @as(i32, dc_table[clampIndex(q + deltas[1], 127)]) * 2, y2ac },
                .uv = .{ dc_table[clampIndex(q + deltas[3], 117)], ac_table[clampIndex(q + deltas[4], 127)] },
            };
        }
        _ = br.flag(); // refresh_entropy_probs: one frame
        for (0..f.probs.len) |k| {
            if (br.bit(coeff_updates[k])) f.probs[k] = @intCast(br.literal(8));
        }
        if (br.flag()) f.skip_prob = @intCast(br.literal(8));
        // Filter strengths per segment and per 4x4 (1) or 16x16 (0) prediction.
        for (0..4) |s| for (0..2) |kind| {
            var lv = if (!segmented) level else if (absolute) seg_level[s] else seg_level[s] + level;
            lv += ref_delta;
            if (kind == 1) lv += mode_delta;
            lv = sclamp(lv, 0, 63);
            var inner = lv;
            if (sharpness > 0) {
                inner >>= if (sharpness > 4) 2 else 1;
                inner = @min(inner, 9 - sharpness);
            }
            inner = @max(inner, 1);
            f.filters[s][kind] = if (lv == 0 or !f.filtered) .{} else .{
                .limit = 2 * lv + inner,
                .inner_limit = inner,
                .hev = if (lv >= 40) 2 else if (lv >= 15) 1 else 0,
            };
        };
        // The macroblocks.
        const top_modes = work[P.modes_at..][0 .. 4 * P.mbw];
        const top_nz = work[P.nz_at..][0 .. 9 * P.mbw];
        @memset(top_modes, dc_pred);
        @memset(top_nz, 0);
        for (0..P.mbh) |my| {
            var left_modes: [4]u8 = @splat(dc_pred);
            var left_nz: [9]u8 = @splat(0);
            const tokens = &parts[my & (count - 1)];
            for (0..P.mbw) |mx| {
                const m = modes(&br, &f, top_modes[4 * mx ..][0..4], &left_modes);
                var coeffs: [25][16]i16 = @splat(@splat(0));
                var coded = false;
                const tnz = top_nz[9 * mx ..][0..9];
                if (m.skip) {
                    @memset(tnz[0..8], 0);
                    @memset(left_nz[0..8], 0);
                    if (!m.i4) {
                        tnz[8] = 0;
                        left_nz[8] = 0;
                    }
                } else {
                    coded = residuals(tokens, &f, m, tnz, &left_nz, &coeffs);
                }
                if (tokens.exhausted) return error.Bad;
                work[P.info_at + my * P.mbw + mx] = m.segment | @as(u8, @intFromBool(m.i4)) << 2 | @as(u8, @intFromBool(coded)) << 3;
                reconstruct(P, work, mx, my, m, &coeffs);
            }
            if (br.exhausted) return error.Bad;
        }
        if (f.filtered) loopFilter(P, work, &f);
        // Colour: libwebp's fancy upsampler row by row (row 0 and the last row of an even
        // height use one chroma row twice).
        const channels: usize = if (format == .gray) 1 else 3;
        for (0..height) |y| {
            const c = y / 2;
            const last = (height + 1) / 2 - 1;
            const near_row = if (y == 0) 0 else if (y % 2 == 1) (y - 1) / 2 else c;
            const far_row = if (y == 0) 0 else if (y % 2 == 1) @min((y + 1) / 2, last) else c - 1;
            for (0..width) |x| {
                const u = chroma(work[P.u_at..][0 .. P.cs * P.mbh * 8], near_row * P.cs, far_row * P.cs, x, width);
                const v = chroma(work[P.v_at..][0 .. P.cs * P.mbh * 8], near_row * P.cs, far_row * P.cs, x, width);
                const luma: i32 = work[P.y_at + y * P.ys + x];
                zant_image_pixel(format, out[(y * width + x) * channels ..][0..channels], rgb(luma, u, v), null);
            }
        }
    }
};

/// Decode the `size` bytes at `data` into `out` (height x width x 3, or x 1 for .gray); false,
/// with `out` untouched, unless they are a lossy WebP of that size that ZantWebp reads.
/// `work` (`work_size` bytes) holds its planes and contexts.
fn zant_webp_decode(
    comptime height: usize,
    comptime width: usize,
    comptime format: ZantImageFormat,
    comptime size: usize,
    comptime work_size: usize,
    data: *const u8,
    out: *u8,
    work: *u8,
) bool {
    return zant_image_decode(ZantWebp, zant_webp_work_bytes(height, width), height, width, format, size, work_size, data, out, work);
}
