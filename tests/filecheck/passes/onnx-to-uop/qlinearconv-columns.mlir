// RUN: zant-opt %s --split-input-file -p 'onnx-to-uop{conv-word-taps=true}' | filecheck %s
// RUN: zant-opt %s --split-input-file -p onnx-to-uop | filecheck %s --check-prefix=OFF

// With conv-word-taps (the Cortex-M4's pipeline), an int8 pointwise Conv with constant weights
// takes the column form (conv_columns.py). Small weights (here 16 bytes, cached anyway): per
// block of 2 pixels (in H·W order, the last block
// overlapping the one before when H·W is odd: min(2b, H·W - 2)), X's channels are copied into
// the column buffer [2][C], then 2 output channels x 2 pixels accumulate over it, both operands
// contiguous int8 (the word loads of arm-dsp-dot), and each output is requantized and stored.

// CHECK-LABEL: func.func @main
// CHECK:         %y_columns = uop.define_local "y_columns" : !uop.buffer<8xi8>
// CHECK:         %[[X:.*]] = uop.view %x : !uop.buffer<12xi8> -> !uop.view<1x4x3xi8, strides [12, 3, 1], offset 0>
// CHECK:         %[[COL:.*]] = uop.view %y_columns : !uop.buffer<8xi8> -> !uop.view<2x4xi8, strides [4, 1], offset 0>
// CHECK:         %[[W:.*]] = uop.view %w : !uop.buffer<16xi8> -> !uop.view<4x4x1x1xi8
// CHECK:         %[[Y:.*]] = uop.view %y : !uop.buffer<12xi8> -> !uop.view<1x4x3xi8, strides [12, 3, 1], offset 0>
// CHECK:         uop.range %[[N:.*]] = 0 to 1 {
// CHECK-NEXT:      uop.range %[[B:.*]] = 0 to 2 {
// CHECK-NEXT:        %[[TWO:.*]] = uop.const 2 : index
// CHECK-NEXT:        %[[P2:.*]] = uop.mul %[[B]], %[[TWO]] : index
// CHECK-NEXT:        %[[LAST:.*]] = uop.const 1 : index
// CHECK-NEXT:        %[[P0:.*]] = uop.min %[[P2]], %[[LAST]] : index
// CHECK-NEXT:        %[[ONE:.*]] = uop.const 1 : index
// CHECK-NEXT:        %[[P1:.*]] = uop.add %[[P0]], %[[ONE]] : index
// CHECK-NEXT:        uop.range %[[C:.*]] = 0 to 4 {
// CHECK-NEXT:          %{{.*}} = uop.gep %[[X]][%[[N]], %[[C]], %[[P0]]]
// CHECK-NEXT:          %[[X0:.*]] = uop.load
// CHECK:               %[[AT0:.*]] = uop.gep %[[COL]][%{{.*}}, %[[C]]]
// CHECK-NEXT:          uop.store %[[X0]], %[[AT0]] : i8
// CHECK-NEXT:          %{{.*}} = uop.gep %[[X]][%[[N]], %[[C]], %[[P1]]]
// CHECK-NEXT:          %[[X1:.*]] = uop.load
// CHECK:               %[[AT1:.*]] = uop.gep %[[COL]][%{{.*}}, %[[C]]]
// CHECK-NEXT:          uop.store %[[X1]], %[[AT1]] : i8
// CHECK-NEXT:        }
// CHECK-NEXT:        uop.range %[[M:.*]] = 0 to 4 step 2 {
// CHECK:               %[[A00:.*]] = uop.define_acc 0 : i32
// CHECK-NEXT:          %[[A01:.*]] = uop.define_acc 0 : i32
// CHECK-NEXT:          %[[A10:.*]] = uop.define_acc 0 : i32
// CHECK-NEXT:          %[[A11:.*]] = uop.define_acc 0 : i32
// CHECK-NEXT:          uop.range %[[K:.*]] = 0 to 4 {
// CHECK:                 uop.gep %[[COL]][%{{.*}}, %[[K]]]
// CHECK:                 uop.gep %[[COL]][%{{.*}}, %[[K]]]
// CHECK:                 uop.gep %[[W]][%[[M]], %[[K]],
// CHECK:                 uop.gep %[[W]][%{{.*}}, %[[K]],
// CHECK:                 uop.mulacc %[[A00]]
// CHECK-NEXT:            uop.mulacc %[[A01]]
// CHECK-NEXT:            uop.mulacc %[[A10]]
// CHECK-NEXT:            uop.mulacc %[[A11]]
// CHECK-NEXT:          }
// CHECK:               uop.gep %[[Y]][%[[N]], %[[M]], %[[P0]]]
// CHECK:               uop.gep %[[Y]][%[[N]], %[[M]], %[[P1]]]
// CHECK:               uop.gep %[[Y]][%[[N]], %{{.*}}, %[[P0]]]
// CHECK:               uop.gep %[[Y]][%[[N]], %{{.*}}, %[[P1]]]
// CHECK:         func.return

