// RUN: zant-opt %s --split-input-file -p 'onnx-to-uop{conv-mve=true}' | filecheck %s
// RUN: zant-opt %s --split-input-file -p onnx-to-uop | filecheck %s --check-prefix=OFF

// On Helium cores (conv-mve, the Cortex-M55's pipeline) an int8 1x1 Conv over NCHW takes
// conv_pointwise_mve's form. Per output row (4), X's row (3 pixels of 16 channels, 12 bytes
// apart) is copied channels-last into the row buffer R[3, 16], 8 bytes at a time (mve-gather
// makes these gathers); then per block of 4 output channels (one, at 0) and pixel, four sums
// start at their channels' biases and run over the 16 contiguous channels of R and of W's
// rows, a loop mve-dot makes 16-byte loads and VMLAVA; each is requantized and stored. The 2
// channels left (4 and 5) are a block of their own, at constant channels.

// CHECK-LABEL: func.func @rows
// CHECK:         %y_row = uop.define_local "y_row" : !uop.buffer<48xi8>
// CHECK:         %[[R:.*]] = uop.view %y_row : !uop.buffer<48xi8> -> !uop.view<3x16xi8, strides [16, 1], offset 0>
// CHECK:         %[[W:.*]] = uop.view %w : !uop.buffer<96xi8> -> !uop.view<6x16xi8, strides [16, 1], offset 0>
// CHECK:         uop.range %[[N:.*]] = 0 to 1 {
// CHECK-NEXT:      uop.range %[[OY:.*]] = 0 to 4 {
// CHECK-NEXT:        uop.range %[[OX:.*]] = 0 to 3 {
// CHECK-NEXT:          uop.range %[[C:.*]] = 0 to 16 step 8 {
// CHECK-NEXT:            %[[FROM:.*]] = uop.gep %{{.*}}[%[[N]], %[[C]], %[[OY]], %[[OX]]]
// CHECK-NEXT:            %[[LINE:.*]] = uop.vload %[[FROM]] stride 12 : vector<8xi8>
// CHECK-NEXT:            %[[TO:.*]] = uop.gep %[[R]][%[[OX]], %[[C]]]
// CHECK-NEXT:            uop.vstore %[[LINE]], %[[TO]] : vector<8xi8>
// CHECK:             uop.range %[[M:.*]] = 0 to 4 step 4 {
// CHECK-NEXT:          uop.range %[[X:.*]] = 0 to 3 {
// CHECK-COUNT-4:         uop.define_acc 0 : i32
// CHECK:                 uop.range %[[K:.*]] = 0 to 16 {
// CHECK-NEXT:              %[[AT:.*]] = uop.gep %[[R]][%[[X]], %[[K]]]
// CHECK-NEXT:              %[[V:.*]] = uop.load %[[AT]] : i8
// CHECK-NEXT:              %[[WAT:.*]] = uop.gep %[[W]][%[[M]], %[[K]]]
// CHECK-COUNT-4:           uop.mulacc
// CHECK-NEXT:            }
// CHECK-COUNT-4:         uop.store
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// CHECK-NEXT:        uop.range %{{.*}} = 0 to 3 {
// CHECK-COUNT-2:       uop.define_acc 0 : i32
// CHECK:               uop.range %{{.*}} = 0 to 16 {
// CHECK-COUNT-2:         uop.mulacc
// CHECK-NEXT:          }
// CHECK-COUNT-2:       uop.store
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK:         func.return

