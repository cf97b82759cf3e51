// RUN: zant-opt %s --split-input-file -p onnx-to-uop | filecheck %s

// QLinearSoftmax of int16 (16x8 models): the distance d = max - x reaches 65535, so exp(-d·s)
// is taken from two 256-entry int32 tables, coarse H[d >> 8] (exp(-256·i·s) · 2^20) and fine
// E[d & 255] (exp(-j·s) · 2^20), their int64 product rounded back to 2^20: (H·E + 2^19) >> 20.

// CHECK-LABEL: func.func @softmax16
// CHECK-DAG:     uop.define_global "constant" {{[0-9]+}} "{{.*}}_exp" {{.*}} : !uop.buffer<256xi32>
// CHECK-DAG:     uop.define_global "constant" {{[0-9]+}} "{{.*}}_exp_coarse" {{.*}} : !uop.buffer<256xi32>
// CHECK-DAG:     [[EIGHT:%.*]] = uop.const 8 : i32
// CHECK-DAG:     [[BYTE:%.*]] = uop.const 255 : i32
// CHECK-DAG:     [[HALF:%.*]] = uop.const 524288 : i64
// CHECK-DAG:     [[BITS:%.*]] = uop.const 20 : i64
// CHECK:         [[D:%.*]] = uop.sub {{%.*}}, {{%.*}} : i32
// CHECK-NEXT:    [[HI:%.*]] = uop.shr [[D]], [[EIGHT]] : i32
// CHECK:         [[LO:%.*]] = uop.and [[D]], [[BYTE]] : i32
// CHECK:         [[P:%.*]] = uop.mul {{%.*}}, {{%.*}} : i64
// CHECK-NEXT:    [[R:%.*]] = uop.add [[P]], [[HALF]] : i64
// CHECK-NEXT:    {{%.*}} = uop.shr [[R]], [[BITS]] : i64
// CHECK:         uop.cast {{%.*}} : i64 to i16
func.func @softmax16(%x: tensor<1x12xi16>) -> tensor<1x12xi16> {
  %xs = onnx.Constant() {value = dense<0.0005> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<-1407> : tensor<i16>} : () -> tensor<i16>
  %ys = onnx.Constant() {value = dense<1.5259e-05> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-32768> : tensor<i16>} : () -> tensor<i16>
  %y = onnx.QLinearSoftmax(%x, %xs, %xz, %ys, %yz) {axis = 1 : i64, opset = 13 : i64} : (tensor<1x12xi16>, tensor<f32>, tensor<i16>, tensor<f32>, tensor<i16>) -> tensor<1x12xi16>
  func.return %y : tensor<1x12xi16>
}
