// RUN: zant-opt %s -p 'onnx-to-uop{image-formats=webp}' | filecheck %s
// RUN: zant-opt %s -p 'onnx-to-uop{image-formats=jpeg,png}' | filecheck %s --check-prefix=TWO
// RUN: not zant-opt %s -p 'onnx-to-uop{image-formats=gif}' 2>&1 | filecheck %s --check-prefix=UNKNOWN

// onnx-to-uop's image-formats option: ImageDecoder decodes only the compressed formats it names
// (each one's decoder is code in the model), BMP and PPM still read by the copy loops; the check
// and the copy-back test the decoders that are there.

// CHECK-LABEL: func.func @main()
// CHECK-NOT:     image.decode_jpeg
// CHECK-NOT:     _jpeg_work
// CHECK:         %rgb_webp_work = uop.define_local "rgb_webp_work" : !uop.buffer<398xui8>
// CHECK:         [[WEBP:%.*]] = image.decode_webp {{%.*}}, {{%.*}}, {{%.*}} {height = 3 : i64, width = 5 : i64, format = "rgb", size = 102 : i64}
// CHECK-NEXT:    [[BMP_OR_PPM:%.*]] = uop.or {{%.*}}, {{%.*}} : i1
// CHECK-NEXT:    [[ANY:%.*]] = uop.or [[BMP_OR_PPM]], [[WEBP]] : i1
// CHECK-NEXT:    abi.check [[ANY]], 5
// CHECK-NOT:     image.decode_
// CHECK:         uop.where [[WEBP]], {{%.*}}, {{%.*}} : ui8

// TWO-LABEL: func.func @main()
// TWO:         image.decode_jpeg
// TWO:         image.decode_png
// TWO-NOT:     image.decode_
// TWO:         abi.check

// UNKNOWN: onnx-to-uop: image-formats names jpeg, png, tiff, jp2, webp; got gif
func.func @main(%data: tensor<102xui8>) -> tensor<3x5x3xui8> attributes {onnx.input_names = ["data"], onnx.output_names = ["rgb"]} {
  %rgb = onnx.ImageDecoder(%data) {pixel_format = "RGB"} : (tensor<102xui8>) -> tensor<3x5x3xui8>
  func.return %rgb : tensor<3x5x3xui8>
}
