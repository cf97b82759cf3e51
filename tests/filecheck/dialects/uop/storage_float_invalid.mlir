// RUN: zant-opt %s --split-input-file --verify-diagnostics

// Verifier errors of the storage-float casts: to or from f32 only, scalars only, and
// uop.cast_unsaturated from f32 to a float8 type.

builtin.module {
  func.func @main(%x: f16) {
    // expected-error@+1 {{uop.cast converts bf16 to or from f32 only, got f16 to bf16}}
    %y = uop.cast %x : f16 to bf16
    func.return
  }
}

// -----

builtin.module {
  func.func @main(%x: f8E4M3FN) {
    // expected-error@+1 {{uop.cast converts f8E4M3FN to or from f32 only, got f8E4M3FN to i8}}
    %y = uop.cast %x : f8E4M3FN to i8
    func.return
  }
}

// -----

builtin.module {
  func.func @main(%x: vector<4xf32>) {
    // expected-error@+1 {{uop.cast of vectors must be lossless (float, int to float, or widening), got vector<4xf32> to vector<4xbf16>}}
    %y = uop.cast %x : vector<4xf32> to vector<4xbf16>
    func.return
  }
}

// -----

builtin.module {
  func.func @main(%x: f32) {
    // expected-error@+1 {{uop.cast_unsaturated converts f32 to a float8 type, got f32 to bf16}}
    %y = uop.cast_unsaturated %x : f32 to bf16
    func.return
  }
}

// -----

builtin.module {
  func.func @main(%x: f16) {
    // expected-error@+1 {{uop.cast_unsaturated converts f32 to a float8 type, got f16 to f8E5M2}}
    %y = uop.cast_unsaturated %x : f16 to f8E5M2
    func.return
  }
}

// -----

builtin.module {
  func.func @main(%x: bf16) {
    // expected-error@+1 {{uop.add does not compute on bf16: cast it to f32 first}}
    %y = uop.add %x, %x : bf16
    func.return
  }
}

// -----

builtin.module {
  func.func @main(%x: f8E4M3FN) {
    // expected-error@+1 {{uop.cmplt does not compute on f8E4M3FN: cast it to f32 first}}
    %y = uop.cmplt %x, %x : f8E4M3FN
    func.return
  }
}
