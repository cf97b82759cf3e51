// RUN: zant-opt %s --split-input-file --verify-diagnostics

builtin.module {
  func.func @main() {
    %b = uop.define_global "input" 0 "x" : !uop.buffer<64xui8>
    %i = uop.const 0 : index
    %p = uop.gep %b[%i] : !uop.buffer<64xui8>
    // expected-error@+1 {{decode_jpeg writes one of rgb, bgr, gray, got 'cmyk'}}
    %ok = image.decode_jpeg %p, %p, %p {height = 2 : i64, width = 2 : i64, format = "cmyk", size = 64 : i64} : !uop.ptr<ui8>, !uop.ptr<ui8>, !uop.ptr<ui8>
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %b = uop.define_global "input" 0 "x" : !uop.buffer<64xui8>
    %i = uop.const 0 : index
    %p = uop.gep %b[%i] : !uop.buffer<64xui8>
    // expected-error@+1 {{decode_jpeg decodes images of 1 to 65535 rows and columns, got 0 x 2}}
    %ok = image.decode_jpeg %p, %p, %p {height = 0 : i64, width = 2 : i64, format = "rgb", size = 64 : i64} : !uop.ptr<ui8>, !uop.ptr<ui8>, !uop.ptr<ui8>
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %b = uop.define_global "input" 0 "x" : !uop.buffer<64xf32>
    %c = uop.define_global "input" 1 "y" : !uop.buffer<64xui8>
    %i = uop.const 0 : index
    %p = uop.gep %b[%i] : !uop.buffer<64xf32>
    %q = uop.gep %c[%i] : !uop.buffer<64xui8>
    // expected-error@+1 {{decode_jpeg's data holds bytes, got a pointer to f32}}
    %ok = image.decode_jpeg %p, %q, %q {height = 2 : i64, width = 2 : i64, format = "rgb", size = 64 : i64} : !uop.ptr<f32>, !uop.ptr<ui8>, !uop.ptr<ui8>
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %b = uop.define_global "input" 0 "x" : !uop.buffer<64xui8>
    %i = uop.const 0 : index
    %p = uop.gep %b[%i] : !uop.buffer<64xui8>
    // expected-error@+1 {{decode_png writes one of rgb, bgr, gray, got 'rgba'}}
    %ok = image.decode_png %p, %p, %p {height = 2 : i64, width = 2 : i64, format = "rgba", size = 64 : i64} : !uop.ptr<ui8>, !uop.ptr<ui8>, !uop.ptr<ui8>
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %b = uop.define_global "input" 0 "x" : !uop.buffer<64xui8>
    %i = uop.const 0 : index
    %p = uop.gep %b[%i] : !uop.buffer<64xui8>
    // expected-error@+1 {{decode_jp2 decodes images of 1 to 65535 rows and columns, got 2 x 65536}}
    %ok = image.decode_jp2 %p, %p, %p {height = 2 : i64, width = 65536 : i64, format = "gray", size = 64 : i64} : !uop.ptr<ui8>, !uop.ptr<ui8>, !uop.ptr<ui8>
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %b = uop.define_global "input" 0 "x" : !uop.buffer<64xui8>
    %i = uop.const 0 : index
    %p = uop.gep %b[%i] : !uop.buffer<64xui8>
    // expected-error@+1 {{decode_webp writes one of rgb, bgr, gray, got 'rgba'}}
    %ok = image.decode_webp %p, %p, %p {height = 2 : i64, width = 2 : i64, format = "rgba", size = 64 : i64} : !uop.ptr<ui8>, !uop.ptr<ui8>, !uop.ptr<ui8>
    func.return
  }
}
