// RUN: not zant-opt %s -p 'vectorize{width=8}' 2>&1 | filecheck %s
// RUN: not zant-opt %s -p 'split-index-sets{width=8}' 2>&1 | filecheck %s --check-prefix=SPLIT
// RUN: zant-opt %s -p 'split-index-sets{width=16},vectorize{width=16}' | filecheck %s --check-prefix=SAME

// `onnx-to-uop{conv-lanes=16}` tiled the Convs of this module for 16 lanes (the module says
// so): a vector pass of another width refuses it.
// CHECK: zant-opt: error: vectorize{width=8} after onnx-to-uop{conv-lanes=16}: the Convs were tiled for 16 lanes
// SPLIT: zant-opt: error: split-index-sets{width=8} after onnx-to-uop{conv-lanes=16}
// SAME: builtin.module attributes {uop.conv_lanes = 16 : i64}

builtin.module attributes {"uop.conv_lanes" = 16 : i64} {
}
