// RUN: zant-opt %s | zant-opt | filecheck %s
// RUN: zant-opt %s --print-op-generic | zant-opt | filecheck %s
// RUN: zant-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// Storage floats (bfloat16, float8) are converted to and from f32 by uop.cast (float8:
// saturating, ONNX Cast's default) and uop.cast_unsaturated (float8 only: out of range is Inf
// or NaN); buffers of them load and store their bits.

// CHECK-LABEL: func.func @casts
// CHECK-NEXT:    %a = uop.cast %x : f32 to bf16
// CHECK-NEXT:    %b = uop.cast %a : bf16 to f32
// CHECK-NEXT:    %c = uop.cast %x : f32 to f8E4M3FN
// CHECK-NEXT:    %d = uop.cast_unsaturated %x : f32 to f8E4M3FNUZ
// CHECK-NEXT:    %e = uop.cast_unsaturated %x : f32 to f8E5M2
// CHECK-NEXT:    %f = uop.cast_unsaturated %x : f32 to f8E5M2FNUZ
// CHECK-NEXT:    %g = uop.cast %f : f8E5M2FNUZ to f32
// CHECK-NEXT:    func.return

// GENERIC: %d = "uop.cast_unsaturated"(%x) : (f32) -> f8E4M3FNUZ

builtin.module {
  func.func @casts(%x: f32) {
    %a = uop.cast %x : f32 to bf16
    %b = uop.cast %a : bf16 to f32
    %c = uop.cast %x : f32 to f8E4M3FN
    %d = uop.cast_unsaturated %x : f32 to f8E4M3FNUZ
    %e = uop.cast_unsaturated %x : f32 to f8E5M2
    %f = uop.cast_unsaturated %x : f32 to f8E5M2FNUZ
    %g = uop.cast %f : f8E5M2FNUZ to f32
    func.return
  }
}