// Without it (the host, the Helium cores), the gathered form: no column.
// OFF-LABEL: func.func @main
// OFF-NOT:       columns
// OFF:           func.return
func.func @main(%x: tensor<1x4x1x3xi8>) -> tensor<1x4x1x3xi8> {
  %xs = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<[[[[1]], [[2]], [[3]], [[4]]], [[[-1]], [[5]], [[0]], [[7]]], [[[2]], [[2]], [[-8]], [[1]]], [[[9]], [[-3]], [[1]], [[1]]]]> : tensor<4x4x1x1xi8>} : () -> tensor<4x4x1x1xi8>
  %ws = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %wz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.2> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-5> : tensor<i8>} : () -> tensor<i8>
  %y = onnx.QLinearConv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz) : (tensor<1x4x1x3xi8>, tensor<f32>, tensor<i8>, tensor<4x4x1x1xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x4x1x3xi8>
  func.return %y : tensor<1x4x1x3xi8>
}

// -----

// Weights too large to stay in a small data cache (66 x 4 = 264 bytes) over rows short enough to
// (4 channels): the column holds up to 16 pixels (here all 5), and each pair of weight rows is
// read once per column by a loop over the column's pixel pairs (3: the last, min(2j, 3),
// overlapping the one before since 5 is odd).
// CHECK-LABEL: func.func @wide
// CHECK:         %y_columns = uop.define_local "y_columns" : !uop.buffer<20xi8>
// CHECK:         %[[X:.*]] = uop.view %x : !uop.buffer<20xi8> -> !uop.view<1x4x5xi8, strides [20, 5, 1], offset 0>
// CHECK:         %[[COL:.*]] = uop.view %y_columns : !uop.buffer<20xi8> -> !uop.view<5x4xi8, strides [4, 1], offset 0>
// CHECK:         %[[Y:.*]] = uop.view %y : !uop.buffer<330xi8> -> !uop.view<1x66x5xi8, strides [330, 5, 1], offset 0>
// CHECK:         uop.range %[[N:.*]] = 0 to 1 {
// CHECK-NEXT:      uop.range %[[B:.*]] = 0 to 1 {
// CHECK-NEXT:        %[[FIVE:.*]] = uop.const 5 : index
// CHECK-NEXT:        %[[P:.*]] = uop.mul %[[B]], %[[FIVE]] : index
// CHECK-NEXT:        uop.range %[[C:.*]] = 0 to 4 {
// CHECK-NEXT:          uop.range %[[J:.*]] = 0 to 5 {
// CHECK-NEXT:            %[[AT:.*]] = uop.add %[[P]], %[[J]] : index
// CHECK-NEXT:            %{{.*}} = uop.gep %[[X]][%[[N]], %[[C]], %[[AT]]]
// CHECK-NEXT:            %[[V:.*]] = uop.load
// CHECK-NEXT:            %[[TO:.*]] = uop.gep %[[COL]][%[[J]], %[[C]]]
// CHECK-NEXT:            uop.store %[[V]], %[[TO]] : i8
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// CHECK-NEXT:        uop.range %[[M:.*]] = 0 to 66 step 2 {
// CHECK-NEXT:          uop.range %[[PAIR:.*]] = 0 to 3 {
// CHECK-NEXT:            %[[TWO:.*]] = uop.const 2 : index
// CHECK-NEXT:            %[[J2:.*]] = uop.mul %[[PAIR]], %[[TWO]] : index
// CHECK-NEXT:            %[[LAST:.*]] = uop.const 3 : index
// CHECK-NEXT:            %[[J0:.*]] = uop.min %[[J2]], %[[LAST]] : index
// CHECK-NEXT:            %[[ONE:.*]] = uop.const 1 : index
// CHECK-NEXT:            %[[J1:.*]] = uop.add %[[J0]], %[[ONE]] : index
// CHECK-NEXT:            %[[P0:.*]] = uop.add %[[P]], %[[J0]] : index
// CHECK-NEXT:            %[[P1:.*]] = uop.add %[[P]], %[[J1]] : index
// CHECK:                 uop.range %[[K:.*]] = 0 to 4 {
// CHECK-NEXT:              %{{.*}} = uop.gep %[[COL]][%[[J0]], %[[K]]]
// CHECK:                   %{{.*}} = uop.gep %[[COL]][%[[J1]], %[[K]]]
// CHECK:                   uop.mulacc
// CHECK-NEXT:              uop.mulacc
// CHECK-NEXT:              uop.mulacc
// CHECK-NEXT:              uop.mulacc
// CHECK-NEXT:            }
// CHECK:                 uop.gep %[[Y]][%[[N]], %[[M]], %[[P0]]]
// CHECK:                 uop.gep %[[Y]][%[[N]], %[[M]], %[[P1]]]
// CHECK:         func.return
func.func @wide(%x: tensor<1x4x1x5xi8>) -> tensor<1x66x1x5xi8> {
  %xs = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<[[[[-9]], [[-4]], [[1]], [[6]]], [[[-2]], [[3]], [[8]], [[-6]]], [[[5]], [[-9]], [[-4]], [[1]]], [[[-7]], [[-2]], [[3]], [[8]]], [[[0]], [[5]], [[-9]], [[-4]]], [[[7]], [[-7]], [[-2]], [[3]]], [[[-5]], [[0]], [[5]], [[-9]]], [[[2]], [[7]], [[-7]], [[-2]]], [[[9]], [[-5]], [[0]], [[5]]], [[[-3]], [[2]], [[7]], [[-7]]], [[[4]], [[9]], [[-5]], [[0]]], [[[-8]], [[-3]], [[2]], [[7]]], [[[-1]], [[4]], [[9]], [[-5]]], [[[6]], [[-8]], [[-3]], [[2]]], [[[-6]], [[-1]], [[4]], [[9]]], [[[1]], [[6]], [[-8]], [[-3]]], [[[8]], [[-6]], [[-1]], [[4]]], [[[-4]], [[1]], [[6]], [[-8]]], [[[3]], [[8]], [[-6]], [[-1]]], [[[-9]], [[-4]], [[1]], [[6]]], [[[-2]], [[3]], [[8]], [[-6]]], [[[5]], [[-9]], [[-4]], [[1]]], [[[-7]], [[-2]], [[3]], [[8]]], [[[0]], [[5]], [[-9]], [[-4]]], [[[7]], [[-7]], [[-2]], [[3]]], [[[-5]], [[0]], [[5]], [[-9]]], [[[2]], [[7]], [[-7]], [[-2]]], [[[9]], [[-5]], [[0]], [[5]]], [[[-3]], [[2]], [[7]], [[-7]]], [[[4]], [[9]], [[-5]], [[0]]], [[[-8]], [[-3]], [[2]], [[7]]], [[[-1]], [[4]], [[9]], [[-5]]], [[[6]], [[-8]], [[-3]], [[2]]], [[[-6]], [[-1]], [[4]], [[9]]], [[[1]], [[6]], [[-8]], [[-3]]], [[[8]], [[-6]], [[-1]], [[4]]], [[[-4]], [[1]], [[6]], [[-8]]], [[[3]], [[8]], [[-6]], [[-1]]], [[[-9]], [[-4]], [[1]], [[6]]], [[[-2]], [[3]], [[8]], [[-6]]], [[[5]], [[-9]], [[-4]], [[1]]], [[[-7]], [[-2]], [[3]], [[8]]], [[[0]], [[5]], [[-9]], [[-4]]], [[[7]], [[-7]], [[-2]], [[3]]], [[[-5]], [[0]], [[5]], [[-9]]], [[[2]], [[7]], [[-7]], [[-2]]], [[[9]], [[-5]], [[0]], [[5]]], [[[-3]], [[2]], [[7]], [[-7]]], [[[4]], [[9]], [[-5]], [[0]]], [[[-8]], [[-3]], [[2]], [[7]]], [[[-1]], [[4]], [[9]], [[-5]]], [[[6]], [[-8]], [[-3]], [[2]]], [[[-6]], [[-1]], [[4]], [[9]]], [[[1]], [[6]], [[-8]], [[-3]]], [[[8]], [[-6]], [[-1]], [[4]]], [[[-4]], [[1]], [[6]], [[-8]]], [[[3]], [[8]], [[-6]], [[-1]]], [[[-9]], [[-4]], [[1]], [[6]]], [[[-2]], [[3]], [[8]], [[-6]]], [[[5]], [[-9]], [[-4]], [[1]]], [[[-7]], [[-2]], [[3]], [[8]]], [[[0]], [[5]], [[-9]], [[-4]]], [[[7]], [[-7]], [[-2]], [[3]]], [[[-5]], [[0]], [[5]], [[-9]]], [[[2]], [[7]], [[-7]], [[-2]]], [[[9]], [[-5]], [[0]], [[5]]]]> : tensor<66x4x1x1xi8>} : () -> tensor<66x4x1x1xi8>
  %ws = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %wz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.2> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-5> : tensor<i8>} : () -> tensor<i8>
  %y = onnx.QLinearConv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz) : (tensor<1x4x1x5xi8>, tensor<f32>, tensor<i8>, tensor<66x4x1x1xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x66x1x5xi8>
  func.return %y : tensor<1x66x1x5xi8>
}

