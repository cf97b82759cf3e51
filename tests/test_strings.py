"""String tensors (zant/ir/strings.py, passes/onnx_to_uop/strings.py and regex.py): each op's
compiled code against onnx.reference on strings the suite does not try (UTF-8, empty, exactly
the capacity, bytes after a NUL), the fields' memory safety (a string longer than its capacity
is refused, never cut; a field with no NUL is read as CAP bytes), the data-dependent outputs'
check, and the DFA against Python's `re`."""

from __future__ import annotations

import re

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import zant
from zant.errors import ZantError
from zant.ir.types import abi_bytes
from zant.runtime import CompiledModel
from zant.ir.strings import DEFAULT_STRING_CAPACITY, decode, encode
from zant.passes.onnx_to_uop.regex import RegexError, compile_pattern, full_match

S, B, I64 = TensorProto.STRING, TensorProto.BOOL, TensorProto.INT64
CAP = DEFAULT_STRING_CAPACITY


def _model(nodes, inputs, outputs, initializers=(), ml: bool = False):
    opsets = [helper.make_opsetid("", 21)] + ([helper.make_opsetid("ai.onnx.ml", 4)] if ml else [])
    graph = helper.make_graph(nodes, "strings", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=opsets)


def _compile(model, tmp_path_factory, name):
    path = tmp_path_factory.mktemp(name) / f"{name}.onnx"
    onnx.save(model, path)
    return zant.compile(str(path), name=name)


def _strings(values, shape=None) -> np.ndarray:
    array = np.empty(len(values), dtype=object)
    array[:] = values
    return array.reshape(shape or (len(values),))


