// RUN: zant-opt %s --load-passes %examples/passes/hoist_constants.py -p example-hoist-constants | filecheck %s
// RUN: not zant-opt %s -p example-hoist-constants 2>&1 | filecheck %s --check-prefix=UNLOADED
// RUN: not zant-opt %s --load-passes %examples/passes/no_such_file.py -p example-hoist-constants 2>&1 | filecheck %s --check-prefix=MISSING

// The example out-of-tree pass (examples/passes/hoist_constants.py), loaded from its file:
// literals leave both loops; the loads, stores and arithmetic stay where they were.

// CHECK-LABEL: func.func @main() {
// CHECK-NEXT:    %x = uop.define_global "input" 0 "x" : !uop.buffer<6xf32>
// CHECK-NEXT:    %y = uop.define_global "output" 0 "y" : !uop.buffer<6xf32>
// CHECK-NEXT:    %three = uop.const 3 : index
// CHECK-NEXT:    %c = uop.const 1.500000e+00 : f32
// CHECK-NEXT:    uop.range %i = 0 to 2 {
// CHECK-NEXT:      %row = uop.mul %i, %three : index
// CHECK-NEXT:      uop.range %j = 0 to 3 {
// CHECK-NEXT:        %k = uop.add %row, %j : index
// CHECK-NEXT:        %p = uop.gep %x[%k] : !uop.buffer<6xf32>
// CHECK-NEXT:        %a = uop.load %p : f32
// CHECK-NEXT:        %s = uop.mul %a, %c : f32
// CHECK-NEXT:        %q = uop.gep %y[%k] : !uop.buffer<6xf32>
// CHECK-NEXT:        uop.store %s, %q : f32
// CHECK-NEXT:      }
// CHECK-NEXT:    }

// UNLOADED: zant-opt: error: invalid pass pipeline {{.*}}: unknown pass 'example-hoist-constants' ({{.*}}one written outside Zant needs --load-passes FILE.py)
// MISSING: zant-opt: error: cannot load passes from '{{.*}}no_such_file.py': no such file

func.func @main() {
  %x = uop.define_global "input" 0 "x" : !uop.buffer<6xf32>
  %y = uop.define_global "output" 0 "y" : !uop.buffer<6xf32>
  uop.range %i = 0 to 2 {
    %three = uop.const 3 : index
    %row = uop.mul %i, %three : index
    uop.range %j = 0 to 3 {
      %k = uop.add %row, %j : index
      %p = uop.gep %x[%k] : !uop.buffer<6xf32>
      %a = uop.load %p : f32
      %c = uop.const 1.500000e+00 : f32
      %s = uop.mul %a, %c : f32
      %q = uop.gep %y[%k] : !uop.buffer<6xf32>
      uop.store %s, %q : f32
    }
  }
  func.return
}
