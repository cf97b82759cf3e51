// RUN: %python %inputs/make_model.py mlp %t.onnx
// RUN: zant-opt %t.onnx -p 'fold-qdq,fold-constants,fold-batchnorm,dce,onnx-to-uop{conv-lanes=16 conv-tile=6},fuse-loops,coalesce-loops,split-index-sets{width=16},vectorize{width=16},dce,plan-arenas,verify-arena-plan,fold-constant-loads,mark-inbounds,contract-mulacc,expand-float-minmax,linearize-geps' --check-each-pass -t 'zig{name=net}' | filecheck %s
// RUN: zant-opt %t.onnx -p 'fold-qdq,fold-constants,fold-batchnorm,dce,onnx-to-uop{conv-channel-block=4},fuse-loops,dce,plan-arenas,verify-arena-plan,fold-constant-loads,mark-inbounds,contract-mulacc,expand-float-minmax,linearize-geps,arm-dsp-dot' --check-each-pass --check-seed 3 -t 'zig{name=net}' | filecheck %s
// RUN: zant-opt %t.onnx -p fold-constants,dce --check-each-pass 2>&1 >/dev/null | filecheck %s --check-prefix=NONE --allow-empty

// From an .onnx file, --check-each-pass interprets the module from the first pass on: the
// onnx-level folds by the ONNX reference evaluator, onnx-to-uop (onnx result against uop
// result), and every later pass of the host's and the Cortex-M4's pipelines (vectorize,
// plan-arenas, arm-dsp-dot …) keeps the MLP's result.

// CHECK: export fn net_predict(

// Passes at the onnx level only are checked too: no note.
// NONE-NOT: note