WORDS = ["", "a", "abc", "www.google.com", "héllo wörld", "的中", "x" * CAP, "é" * (CAP // 2), "abc.def.gh", "A.B"]


@pytest.fixture(scope="module")
def elementwise(tmp_path_factory):
    """StringConcat (broadcast), Equal (broadcast), RegexFullMatch and a string→int64 LabelEncoder
    on one [10] input and a [1] one."""
    nodes = [
        helper.make_node("StringConcat", ["x", "y"], ["cat"]),
        helper.make_node("Equal", ["x", "y"], ["eq"]),
        helper.make_node("RegexFullMatch", ["x"], ["re"], pattern=r"[\w.]+\.(com|de)|\W*|é+"),
        helper.make_node("LabelEncoder", ["x"], ["le"], domain="ai.onnx.ml", keys_strings=["a", "abc", "的中", ""],
                         values_int64s=[1, 2, 3, 4], default_int64=-7),
        helper.make_node("LabelEncoder", ["x"], ["ls"], domain="ai.onnx.ml", keys_strings=["a", "abc"],
                         values_strings=["first", "é"], default_string="?"),
    ]
    model = _model(
        nodes,
        [helper.make_tensor_value_info("x", S, [10]), helper.make_tensor_value_info("y", S, [1])],
        [helper.make_tensor_value_info("cat", S, [10]), helper.make_tensor_value_info("eq", B, [10]),
         helper.make_tensor_value_info("re", B, [10]), helper.make_tensor_value_info("le", I64, [10]),
         helper.make_tensor_value_info("ls", S, [10])],
        ml=True,
    )
    return model, _compile(model, tmp_path_factory, "elementwise")


@pytest.mark.parametrize("y", ["", "abc", "ü" * (CAP // 2), "x" * CAP])
def test_elementwise_string_ops_equal_the_reference(elementwise, y):
    model, net = elementwise
    feeds = {"x": _strings(WORDS), "y": _strings([y])}
    want = ReferenceEvaluator(model).run(None, feeds)
    got = list(net.predict(feeds).values())
    # RE2's \w \W \b are ASCII's (the spec's syntax); onnx.reference runs Python's re, whose
    # classes are Unicode's: the regex output is compared with re.ASCII's
    pattern = model.graph.node[2].attribute[0].s.decode()
    want[2] = np.array([re.fullmatch(pattern, w, re.ASCII) is not None for w in WORDS])
    for name, g, w in zip(["cat", "eq", "re", "le", "ls"], got, want):
        assert g.dtype == (object if w.dtype.kind in "OU" else w.dtype), name  # strings: str objects
        np.testing.assert_array_equal(g, w, err_msg=name)


def test_runtime_refuses_a_string_longer_than_its_capacity(elementwise):
    _, net = elementwise
    with pytest.raises(ZantError, match=r"element 3 is 65 bytes .* at most 64"):
        net.predict({"x": _strings(["a"] * 3 + ["x" * (CAP + 1)] + ["b"] * 6), "y": _strings(["c"])})
    with pytest.raises(ZantError, match="NUL"):
        net.predict({"x": _strings(["a\0b"] * 10), "y": _strings(["c"])})


def test_field_bytes_after_the_first_nul_are_ignored(elementwise):
    """The C ABI side: a caller's field may hold anything after its first NUL (the string ends
    there), and a field with no NUL is a string of CAP bytes; nothing reads past the field."""
    _, net = elementwise
    result = net.result
    library = CompiledModel(result.library_path, "elementwise", result.inputs, result.outputs)
    x = np.zeros((10, CAP), np.uint8)
    x[:, :3] = np.frombuffer(b"abc", np.uint8)
    x[:, 4:] = ord("Z")  # after the NUL: garbage
    x[9, :] = ord("q")  # a full field, no NUL
    y = np.frombuffer(b"abc".ljust(CAP, b"\0"), np.uint8).copy()
    outputs = [np.zeros(abi_bytes(o.size, o.dtype), np.uint8) for o in result.outputs]
    assert library._predict(x.ctypes.data, y.ctypes.data, *(o.ctypes.data for o in outputs)) == 0
    cat = decode(outputs[0].view(result.outputs[0].dtype))
    eq = outputs[1].view(bool)
    assert list(cat[:9]) == ["abcabc"] * 9 and cat[9] == "q" * CAP + "abc"
    assert eq[:9].all() and not eq[9]


@pytest.fixture(scope="module")
def split(tmp_path_factory):
    nodes = [
        helper.make_node("StringSplit", ["x"], ["sep", "sep_n"], delimiter="--", maxsplit=3),
        helper.make_node("StringSplit", ["x"], ["ws", "ws_n"], maxsplit=2),
    ]
    model = _model(
        nodes,
        [helper.make_tensor_value_info("x", S, [2, 3])],
        [helper.make_tensor_value_info("sep", S, [2, 3, 4]), helper.make_tensor_value_info("sep_n", I64, [2, 3]),
         helper.make_tensor_value_info("ws", S, [2, 3, 3]), helper.make_tensor_value_info("ws_n", I64, [2, 3])],
    )
    return model, _compile(model, tmp_path_factory, "split")


@pytest.mark.parametrize("texts", [
    ["a--b--c", "", "  one two  three four ", "--x--", "a---b", "\tp\nq\x1fr s "],
    ["é--的", "----", "x" * CAP, "a b", " ", "a--b--c--d--e--f"],
])
def test_string_split_equals_the_reference(split, texts):
    model, net = split
    feeds = {"x": _strings(texts, (2, 3))}
    want = dict(zip(["sep", "sep_n", "ws", "ws_n"], ReferenceEvaluator(model).run(None, feeds)))
    got = net.predict(feeds)
    for name in ("sep_n", "ws_n"):
        np.testing.assert_array_equal(got[name], want[name], err_msg=name)
    for name in ("sep", "ws"):  # the reference pads to its longest; the model declares more
        pieces = want[name].shape[-1]
        np.testing.assert_array_equal(got[name][..., :pieces], want[name], err_msg=name)
        assert (got[name][..., pieces:] == "").all()


def test_string_split_checks_the_declared_piece_count(tmp_path_factory):
    model = _model([helper.make_node("StringSplit", ["x"], ["y", "n"], delimiter=",")],
                   [helper.make_tensor_value_info("x", S, [2])],
                   [helper.make_tensor_value_info("y", S, [2, 2]), helper.make_tensor_value_info("n", I64, [2])])
    net = _compile(model, tmp_path_factory, "split_check")
    assert net.predict({"x": _strings(["a,b", ""])})["n"].tolist() == [2, 1]
    with pytest.raises(ZantError, match="returned 5"):  # abi.Status.OUTPUT_SIZE: 3 pieces, 2 declared
        net.predict({"x": _strings(["a,b", "a,b,c"])})


@pytest.fixture(scope="module")
def normalizer(tmp_path_factory):
    node = helper.make_node("StringNormalizer", ["x"], ["y"], case_change_action="UPPER", is_case_sensitive=0,
                            stopwords=["monday", "Tuesday"])
    model = _model([node], [helper.make_tensor_value_info("x", S, [5])], [helper.make_tensor_value_info("y", S, [3])])
    return model, _compile(model, tmp_path_factory, "normalizer")


def test_string_normalizer_equals_the_reference(normalizer):
    model, net = normalizer
    feeds = {"x": _strings(["MONDAY", "wednesday", "tuesDAY", "a-b c", "x" * CAP])}
    (want,) = ReferenceEvaluator(model).run(None, feeds)
    (got,) = net.predict(feeds).values()
    np.testing.assert_array_equal(got, want)
    assert list(got) == ["WEDNESDAY", "A-B C", "X" * CAP]
    with pytest.raises(ZantError, match="returned 5"):  # four kept, three declared
        net.predict({"x": _strings(["a", "b", "c", "d", "monday"])})


def test_unsupported_string_uses_are_errors_naming_the_node(tmp_path):
    bad_regex = _model([helper.make_node("RegexFullMatch", ["x"], ["y"], name="look", pattern="a(?=b)")],
                       [helper.make_tensor_value_info("x", S, [2])], [helper.make_tensor_value_info("y", B, [2])])
    tile = _model([helper.make_node("Tile", ["x", "r"], ["y"], name="pick")],
                  [helper.make_tensor_value_info("x", S, [2])], [helper.make_tensor_value_info("y", S, [4])])
    tile.graph.initializer.append(onnx.numpy_helper.from_array(np.array([2], np.int64), "r"))
    for model, node in ((bad_regex, "look"), (tile, "pick")):
        path = tmp_path / f"{node}.onnx"
        onnx.save(model, path)
        with pytest.raises(ZantError, match=f"node '{node}'"):
            zant.compile(str(path), build=False)


PATTERNS = [
    r"www\.[\w.-]+\.\bcom\b",
    r"(\W|^)[\w.\-]{0,25}@(yahoo|gmail)\.com(\W|$)",
    r"a{2,3}(b|c)*d?",
    r"[^a-c]+\B.",
    r"(?:x|yz)+\d{2}",
    r".*é.*",
    r"\s*[A-Z][a-z]*\s*",
]
TEXTS = ["", "a", "aa", "aab", "aaabccd", "www.a.com", "www.a.comx", " x@gmail.com ", "x@gmail.com",
         "é", "aéb", "xyz12", "yzx99", "xx1", "def", "dd", " Hello ", "hello", "d\u00e9f", "\n"]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_dfa_agrees_with_python_re(pattern):
    dfa = compile_pattern(pattern)
    rng = np.random.default_rng(0)
    alphabet = list("abcdxyz.@ -_Hé12\n")
    texts = TEXTS + ["".join(rng.choice(alphabet, int(rng.integers(0, 8)))) for _ in range(300)]
    for text in texts:
        assert full_match(dfa, text.encode("utf-8")) == bool(re.fullmatch(pattern, text, re.ASCII)), (pattern, text)


@pytest.mark.parametrize("pattern", ["a(?=b)", r"(a)\1", "(?i)abc", "[[:alpha:]]", r"\pL", "[é]", "a**"])
def test_dfa_refuses_what_it_does_not_support(pattern):
    with pytest.raises(RegexError):
        compile_pattern(pattern)


def test_encode_decode_round_trip():
    values = _strings(["", "abc", "的", "x" * 8], (2, 2))
    fields = encode(values, [2, 2], 8, "x")
    assert fields.dtype == np.dtype("S8") and fields.tobytes()[:8] == b"\0" * 8
    np.testing.assert_array_equal(decode(fields), values)
    with pytest.raises(ZantError, match="9 bytes"):
        encode(_strings(["x" * 9]), [1], 8, "x")


def test_conformance_sends_the_string_cases_to_the_compiler():
    from onnx.backend.test.case.node import collect_testcases

    from zant.passes.onnx_to_uop import supported_ops
    from zant.tools import conformance

    names = ("test_string_concat", "test_string_split_basic", "test_strnormalizer_export_monday_empty_output",
             "test_regex_full_match_basic", "test_equal_string", "test_ai_onnx_ml_label_encoder_tensor_mapping")
    cases = [c for c in collect_testcases(None) if c.name in names]
    assert len(cases) == len(names)
    for case in cases:
        assert conformance.classify(case, 0, supported_ops()).status == "", case.name


def test_classifiers_with_string_labels_equal_the_reference(tmp_path_factory):
    """LinearClassifier and TreeEnsembleClassifier with classlabels_strings: the
    label output is a string tensor whose capacity is the longest label's bytes."""
    F = TensorProto.FLOAT
    labels = ["cat", "dög", "", "a much longer label"]
    nodes = [
        helper.make_node("LinearClassifier", ["x"], ["lin", "lin_scores"], domain="ai.onnx.ml",
                         coefficients=np.arange(12, dtype=np.float32).tolist()[::-1], intercepts=[0.5, -1.0, 2.0, 0.0],
                         classlabels_strings=labels),
        helper.make_node("TreeEnsembleClassifier", ["x"], ["tree", "tree_scores"], domain="ai.onnx.ml",
                         nodes_treeids=[0, 0, 0], nodes_nodeids=[0, 1, 2], nodes_featureids=[1, 0, 0],
                         nodes_modes=["BRANCH_LEQ", "LEAF", "LEAF"], nodes_values=[0.0, 0.0, 0.0],
                         nodes_truenodeids=[1, 0, 0], nodes_falsenodeids=[2, 0, 0],
                         nodes_missing_value_tracks_true=[0, 0, 0], nodes_hitrates=[1.0, 1.0, 1.0],
                         class_treeids=[0, 0], class_nodeids=[1, 2], class_ids=[0, 1], class_weights=[1.0, 1.0],
                         classlabels_strings=["low", "high"]),
    ]
    model = _model(
        nodes, [helper.make_tensor_value_info("x", F, [5, 3])],
        [helper.make_tensor_value_info("lin", S, [5]), helper.make_tensor_value_info("lin_scores", F, [5, 4]),
         helper.make_tensor_value_info("tree", S, [5]), helper.make_tensor_value_info("tree_scores", F, [5, 2])],
        ml=True,
    )
    net = _compile(model, tmp_path_factory, "classifiers")
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    want = dict(zip(["lin", "lin_scores", "tree", "tree_scores"],
                    ReferenceEvaluator(model).run(None, {"x": x})))
    got = net.predict({"x": x})
    for name in ("lin", "tree"):
        assert got[name].dtype == object
        np.testing.assert_array_equal(got[name], want[name].astype(object), err_msg=name)
    assert len(set(got["lin"])) > 1 and len(set(got["tree"])) > 1  # the data pick several labels


def test_string_capacity_option_sizes_the_inputs_fields(tmp_path):
    model = _model([helper.make_node("StringConcat", ["x", "y"], ["z"])],
                   [helper.make_tensor_value_info("x", S, [2]), helper.make_tensor_value_info("y", S, [2])],
                   [helper.make_tensor_value_info("z", S, [2])])
    path = tmp_path / "concat.onnx"
    onnx.save(model, path)
    net = zant.compile(str(path), string_capacity=8)
    assert [s.dtype for s in net.result.inputs] == ["S8", "S8"] and net.result.outputs[0].dtype == "S16"
    header = net.result.header_path.read_text()  # the C header says what the byte pointers hold
    assert "const uint8_t *input_x /* 2 strings, each 8 bytes of UTF-8, NUL-padded */" in header
    assert "uint8_t *output_z /* 2 strings, each 16 bytes of UTF-8, NUL-padded */" in header
    got = net.predict({"x": _strings(["x" * 8, "é"]), "y": _strings(["y" * 8, ""])})["z"]
    assert list(got) == ["x" * 8 + "y" * 8, "é"]
    with pytest.raises(ZantError, match="9 bytes of UTF-8, .* at most 8"):
        net.predict({"x": _strings(["x" * 9, ""]), "y": _strings(["", ""])})


def test_movement_of_string_tensors_equals_the_reference(tmp_path_factory):
    """Identity, Reshape, Flatten, Squeeze, Unsqueeze, Transpose and Concat (a wider field from a
    StringConcat beside a graph input's) on string tensors."""
    nodes = [
        helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0]),
        helper.make_node("Reshape", ["t", "shape"], ["r"]),
        helper.make_node("Flatten", ["x"], ["f"], axis=0),
        helper.make_node("Unsqueeze", ["x", "axes"], ["u"]),
        helper.make_node("Squeeze", ["u", "axes"], ["q"]),
        helper.make_node("StringConcat", ["x", "x"], ["xx"]),
        helper.make_node("Concat", ["xx", "q"], ["c"], axis=0),
        helper.make_node("Identity", ["t"], ["i"]),
        helper.make_node("RegexFullMatch", ["r"], ["m"], pattern="[a-c]+"),
    ]
    model = _model(
        nodes, [helper.make_tensor_value_info("x", S, [2, 3])],
        [helper.make_tensor_value_info("r", S, [6]), helper.make_tensor_value_info("f", S, [1, 6]),
         helper.make_tensor_value_info("c", S, [4, 3]), helper.make_tensor_value_info("i", S, [3, 2]),
         helper.make_tensor_value_info("m", B, [6])],
    )
    model.graph.initializer.extend([onnx.numpy_helper.from_array(np.array([6], np.int64), "shape"),
                                    onnx.numpy_helper.from_array(np.array([0], np.int64), "axes")])
    net = _compile(model, tmp_path_factory, "movement")
    feeds = {"x": _strings(["abc", "", "é" * (CAP // 2), "x" * CAP, "b", "ca"], (2, 3))}
    want = ReferenceEvaluator(model).run(None, feeds)
    got = net.predict(feeds)
    for name, w in zip(["r", "f", "c", "i", "m"], want):
        np.testing.assert_array_equal(got[name], w.astype(object) if w.dtype.kind == "U" else w, err_msg=name)


def test_string_one_hot_and_tfidf_equal_the_reference(tmp_path_factory):
    """OneHotEncoder with cats_strings and TfIdfVectorizer with pool_strings (uni- and bigrams,
    a skip, TFIDF weights), the text pipelines skl2onnx writes."""
    F = TensorProto.FLOAT
    nodes = [
        helper.make_node("OneHotEncoder", ["x"], ["hot"], domain="ai.onnx.ml", cats_strings=["b", "é", "a"], zeros=1),
        helper.make_node("TfIdfVectorizer", ["x"], ["tf"], mode="TFIDF", min_gram_length=1, max_gram_length=2,
                         max_skip_count=1, ngram_counts=[0, 3], ngram_indexes=[0, 1, 2, 3, 4],
                         pool_strings=["a", "b", "é", "a", "b", "b", "a"], weights=[1.0, 0.5, 2.0, 3.0, 0.25]),
    ]
    model = _model(nodes, [helper.make_tensor_value_info("x", S, [2, 5])],
                   [helper.make_tensor_value_info("hot", F, [2, 5, 3]), helper.make_tensor_value_info("tf", F, [2, 5])],
                   ml=True)
    net = _compile(model, tmp_path_factory, "text")
    for tokens in (["a", "b", "a", "x", "b"], ["é", "b", "a", "", "a"]):
        feeds = {"x": _strings(tokens + tokens[::-1], (2, 5))}
        want = ReferenceEvaluator(model).run(None, feeds)
        got = net.predict(feeds)
        np.testing.assert_array_equal(got["hot"], want[0])
        np.testing.assert_allclose(got["tf"], want[1], rtol=1e-6)


def test_string_ops_as_cortex_m4_firmware(tmp_path):
    """On the Cortex-M4 under QEMU (ReleaseSafe: a read or write out of bounds traps):
    StringConcat, RegexFullMatch, StringSplit, StringNormalizer and LabelEncoder on UTF-8,
    empty and full-capacity strings, equal to onnx.reference (the regex's: re.ASCII's)."""
    from zant.backend.build import BOARDS, DEFAULT_BOARDS
    from zant.backend.firmware import qemu_missing, run_firmware
    from zant.driver import CompileOptions, compile_model

    missing = qemu_missing(BOARDS[DEFAULT_BOARDS["cortex-m4"]])
    if missing:
        pytest.skip(missing)
    pattern = r"(\W|^)[\w.\-]{0,25}@(yahoo|gmail)\.com(\W|$)"
    nodes = [
        helper.make_node("StringConcat", ["x", "y"], ["cat"]),
        helper.make_node("RegexFullMatch", ["x"], ["re"], pattern=pattern),
        helper.make_node("StringSplit", ["x"], ["pieces", "count"], delimiter="@"),
        helper.make_node("StringNormalizer", ["x"], ["norm"], case_change_action="UPPER", stopwords=["drop"]),
        helper.make_node("LabelEncoder", ["x"], ["code"], domain="ai.onnx.ml", keys_strings=["drop", ""],
                         values_int64s=[7, 9]),
    ]
    model = _model(
        nodes, [helper.make_tensor_value_info("x", S, [4]), helper.make_tensor_value_info("y", S, [1])],
        [helper.make_tensor_value_info("cat", S, [4]), helper.make_tensor_value_info("re", B, [4]),
         helper.make_tensor_value_info("pieces", S, [4, 2]), helper.make_tensor_value_info("count", I64, [4]),
         helper.make_tensor_value_info("norm", S, [3]), helper.make_tensor_value_info("code", I64, [4])],
        ml=True,
    )
    feeds = {"x": _strings(["me@gmail.com", "drop", "", "é" * (CAP // 2)]), "y": _strings(["x" * CAP])}
    onnx.save(model, tmp_path / "m.onnx")
    result = compile_model(tmp_path / "m.onnx", tmp_path / "fw", CompileOptions(
        name="m", target="cortex-m4", optimize="ReleaseSafe", firmware=True, inputs=feeds))
    run = run_firmware(result.firmware_path, result.board, result.outputs)
    want = ReferenceEvaluator(model).run(None, feeds)
    want[1] = np.array([re.fullmatch(pattern, w, re.ASCII) is not None for w in feeds["x"]])
    # StringNormalizer as ONNX specifies it (docs/strings.md): onnx.reference also drops the
    # empty string and turns é into E (accents stripped, then Unicode upper case)
    want[4] = _strings(["ME@GMAIL.COM", "", "é" * (CAP // 2)])
    for got, expected, name in zip(run.outputs, want, ["cat", "re", "pieces", "count", "norm", "code"]):
        np.testing.assert_array_equal(got, expected.astype(object) if expected.dtype.kind == "U" else expected, err_msg=name)
    assert list(run.outputs[1]) == [True, False, False, False] and list(run.outputs[3]) == [2, 1, 1, 1]


def test_label_encoder_numbers_to_strings_equals_the_reference(tmp_path_factory):
    node = helper.make_node("LabelEncoder", ["x"], ["y"], domain="ai.onnx.ml", keys_int64s=[3, 1, 3],
                            values_strings=["three", "one", "trois"], default_string="?")
    model = _model([node], [helper.make_tensor_value_info("x", I64, [5])], [helper.make_tensor_value_info("y", S, [5])],
                   ml=True)
    net = _compile(model, tmp_path_factory, "numbers_to_strings")
    feeds = {"x": np.array([3, 1, 0, -1, 3], np.int64)}
    (want,) = ReferenceEvaluator(model).run(None, feeds)
    got = net.predict(feeds)["y"]
    np.testing.assert_array_equal(got, want.astype(object))
    assert list(got) == ["trois", "one", "?", "?", "trois"]  # a key listed twice: its last value


FUZZ_RUNNER = """
import sys
import numpy as np
from zant.ir.types import abi_bytes
from zant.runtime import CompiledModel
from zant.signature import TensorSignature
library, name, ins, outs = sys.argv[1], sys.argv[2], eval(sys.argv[3]), eval(sys.argv[4])
model = CompiledModel(library, name, [TensorSignature(*s) for s in ins], [TensorSignature(*s) for s in outs])
rng = np.random.default_rng(0)
statuses = set()
for trial in range(300):
    fields = []
    for _, shape, dtype in ins:
        size = abi_bytes(int(np.prod(shape)), dtype)
        data = rng.integers(0, 256, size, dtype=np.uint8)
        if trial % 3:  # short strings: NUL bytes here and there, the rest garbage
            data[rng.random(size) < 0.2] = 0
        if trial % 5 == 0:  # words: the delimiter, spaces and letters
            data = rng.choice(np.frombuffer(b"ab ,\\x00\\t\\xc3\\xa9", np.uint8), size)
        fields.append(data)
    outputs = [np.zeros(abi_bytes(int(np.prod(shape)), dtype), np.uint8) for _, shape, dtype in outs]
    statuses.add(int(model._predict(*(a.ctypes.data for a in fields), *(o.ctypes.data for o in outputs))))
print(sorted(statuses))
"""


def test_arbitrary_field_bytes_never_leave_the_buffers(tmp_path):
    """Memory safety: every string op built ReleaseSafe (an out-of-bounds index or an integer
    overflow panics and kills the process) runs on 300 sets of arbitrary field bytes (invalid
    UTF-8, no NUL, NULs anywhere) through the C ABI, fields of 7 bytes; it never traps."""
    import subprocess
    import sys

    nodes = [
        helper.make_node("StringConcat", ["x", "y"], ["cat"]),
        helper.make_node("Equal", ["x", "y"], ["eq"]),
        helper.make_node("RegexFullMatch", ["x"], ["re"], pattern=r"(\W|^)[\w.\-]{0,25}@(yahoo|gmail)\.com(\W|$)"),
        helper.make_node("StringSplit", ["x"], ["pieces", "count"], delimiter=","),
        helper.make_node("StringSplit", ["x"], ["words", "word_count"]),
        helper.make_node("StringNormalizer", ["x"], ["norm"], case_change_action="LOWER", is_case_sensitive=0),
        helper.make_node("LabelEncoder", ["x"], ["code"], domain="ai.onnx.ml", keys_strings=["a", "b"], values_int64s=[1, 2]),
        helper.make_node("TfIdfVectorizer", ["x"], ["tf"], mode="TF", min_gram_length=1, max_gram_length=1, max_skip_count=0,
                         ngram_counts=[0], ngram_indexes=[0, 1], pool_strings=["a", "b"]),
    ]
    model = _model(
        nodes, [helper.make_tensor_value_info("x", S, [6]), helper.make_tensor_value_info("y", S, [6])],
        [helper.make_tensor_value_info("cat", S, [6]), helper.make_tensor_value_info("eq", B, [6]),
         helper.make_tensor_value_info("re", B, [6]), helper.make_tensor_value_info("pieces", S, [6, 8]),
         helper.make_tensor_value_info("count", I64, [6]), helper.make_tensor_value_info("words", S, [6, 4]),
         helper.make_tensor_value_info("word_count", I64, [6]), helper.make_tensor_value_info("norm", S, [6]),
         helper.make_tensor_value_info("code", I64, [6]), helper.make_tensor_value_info("tf", TensorProto.FLOAT, [2])],
        ml=True,
    )
    path = tmp_path / "fuzz.onnx"
    onnx.save(model, path)
    net = zant.compile(str(path), name="fuzz", optimize="ReleaseSafe", string_capacity=7)
    result = net.result
    spec = lambda signatures: repr([(s.name, s.shape, s.dtype) for s in signatures])  # noqa: E731
    done = subprocess.run(
        [sys.executable, "-c", FUZZ_RUNNER, str(result.library_path), "fuzz", spec(result.inputs), spec(result.outputs)],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    # every kernel ran every time: 7 bytes split into at most 8 pieces at ',' and 4 words
    assert done.stdout.strip() == "[0]", done.stdout


def test_string_constants_gather_and_where_equal_the_reference(tmp_path_factory):
    """String constants (an initializer, Constant nodes with value_strings and value_string) and
    Gather / Where on strings: a label table picked by ArgMax, a suffix, a fallback; a run-time
    index out of range is status 6 (BAD_INDEX)."""
    F = TensorProto.FLOAT
    nodes = [
        helper.make_node("ArgMax", ["scores"], ["best"], axis=1, keepdims=0),
        helper.make_node("Gather", ["labels", "best"], ["label"]),
        helper.make_node("Constant", [], ["suffix"], value_string="!"),
        helper.make_node("StringConcat", ["label", "suffix"], ["shout"]),
        helper.make_node("Constant", [], ["known"], value_strings=["dög", "cat"]),
        helper.make_node("StringConcat", ["known", "label"], ["pair"]),
        helper.make_node("Equal", ["label", "x"], ["same"]),
        helper.make_node("Where", ["same", "x", "label"], ["either"]),
        helper.make_node("Gather", ["x", "i"], ["picked"]),
    ]
    model = _model(
        nodes,
        [helper.make_tensor_value_info("scores", F, [2, 3]), helper.make_tensor_value_info("x", S, [2]),
         helper.make_tensor_value_info("i", I64, [3])],
        [helper.make_tensor_value_info("label", S, [2]), helper.make_tensor_value_info("shout", S, [2]),
         helper.make_tensor_value_info("pair", S, [2]), helper.make_tensor_value_info("same", B, [2]),
         helper.make_tensor_value_info("either", S, [2]), helper.make_tensor_value_info("picked", S, [3])],
        [helper.make_tensor("labels", S, [3], [b"cat", "dög".encode(), b""])],
    )
    net = _compile(model, tmp_path_factory, "constants")
    for scores in ([[0, 2, 1], [5, 0, 0]], [[0, 0, 1], [0, 1, 0]]):
        feeds = {"scores": np.array(scores, np.float32), "x": _strings(["é" * (CAP // 2), "cat"]),
                 "i": np.array([1, 0, -1], np.int64)}
        want = ReferenceEvaluator(model).run(None, feeds)
        got = net.predict(feeds)
        for name, w in zip(["label", "shout", "pair", "same", "either", "picked"], want):
            np.testing.assert_array_equal(got[name], w.astype(object) if w.dtype.kind in "US" else w, err_msg=name)
    with pytest.raises(ZantError, match="returned 6"):
        net.predict({**feeds, "i": np.array([0, 2, 0], np.int64)})


def test_string_split_equals_python_on_random_strings(tmp_path):
    """StringSplit against Python's str.split on 400 random strings of ' ', '\\t', ',', ';', 'a',
    'é' (at most 12 bytes: fields exactly full included), separators "," and ",;", maxsplit
    none / 0 / 2, and whitespace with maxsplit none / 1."""
    configurations = [(",", None), (",;", 2), (",", 0), ("", None), ("", 1)]
    nodes, outputs = [], []
    for k, (delimiter, maxsplit) in enumerate(configurations):
        attributes = {"delimiter": delimiter} if delimiter else {}
        if maxsplit is not None:
            attributes["maxsplit"] = maxsplit
        nodes.append(helper.make_node("StringSplit", ["x"], [f"p{k}", f"n{k}"], **attributes))
        outputs += [helper.make_tensor_value_info(f"p{k}", S, [40, 13]), helper.make_tensor_value_info(f"n{k}", I64, [40])]
    model = _model(nodes, [helper.make_tensor_value_info("x", S, [40])], outputs)
    path = tmp_path / "split.onnx"
    onnx.save(model, path)
    net = zant.compile(str(path), string_capacity=12)
    rng = np.random.default_rng(1)
    alphabet = [" ", "\t", ",", ";", "a", "é"]
    for _ in range(10):
        texts = []
        while len(texts) < 40:
            text = "".join(rng.choice(alphabet, int(rng.integers(0, 12))))
            if len(text.encode()) <= 12:
                texts.append(text)
        got = net.predict({"x": _strings(texts)})
        for k, (delimiter, maxsplit) in enumerate(configurations):
            for i, text in enumerate(texts):
                want = text.split(delimiter or None, -1 if maxsplit is None else maxsplit)
                assert got[f"n{k}"][i] == len(want), (text, delimiter, maxsplit)
                assert list(got[f"p{k}"][i][: len(want)]) == want, (text, delimiter, maxsplit)
                assert (got[f"p{k}"][i][len(want):] == "").all()