// -----

// Left in the gathered form: a single pixel (a Gemm's: no weight to reuse), a 3x3 window, an
// odd number of output channels.
// CHECK-LABEL: func.func @not_columns
// CHECK-NOT:     columns
// CHECK:         func.return
func.func @not_columns(%x: tensor<1x4x1x1xi8>, %z: tensor<1x4x3x3xi8>) -> (tensor<1x4x1x1xi8>, tensor<1x4x3x3xi8>, tensor<1x3x3x3xi8>) {
  %s = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %zp = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<[[[[1]], [[2]], [[3]], [[4]]], [[[-1]], [[5]], [[0]], [[7]]], [[[2]], [[2]], [[-8]], [[1]]], [[[9]], [[-3]], [[1]], [[1]]]]> : tensor<4x4x1x1xi8>} : () -> tensor<4x4x1x1xi8>
  %w3 = onnx.Constant() {value = dense<1> : tensor<4x4x3x3xi8>} : () -> tensor<4x4x3x3xi8>
  %w2 = onnx.Constant() {value = dense<[[[[1]], [[2]], [[3]], [[4]]], [[[-1]], [[5]], [[0]], [[7]]], [[[2]], [[2]], [[-8]], [[1]]]]> : tensor<3x4x1x1xi8>} : () -> tensor<3x4x1x1xi8>
  %a = onnx.QLinearConv(%x, %s, %zp, %w, %s, %zp, %s, %zp) : (tensor<1x4x1x1xi8>, tensor<f32>, tensor<i8>, tensor<4x4x1x1xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x4x1x1xi8>
  %b = onnx.QLinearConv(%z, %s, %zp, %w3, %s, %zp, %s, %zp) {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x3x3xi8>, tensor<f32>, tensor<i8>, tensor<4x4x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x4x3x3xi8>
  %c = onnx.QLinearConv(%z, %s, %zp, %w2, %s, %zp, %s, %zp) : (tensor<1x4x3x3xi8>, tensor<f32>, tensor<i8>, tensor<3x4x1x1xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x3x3x3xi8>
  func.return %a, %b, %c : tensor<1x4x1x1xi8>, tensor<1x4x3x3xi8>, tensor<1x3x3x3xi8>
}
