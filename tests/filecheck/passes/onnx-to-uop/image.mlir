// RUN: zant-opt %s -p onnx-to-uop --split-input-file | filecheck %s

// ImageDecoder of 102 bytes to a [3, 5, 3] image. BMP: the header's fields at fixed offsets
// (the offset of the pixels, u32 at byte 10, may leave 102 - 16·3 = 54 bytes before them; rows
// of 16 bytes, walked up (-16) when the height is positive). PPM: one loop parses the header
// over bytes [2, 102 - 45): nine parser registers, read and written once per byte. JPEG:
// image.decode_jpeg of the 102 bytes into the output, its planes (3·16·16 bytes) and Huffman
// tables (8·273) in a scratch buffer (true only for a baseline JPEG of 3 x 5; the output is
// written only then); PNG: image.decode_png the same way, its scratch the inflated rows
// (3·(1 + 4·5) bytes); TIFF: image.decode_tiff (one unused scratch byte); JPEG 2000:
// image.decode_jp2, its scratch three i32 planes (12·15), a line (4·5), the flags of a code block
// (2·7·5), one precinct's blocks (18·6) and tag trees (24·76), 4 bytes of alignment: 2,206; WebP:
// image.decode_webp, its scratch the Y, U and V planes of one macroblock (384), its filter byte
// and one column's 13 context bytes: 398. Then
// one check (STATUS_OUTPUT_SIZE = 5) that one of the seven is the format, and one loop nest picks
// each channel from where the header said, or stores the decoded byte back after a decoder.

// CHECK-LABEL: func.func @main()
// CHECK:         %rgb = uop.define_global "output" 0 "rgb" : !uop.buffer<45xui8>
// CHECK:         %rgb_jpeg_work = uop.define_local "rgb_jpeg_work" : !uop.buffer<2952xui8>
// CHECK-NEXT:    %rgb_png_work = uop.define_local "rgb_png_work" : !uop.buffer<63xui8>
// CHECK-NEXT:    %rgb_tiff_work = uop.define_local "rgb_tiff_work" : !uop.buffer<1xui8>
// CHECK-NEXT:    %rgb_jp2_work = uop.define_local "rgb_jp2_work" : !uop.buffer<2206xui8>
// CHECK-NEXT:    %rgb_webp_work = uop.define_local "rgb_webp_work" : !uop.buffer<398xui8>
// CHECK:         [[ROOM:%.*]] = uop.const 54 : i64
// CHECK-NEXT:    [[FITS:%.*]] = uop.cmple [[OFFSET:%.*]], [[ROOM]] : i64
// CHECK:         [[FIRST:%.*]] = uop.where [[BOTTOM_UP:%.*]], {{%.*}}, [[OFFSET]] : i64
// CHECK-NEXT:    [[UP:%.*]] = uop.const -16 : i64
// CHECK-NEXT:    [[DOWN:%.*]] = uop.const 16 : i64
// CHECK-NEXT:    [[ROW_STEP:%.*]] = uop.where [[BOTTOM_UP]], [[UP]], [[DOWN]] : i64
// CHECK-COUNT-9: uop.define_acc 0 : i64
// CHECK-NEXT:    uop.range [[I:%.*]] = 2 to 57 {
// CHECK-COUNT-9:   uop.acc_get
// CHECK-NEXT:      [[AT:%.*]] = uop.gep %data[[[I]]]
// CHECK-COUNT-9:   uop.acc_set
// CHECK-NEXT:    }
// CHECK-NOT:     uop.store
// CHECK:         uop.const 255 : i64
// CHECK:         [[BYTES:%.*]] = uop.gep %data[{{%.*}}] : !uop.buffer<102xui8>
// CHECK:         [[PIXELS:%.*]] = uop.gep %rgb[{{%.*}}] : !uop.buffer<45xui8>
// CHECK:         [[WORK:%.*]] = uop.gep %rgb_jpeg_work[{{%.*}}] : !uop.buffer<2952xui8>
// CHECK-NEXT:    [[JPEG:%.*]] = image.decode_jpeg [[BYTES]], [[PIXELS]], [[WORK]] {height = 3 : i64, width = 5 : i64, format = "rgb", size = 102 : i64}
// CHECK:         [[ROWS:%.*]] = uop.gep %rgb_png_work[{{%.*}}] : !uop.buffer<63xui8>
// CHECK-NEXT:    [[PNG:%.*]] = image.decode_png {{%.*}}, {{%.*}}, [[ROWS]] {height = 3 : i64, width = 5 : i64, format = "rgb", size = 102 : i64}
// CHECK:         [[TIFF:%.*]] = image.decode_tiff {{%.*}}, {{%.*}}, {{%.*}} {height = 3 : i64, width = 5 : i64, format = "rgb", size = 102 : i64}
// CHECK:         [[JP2:%.*]] = image.decode_jp2 {{%.*}}, {{%.*}}, {{%.*}} {height = 3 : i64, width = 5 : i64, format = "rgb", size = 102 : i64}
// CHECK:         [[WEBP_WORK:%.*]] = uop.gep %rgb_webp_work[{{%.*}}] : !uop.buffer<398xui8>
// CHECK-NEXT:    [[WEBP:%.*]] = image.decode_webp {{%.*}}, {{%.*}}, [[WEBP_WORK]] {height = 3 : i64, width = 5 : i64, format = "rgb", size = 102 : i64}
// CHECK:         [[ANY:%.*]] = uop.or {{%.*}}, [[WEBP]] : i1
// CHECK-NEXT:    abi.check [[ANY]], 5
// CHECK-NEXT:    [[EITHER:%.*]] = uop.or [[JPEG]], [[PNG]] : i1
// CHECK-NEXT:    [[THREE:%.*]] = uop.or [[EITHER]], [[TIFF]] : i1
// CHECK-NEXT:    [[FOUR:%.*]] = uop.or [[THREE]], [[JP2]] : i1
// CHECK-NEXT:    [[DECODED:%.*]] = uop.or [[FOUR]], [[WEBP]] : i1
// CHECK-NEXT:    uop.where [[IS_BMP:%.*]], [[FIRST]], {{%.*}} : i64
// CHECK-NEXT:    uop.where [[IS_BMP]], [[ROW_STEP]], {{%.*}} : i64
// CHECK-NEXT:    uop.range {{%.*}} = 0 to 3 {
// CHECK:           uop.range {{%.*}} = 0 to 5 {
// CHECK-COUNT-3:     uop.where [[DECODED]], {{%.*}}, {{%.*}} : ui8
// CHECK-NEXT:        uop.gep {{%.*}}[{{%.*}}, {{%.*}}, {{%.*}}] : !uop.view<3x5x3xui8
// CHECK-NEXT:        uop.store {{%.*}}, {{%.*}} : ui8
// CHECK-NOT:         uop.store
func.func @main(%data: tensor<102xui8>) -> tensor<3x5x3xui8> attributes {onnx.input_names = ["data"], onnx.output_names = ["rgb"]} {
  %rgb = onnx.ImageDecoder(%data) {pixel_format = "RGB"} : (tensor<102xui8>) -> tensor<3x5x3xui8>
  func.return %rgb : tensor<3x5x3xui8>
}

