// RUN: zant-opt %s | filecheck %s
// RUN: zant-opt %s | zant-opt | filecheck %s
// RUN: zant-opt %s --print-op-generic | zant-opt | filecheck %s

// CHECK-LABEL: func.func @main()
// CHECK:         %ok = image.decode_jpeg %pd, %po, %pw {height = 13 : i64, width = 21 : i64, format = "rgb", size = 1280 : i64} : !uop.ptr<ui8>, !uop.ptr<ui8>, !uop.ptr<ui8>
// CHECK-NEXT:    %g = image.decode_jpeg %pd, %pg, %pw {height = 13 : i64, width = 21 : i64, format = "gray", size = 1280 : i64} : !uop.ptr<ui8>, !uop.ptr<ui8>, !uop.ptr<ui8>
// CHECK-NEXT:    %p = image.decode_png %pd, %po, %pw {height = 13 : i64, width = 21 : i64, format = "bgr", size = 1280 : i64} : !uop.ptr<ui8>, !uop.ptr<ui8>, !uop.ptr<ui8>
// CHECK-NEXT:    %t = image.decode_tiff %pd, %pg, %pw {height = 13 : i64, width = 21 : i64, format = "gray", size = 1280 : i64} : !uop.ptr<ui8>, !uop.ptr<ui8>, !uop.ptr<ui8>
// CHECK-NEXT:    %j = image.decode_jp2 %pd, %po, %pw {height = 13 : i64, width = 21 : i64, format = "rgb", size = 1280 : i64} : !uop.ptr<ui8>, !uop.ptr<ui8>, !uop.ptr<ui8>
// CHECK-NEXT:    %w = image.decode_webp %pd, %pg, %pw {height = 13 : i64, width = 21 : i64, format = "gray", size = 1280 : i64} : !uop.ptr<ui8>, !uop.ptr<ui8>, !uop.ptr<ui8>

builtin.module {
  func.func @main() {
    %data = uop.define_global "input" 0 "data" : !uop.buffer<1280xui8>
    %out = uop.define_global "output" 0 "rgb" : !uop.buffer<819xui8>
    %gray = uop.define_global "output" 1 "gray" : !uop.buffer<273xui8>
    %work = uop.define_local "planes" : !uop.buffer<1536xui8>
    %i = uop.const 0 : index
    %pd = uop.gep %data[%i] : !uop.buffer<1280xui8>
    %po = uop.gep %out[%i] : !uop.buffer<819xui8>
    %pg = uop.gep %gray[%i] : !uop.buffer<273xui8>
    %pw = uop.gep %work[%i] : !uop.buffer<1536xui8>
    %ok = image.decode_jpeg %pd, %po, %pw {height = 13 : i64, width = 21 : i64, format = "rgb", size = 1280 : i64} : !uop.ptr<ui8>, !uop.ptr<ui8>, !uop.ptr<ui8>
    %g = image.decode_jpeg %pd, %pg, %pw {height = 13 : i64, width = 21 : i64, format = "gray", size = 1280 : i64} : !uop.ptr<ui8>, !uop.ptr<ui8>, !uop.ptr<ui8>
    %p = image.decode_png %pd, %po, %pw {height = 13 : i64, width = 21 : i64, format = "bgr", size = 1280 : i64} : !uop.ptr<ui8>, !uop.ptr<ui8>, !uop.ptr<ui8>
    %t = image.decode_tiff %pd, %pg, %pw {height = 13 : i64, width = 21 : i64, format = "gray", size = 1280 : i64} : !uop.ptr<ui8>, !uop.ptr<ui8>, !uop.ptr<ui8>
    %j = image.decode_jp2 %pd, %po, %pw {height = 13 : i64, width = 21 : i64, format = "rgb", size = 1280 : i64} : !uop.ptr<ui8>, !uop.ptr<ui8>, !uop.ptr<ui8>
    %w = image.decode_webp %pd, %pg, %pw {height = 13 : i64, width = 21 : i64, format = "gray", size = 1280 : i64} : !uop.ptr<ui8>, !uop.ptr<ui8>, !uop.ptr<ui8>
    func.return
  }
}
