// RUN: not zant-opt %s --split-input-file -p onnx-to-uop 2>&1 | filecheck %s

// StringConcat: a string tensor is a u8 buffer of fields (2 x 4 bytes, NUL-padded; the graph's
// inputs and outputs say their capacity for the C header), the result's capacity the sum (7); byte j of a result is x's while j < len(x), then y's byte j - len(x),
// the data-dependent indices clamped into the field; every output byte stored at loop indices.
// CHECK-LABEL: func.func @main()
// CHECK:         %y = uop.define_global "input" 1 "y" {zant.string_capacity = 3 : i64} : !uop.buffer<3xui8>
// CHECK-NEXT:    %x = uop.define_global "input" 0 "x" {zant.string_capacity = 4 : i64} : !uop.buffer<8xui8>
// CHECK-NEXT:    %z = uop.define_global "output" 0 "z" {zant.string_capacity = 7 : i64} : !uop.buffer<14xui8>
// CHECK:         [[Y:%.*]] = uop.view %y : !uop.buffer<3xui8> -> !uop.view<2x3xui8, strides [0, 1], offset 0>
// CHECK:         uop.range [[I:%.*]] = 0 to 2 {
// CHECK:           [[LEN:%.*]] = uop.define_acc 0 : i32
// CHECK:           uop.range {{%.*}} = 0 to 4 {
// CHECK:           }
// CHECK-NEXT:      [[N:%.*]] = uop.acc_get [[LEN]] : !uop.acc<i32>, i32
// CHECK-NEXT:      uop.range [[J:%.*]] = 0 to 7 {
// CHECK-NEXT:        [[POS:%.*]] = uop.cast [[J]] : index to i32
// CHECK-NEXT:        [[FROM_Y:%.*]] = uop.sub [[POS]], [[N]] : i32
// CHECK:             [[LOW:%.*]] = uop.max [[FROM_Y]], {{%.*}} : i32
// CHECK-NEXT:        {{%.*}} = uop.const 2 : i32
// CHECK-NEXT:        [[AT:%.*]] = uop.min [[LOW]], {{%.*}} : i32
// CHECK-NEXT:        [[AT_INDEX:%.*]] = uop.cast [[AT]] : i32 to index
// CHECK-NEXT:        {{%.*}} = uop.gep [[Y]][[[I]], [[AT_INDEX]]]
// CHECK:             uop.store {{%.*}}, {{%.*}} : ui8
func.func @main(%x: tensor<2x!onnx.string<4>>, %y: tensor<1x!onnx.string<3>>) -> tensor<2x!onnx.string<7>> attributes {onnx.input_names = ["x", "y"], onnx.output_names = ["z"]} {
  %z = onnx.StringConcat(%x, %y) : (tensor<2x!onnx.string<4>>, tensor<1x!onnx.string<3>>) -> tensor<2x!onnx.string<7>>
  func.return %z : tensor<2x!onnx.string<7>>
}

// -----

// RegexFullMatch "ab*": the DFA compiled now (state 0 dead, 1 the start; byte classes: other,
// 'a', 'b' and the word bytes \b would tell apart), run over the field with one table load per
// byte until its first NUL; the result is the accept table at the last state.
// CHECK-LABEL: func.func @main()
// CHECK:         %y_byte_classes = uop.define_global "constant" 0 "y_byte_classes" value dense_resource<y_byte_classes> : tensor<256xui8> : !uop.buffer<256xui8>
// CHECK-NEXT:    %y_dfa = uop.define_global "constant" 1 "y_dfa" value dense<[0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 3, 0, 0, 0, 3]> : tensor<16xui8> : !uop.buffer<16xui8>
// CHECK-NEXT:    %y_accept = uop.define_global "constant" 2 "y_accept" value dense<[0, 0, 1, 1]> : tensor<4xui8> : !uop.buffer<4xui8>
// CHECK:           [[STATE:%.*]] = uop.define_acc 1 : i32
// CHECK:           uop.range {{%.*}} = 0 to 4 {
// CHECK:             {{%.*}} = uop.gep %y_byte_classes[{{%.*}}] : !uop.buffer<256xui8>
// CHECK:             {{%.*}} = uop.gep %y_dfa[{{%.*}}] : !uop.buffer<16xui8>
// CHECK:           {{%.*}} = uop.gep %y_accept[{{%.*}}] : !uop.buffer<4xui8>
func.func @main(%x: tensor<2x!onnx.string<4>>) -> tensor<2xi1> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %y = onnx.RegexFullMatch(%x) {pattern = "ab*"} : (tensor<2x!onnx.string<4>>) -> tensor<2xi1>
  func.return %y : tensor<2xi1>
}

// -----

// StringSplit: pieces numbered in a scratch row, their count checked against the declared
// last axis (status 5, OUTPUT_SIZE) before any output byte is written.
// CHECK-LABEL: func.func @main()
// CHECK:         %y_piece_of = uop.define_local "y_piece_of" : !uop.buffer<8xi32>
// CHECK:         abi.check {{%.*}}, 5
// CHECK:         uop.range {{%.*}} = 0 to 2 {
// CHECK-NEXT:      uop.range {{%.*}} = 0 to 3 {
func.func @main(%x: tensor<2x!onnx.string<4>>) -> (tensor<2x3x!onnx.string<4>>, tensor<2xi64>) attributes {onnx.input_names = ["x"], onnx.output_names = ["y", "n"]} {
  %y, %n = onnx.StringSplit(%x) {delimiter = ","} : (tensor<2x!onnx.string<4>>) -> (tensor<2x3x!onnx.string<4>>, tensor<2xi64>)
  func.return %y, %n : tensor<2x3x!onnx.string<4>>, tensor<2xi64>
}

// -----

// Any other op on strings is refused, naming the node (zant-opt stops there: keep it last).
// CHECK: node 'pick' (onnx.Tile): string tensors are supported by StringConcat, StringSplit, StringNormalizer, RegexFullMatch, Equal, ai.onnx.ml.LabelEncoder, OneHotEncoder, TfIdfVectorizer,
func.func @main(%x: tensor<2x!onnx.string<4>>, %r: tensor<1xi64>) -> tensor<4x!onnx.string<4>> attributes {onnx.input_names = ["x", "r"], onnx.output_names = ["y"]} {
  %y = onnx.Tile(%x, %r) {onnx.node_name = "pick"} : (tensor<2x!onnx.string<4>>, tensor<1xi64>) -> tensor<4x!onnx.string<4>>
  func.return %y : tensor<4x!onnx.string<4>>
}