// OFF-LABEL: func.func @rows
// OFF-NOT:       y_row
// OFF:           func.return
func.func @rows(%x: tensor<1x16x4x3xi8>) -> tensor<1x6x4x3xi8> {
  %xs = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<[[[[-6]], [[-5]], [[-4]], [[-3]], [[-2]], [[-1]], [[0]], [[1]], [[2]], [[3]], [[4]], [[5]], [[6]], [[-6]], [[-5]], [[-4]]], [[[-3]], [[-2]], [[-1]], [[0]], [[1]], [[2]], [[3]], [[4]], [[5]], [[6]], [[-6]], [[-5]], [[-4]], [[-3]], [[-2]], [[-1]]], [[[0]], [[1]], [[2]], [[3]], [[4]], [[5]], [[6]], [[-6]], [[-5]], [[-4]], [[-3]], [[-2]], [[-1]], [[0]], [[1]], [[2]]], [[[3]], [[4]], [[5]], [[6]], [[-6]], [[-5]], [[-4]], [[-3]], [[-2]], [[-1]], [[0]], [[1]], [[2]], [[3]], [[4]], [[5]]], [[[6]], [[-6]], [[-5]], [[-4]], [[-3]], [[-2]], [[-1]], [[0]], [[1]], [[2]], [[3]], [[4]], [[5]], [[6]], [[-6]], [[-5]]], [[[-4]], [[-3]], [[-2]], [[-1]], [[0]], [[1]], [[2]], [[3]], [[4]], [[5]], [[6]], [[-6]], [[-5]], [[-4]], [[-3]], [[-2]]]]> : tensor<6x16x1x1xi8>} : () -> tensor<6x16x1x1xi8>
  %ws = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %wz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.2> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-5> : tensor<i8>} : () -> tensor<i8>
  %y = onnx.QLinearConv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz) : (tensor<1x16x4x3xi8>, tensor<f32>, tensor<i8>, tensor<6x16x1x1xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x6x4x3xi8>
  func.return %y : tensor<1x6x4x3xi8>
}

// -----

// Not taken: a row larger than a quarter of X (3 rows of 4: 64 bytes of 192), one pixel (its
// channels are contiguous already), stride 2.

// CHECK-LABEL: func.func @large_row
// CHECK-NOT:     _row
// CHECK:         func.return
func.func @large_row(%x: tensor<1x16x3x4xi8>) -> tensor<1x6x3x4xi8> {
  %xs = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<[[[[-6]], [[-5]], [[-4]], [[-3]], [[-2]], [[-1]], [[0]], [[1]], [[2]], [[3]], [[4]], [[5]], [[6]], [[-6]], [[-5]], [[-4]]], [[[-3]], [[-2]], [[-1]], [[0]], [[1]], [[2]], [[3]], [[4]], [[5]], [[6]], [[-6]], [[-5]], [[-4]], [[-3]], [[-2]], [[-1]]], [[[0]], [[1]], [[2]], [[3]], [[4]], [[5]], [[6]], [[-6]], [[-5]], [[-4]], [[-3]], [[-2]], [[-1]], [[0]], [[1]], [[2]]], [[[3]], [[4]], [[5]], [[6]], [[-6]], [[-5]], [[-4]], [[-3]], [[-2]], [[-1]], [[0]], [[1]], [[2]], [[3]], [[4]], [[5]]], [[[6]], [[-6]], [[-5]], [[-4]], [[-3]], [[-2]], [[-1]], [[0]], [[1]], [[2]], [[3]], [[4]], [[5]], [[6]], [[-6]], [[-5]]], [[[-4]], [[-3]], [[-2]], [[-1]], [[0]], [[1]], [[2]], [[3]], [[4]], [[5]], [[6]], [[-6]], [[-5]], [[-4]], [[-3]], [[-2]]]]> : tensor<6x16x1x1xi8>} : () -> tensor<6x16x1x1xi8>
  %ws = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %wz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.2> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-5> : tensor<i8>} : () -> tensor<i8>
  %y = onnx.QLinearConv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz) : (tensor<1x16x3x4xi8>, tensor<f32>, tensor<i8>, tensor<6x16x1x1xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x6x3x4xi8>
  func.return %y : tensor<1x6x3x4xi8>
}

// -----