// -----

// Grayscale: one channel, PIL's convert("L") of the RGB (19595 R + 38470 G + 7471 B + 2^15) >> 16
// for BMP and PPM; the JPEG decoder computes the same from its RGB ("gray").

// CHECK-LABEL: func.func @main()
// CHECK:         image.decode_jpeg {{.*}} {height = 3 : i64, width = 5 : i64, format = "gray", size = 102 : i64}
// CHECK:         image.decode_png {{.*}} {height = 3 : i64, width = 5 : i64, format = "gray", size = 102 : i64}
// CHECK:         abi.check {{%.*}}, 5
// CHECK:         uop.const 19595 : i64
// CHECK:         uop.const 38470 : i64
// CHECK:         uop.const 7471 : i64
// CHECK:         [[HALF:%.*]] = uop.const 32768 : i64
// CHECK-NEXT:    [[ROUNDED:%.*]] = uop.add {{%.*}}, [[HALF]] : i64
// CHECK-NEXT:    [[SIXTEEN:%.*]] = uop.const 16 : i64
// CHECK-NEXT:    [[LUMA:%.*]] = uop.shr [[ROUNDED]], [[SIXTEEN]] : i64
// CHECK-NEXT:    uop.cast [[LUMA]] : i64 to ui8
// CHECK-COUNT-1:     uop.store {{%.*}}, {{%.*}} : ui8
// CHECK-NOT:         uop.store
func.func @main(%data: tensor<102xui8>) -> tensor<3x5x1xui8> attributes {onnx.input_names = ["data"], onnx.output_names = ["gray"]} {
  %gray = onnx.ImageDecoder(%data) {pixel_format = "Grayscale"} : (tensor<102xui8>) -> tensor<3x5x1xui8>
  func.return %gray : tensor<3x5x1xui8>
}
