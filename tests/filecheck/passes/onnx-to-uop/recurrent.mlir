// RUN: zant-opt %s -p onnx-to-uop | filecheck %s

// A reverse LSTM (hidden size 1) returning Y and Y_c: X and Y are read and written through
// time-reversed views, the gates (i, o, f, c) are slices of W and R, the cell state is updated
// in place and the hidden state double-buffered.

// CHECK-LABEL: func.func @main()
// CHECK:         [[H:%.*]] = uop.define_local "y_h0" : !uop.buffer<1xf32>
// CHECK-NEXT:    [[HNEXT:%.*]] = uop.define_local "y_hnext0" : !uop.buffer<1xf32>
// CHECK-NEXT:    [[C:%.*]] = uop.define_local "y_c0" : !uop.buffer<1xf32>
// CHECK:         [[X:%.*]] = uop.view %x : !uop.buffer<4xf32> -> !uop.view<2x1x2xf32, strides [-2, 2, 1], offset 2>
// CHECK-NEXT:    [[WI:%.*]] = uop.view %w : !uop.buffer<8xf32> -> !uop.view<1x2xf32, strides [2, 1], offset 0>
// CHECK:         [[Y:%.*]] = uop.view %y : !uop.buffer<2xf32> -> !uop.view<2x1x1xf32, strides [-1, 1, 1], offset 1>
// CHECK:         uop.range [[T:%.*]] = 0 to 2 {
// CHECK-NEXT:      uop.range [[B:%.*]] = 0 to 1 {
// CHECK-NEXT:        uop.range [[J:%.*]] = 0 to 1 {
// CHECK:               [[ACC:%.*]] = uop.define_acc 0.000000e+00 : f32
// CHECK-NEXT:          uop.range [[K:%.*]] = 0 to 2 {
// CHECK-NEXT:            {{%.*}} = uop.gep [[X]][[[T]], [[B]], [[K]]]
// CHECK-NEXT:            {{%.*}} = uop.load
// CHECK-NEXT:            {{%.*}} = uop.gep [[WI]][[[J]], [[K]]]
// CHECK:                 uop.mulacc [[ACC]]
// CHECK:               uop.exp
// CHECK:               uop.tanh
// CHECK:               [[CNEW:%.*]] = uop.add {{%.*}}, {{%.*}} : f32
// CHECK:               uop.store [[CNEW]], {{%.*}} : f32
// CHECK-NEXT:          [[TC:%.*]] = uop.tanh [[CNEW]] : f32
// CHECK-NEXT:          [[HV:%.*]] = uop.mul {{%.*}}, [[TC]] : f32
// CHECK-NEXT:          {{%.*}} = uop.gep {{%.*}}[[[B]], [[J]]]
// CHECK-NEXT:          uop.store [[HV]], {{%.*}} : f32
// CHECK-NEXT:          {{%.*}} = uop.gep [[Y]][[[T]], [[B]], [[J]]]
// CHECK-NEXT:          uop.store [[HV]], {{%.*}} : f32
// CHECK:             uop.range
// CHECK:           }
// CHECK:           uop.range
func.func @main(%x: tensor<2x1x2xf32>, %w: tensor<1x4x2xf32>, %r: tensor<1x4x1xf32>) -> (tensor<2x1x1x1xf32>, tensor<1x1x1xf32>) attributes {onnx.input_names = ["x", "w", "r"], onnx.output_names = ["y", "y_c"]} {
  %y, %y_c = onnx.LSTM(%x, %w, %r) {hidden_size = 1 : i64, direction = "reverse"} : (tensor<2x1x2xf32>, tensor<1x4x2xf32>, tensor<1x4x1xf32>) -> (tensor<2x1x1x1xf32>, none, tensor<1x1x1xf32>)
  func.return %y, %y_c : tensor<2x1x1x1xf32>, tensor<1x1x1xf32>
}