// CHECK-LABEL: func.func @one_pixel
// CHECK-NOT:     _row
// CHECK:         func.return
func.func @one_pixel(%x: tensor<1x16x1x1xi8>) -> tensor<1x6x1x1xi8> {
  %xs = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<[[[[-6]], [[-5]], [[-4]], [[-3]], [[-2]], [[-1]], [[0]], [[1]], [[2]], [[3]], [[4]], [[5]], [[6]], [[-6]], [[-5]], [[-4]]], [[[-3]], [[-2]], [[-1]], [[0]], [[1]], [[2]], [[3]], [[4]], [[5]], [[6]], [[-6]], [[-5]], [[-4]], [[-3]], [[-2]], [[-1]]], [[[0]], [[1]], [[2]], [[3]], [[4]], [[5]], [[6]], [[-6]], [[-5]], [[-4]], [[-3]], [[-2]], [[-1]], [[0]], [[1]], [[2]]], [[[3]], [[4]], [[5]], [[6]], [[-6]], [[-5]], [[-4]], [[-3]], [[-2]], [[-1]], [[0]], [[1]], [[2]], [[3]], [[4]], [[5]]], [[[6]], [[-6]], [[-5]], [[-4]], [[-3]], [[-2]], [[-1]], [[0]], [[1]], [[2]], [[3]], [[4]], [[5]], [[6]], [[-6]], [[-5]]], [[[-4]], [[-3]], [[-2]], [[-1]], [[0]], [[1]], [[2]], [[3]], [[4]], [[5]], [[6]], [[-6]], [[-5]], [[-4]], [[-3]], [[-2]]]]> : tensor<6x16x1x1xi8>} : () -> tensor<6x16x1x1xi8>
  %ws = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %wz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.2> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-5> : tensor<i8>} : () -> tensor<i8>
  %y = onnx.QLinearConv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz) : (tensor<1x16x1x1xi8>, tensor<f32>, tensor<i8>, tensor<6x16x1x1xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x6x1x1xi8>
  func.return %y : tensor<1x6x1x1xi8>
}

// -----

// CHECK-LABEL: func.func @strided
// CHECK-NOT:     _row
// CHECK:         func.return
func.func @strided(%x: tensor<1x16x8x6xi8>) -> tensor<1x6x4x3xi8> {
  %xs = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<[[[[-6]], [[-5]], [[-4]], [[-3]], [[-2]], [[-1]], [[0]], [[1]], [[2]], [[3]], [[4]], [[5]], [[6]], [[-6]], [[-5]], [[-4]]], [[[-3]], [[-2]], [[-1]], [[0]], [[1]], [[2]], [[3]], [[4]], [[5]], [[6]], [[-6]], [[-5]], [[-4]], [[-3]], [[-2]], [[-1]]], [[[0]], [[1]], [[2]], [[3]], [[4]], [[5]], [[6]], [[-6]], [[-5]], [[-4]], [[-3]], [[-2]], [[-1]], [[0]], [[1]], [[2]]], [[[3]], [[4]], [[5]], [[6]], [[-6]], [[-5]], [[-4]], [[-3]], [[-2]], [[-1]], [[0]], [[1]], [[2]], [[3]], [[4]], [[5]]], [[[6]], [[-6]], [[-5]], [[-4]], [[-3]], [[-2]], [[-1]], [[0]], [[1]], [[2]], [[3]], [[4]], [[5]], [[6]], [[-6]], [[-5]]], [[[-4]], [[-3]], [[-2]], [[-1]], [[0]], [[1]], [[2]], [[3]], [[4]], [[5]], [[6]], [[-6]], [[-5]], [[-4]], [[-3]], [[-2]]]]> : tensor<6x16x1x1xi8>} : () -> tensor<6x16x1x1xi8>
  %ws = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %wz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.2> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-5> : tensor<i8>} : () -> tensor<i8>
  %y = onnx.QLinearConv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz) {strides = array<i64: 2, 2>} : (tensor<1x16x8x6xi8>, tensor<f32>, tensor<i8>, tensor<6x16x1x1xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x6x4x3xi8>
  func.return %y : tensor<1x6x4x3xi8>
}
