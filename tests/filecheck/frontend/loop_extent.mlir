// RUN: %python %inputs/make_model.py loop_declared_extent %t.onnx && zant-opt %t.onnx | filecheck %s

// A Loop whose trip count `m` and condition `go` are graph inputs, its scan output `ys` declared
// [3, 2]: three copies of the body, behind an onnx.Guard that the loop runs exactly 3 times.
// The body passes its condition through (a constant true in each copy), so the graph inputs
// decide it: go and m == 3, checked before the first copy.

// CHECK:      func.func @main(%m: tensor<i64>, %go: tensor<i1>, %x: tensor<2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>)
// CHECK:        %n_extent = onnx.Constant() {value = dense<3> : tensor<i64>} : () -> tensor<i64>
// CHECK:        %n_equal = onnx.Equal(%m, %n_extent) : (tensor<i64>, tensor<i64>) -> tensor<i1>
// CHECK-NEXT:   %n_and = onnx.And(%go, %n_equal) : (tensor<i1>, tensor<i1>) -> tensor<i1>
// CHECK-NEXT:   onnx.Guard(%n_and) : (tensor<i1>) -> ()
// CHECK-NOT:    onnx.Guard
// CHECK:        %n_iter0_v_out = onnx.Add(%x, %x)
// CHECK:        %n_iter1_v_out = onnx.Add(%n_iter0_v_out, %n_iter0_v_out)
// CHECK:        %n_iter2_v_out = onnx.Add(%n_iter1_v_out, %n_iter1_v_out)
// CHECK-NOT:    onnx.Guard
// CHECK:        %ys = onnx.Concat(%n_unsqueeze, %n_unsqueeze_1, %n_unsqueeze_2) {axis = 0 : i64} : (tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:   func.return %y, %ys : tensor<2xf32>, tensor<3x2xf32>
