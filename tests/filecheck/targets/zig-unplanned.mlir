// RUN: not zant-opt %s -t zig 2>&1 | filecheck %s

// The target prints what the passes decided: it refuses a module without an arena plan and
// names the pass to run, instead of planning it itself.

// CHECK: zant-opt: error: the zig target prints a planned module: run the plan-arenas pass first (zant-opt -p plan-arenas -t zig)

builtin.module {
  func.func @main() {
    %y = uop.define_global "output" 0 "y" : !uop.buffer<4xf32>
    %t = uop.define_local "t" : !uop.buffer<4xf32>
    func.return
  }
}
