// RUN: zant-opt %s -p onnx-to-uop | filecheck %s

// ImageDecoder of 102 bytes to a [3, 5, 3] image. BMP: the header's fields at fixed offsets
// (the offset of the pixels, u32 at byte 10, may leave 102 - 16·3 = 54 bytes before them; rows
// of 16 bytes, walked up (-16) when the height is positive). PPM: one loop parses the header
// over bytes [2, 102 - 45): nine parser registers, read and written once per byte. Then one
// check (STATUS_OUTPUT_SIZE = 5) before anything is written, and one loop nest picks each
// channel from where the header said.

// CHECK-LABEL: func.func @main()
// CHECK:         %rgb = uop.define_global "output" 0 "rgb" : !uop.buffer<45xui8>
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
// CHECK:         abi.check [[OK:%.*]], 5
// CHECK-NEXT:    uop.where [[IS_BMP:%.*]], [[FIRST]], {{%.*}} : i64
// CHECK-NEXT:    uop.where [[IS_BMP]], [[ROW_STEP]], {{%.*}} : i64
// CHECK-NEXT:    uop.range {{%.*}} = 0 to 3 {
// CHECK:           uop.range {{%.*}} = 0 to 5 {
// CHECK-COUNT-3:     uop.store {{%.*}}, {{%.*}} : ui8
// CHECK-NOT:         uop.store
func.func @main(%data: tensor<102xui8>) -> tensor<3x5x3xui8> attributes {onnx.input_names = ["data"], onnx.output_names = ["rgb"]} {
  %rgb = onnx.ImageDecoder(%data) {pixel_format = "RGB"} : (tensor<102xui8>) -> tensor<3x5x3xui8>
  func.return %rgb : tensor<3x5x3xui8>
}
