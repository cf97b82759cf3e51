// RUN: %python %inputs/make_model.py qoperator %t.onnx
// RUN: zant-opt %t.onnx -p 'fold-qoperator,fold-qdq,fold-constants,fold-batchnorm,dce,onnx-to-uop,fuse-loops,dce,plan-arenas' --check-each-pass 2>&1 | filecheck %s --check-prefix=OK
// RUN: not zant-opt %t.onnx -p 'buggy-fold-qoperator,fold-qdq,dce' --check-each-pass --load-passes %inputs/buggy_fold_qoperator.py 2>&1 | filecheck %s --check-prefix=BUG

// --check-each-pass on onnxruntime's QOperator form (Inputs/make_model.py qoperator: every
// com.microsoft op fold-qoperator lowers): the imported module runs each com.microsoft op by its
// definition (DQ → float op → Q on the ONNX reference), so fold-qoperator's integer forms, then
// fold-qdq and the lowering, are each checked against it, with no module left unchecked (no
// note); a copy of fold-qoperator whose lookup tables are HardSigmoid's is named.

// OK-NOT: note
// OK:     func.func @main
// OK-NOT: onnx.QLinear
// OK-NOT: onnx.QGemm
// OK-NOT: note

// BUG: zant-opt: error: pass 'buggy-fold-qoperator' changed output 0: max abs diff {{[0-9.e+-]+}} at index {{[0-9]+}} (seed 0)
