// RUN: zant-opt %s --split-input-file --verify-diagnostics

builtin.module {
  func.func @main() {
    %b = uop.define_global "input" 0 "x" : !uop.buffer<8xi32>
    %i = uop.const 0 : index
    %p = uop.gep inbounds %b[%i] : !uop.buffer<8xi32>
    // expected-error@+1 {{load_word reads int8 or int16 elements, got a pointer to i32}}
    %w = arm_dsp.load_word %p : !uop.ptr<i32>
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %c = uop.const 7 : i32
    // expected-error@+1 {{sxtb16 rotates by 0, 8, 16 or 24 bits, got 4}}
    %s = arm_dsp.sxtb16 %c ror 4 : i32
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %c = uop.const 7 : i32
    // expected-error@+1 {{smla multiplies halves bb, bt, tb or tt, got 'bx'}}
    %s = arm_dsp.smla %c, %c, %c {halves = "bx"} : i32
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %c = uop.const 7 : i16
    // expected-error@+1 {{operand 'input' at position 0 does not verify}}
    %s = arm_dsp.sxtb16 %c : i16
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %c = uop.const 7 : i32
    %d = uop.const 7 : i64
    // expected-error@+1 {{operand 'addend' at position 2 does not verify}}
    %r = "arm_dsp.smlad"(%c, %c, %d) : (i32, i32, i64) -> i32
    func.return
  }
}


// -----

builtin.module {
  func.func @main() {
    %c = uop.const 7 : i32
    %w = uop.const 7 : i16
    // expected-error@+1 {{operand 'word' at position 2 does not verify}}
    %r = "arm_dsp.smlad_bytes"(%c, %c, %w, %c) : (i32, i32, i16, i32) -> i32
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %c = uop.const 7 : i32
    %w = uop.const 7 : i16
    // expected-error@+1 {{operand 'word' at position 4 does not verify}}
    %r0, %r1 = "arm_dsp.smlad_bytes_pair"(%c, %c, %c, %c, %w, %c, %c) : (i32, i32, i32, i32, i16, i32, i32) -> (i32, i32)
    func.return
  }
}
