"""End-to-end numerics of TfIdfVectorizer against the ONNX reference evaluator: every mode, with
and without weights, batched and not, skips, a gram length outside [min, max], a repeated gram."""

from __future__ import annotations

import numpy as np
import pytest
from e2e import check_model
from onnx import TensorProto, helper
from ort_reference import check_with_onnxruntime
from zant.passes.onnx_to_uop.text import pool_grams

POOL = dict(ngram_counts=[0, 4], ngram_indexes=[0, 1, 2, 3, 4, 5, 6], pool_int64s=[2, 3, 5, 4, 5, 6, 7, 8, 6, 7])
"""Unigrams 2 3 5 4, bigrams (5 6) (7 8) (6 7): seven grams, columns 0…6."""


def _model(shape, element_type=TensorProto.INT32, **attributes):
    out_shape = [shape[0], 7] if len(shape) == 2 else [7]
    node = helper.make_node("TfIdfVectorizer", ["x"], ["y"], **{**POOL, **attributes})
    graph = helper.make_graph(
        [node], "tfidf", [helper.make_tensor_value_info("x", element_type, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


TOKENS = np.array([[1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8], [4, 5, 6, 7, 8, 7, 5, 6, 2, 6, 7, 8]], np.int32)

CASES = {
    "tf-batch-skip2": dict(mode="TF", min_gram_length=1, max_gram_length=2, max_skip_count=2),
    "idf-weights": dict(mode="IDF", min_gram_length=1, max_gram_length=2, max_skip_count=0,
                        weights=[1.0, 0.5, 2.0, 3.0, 0.25, 4.0, 1.5]),
    "idf-no-weights": dict(mode="IDF", min_gram_length=2, max_gram_length=2, max_skip_count=1),
    "tfidf-weights": dict(mode="TFIDF", min_gram_length=1, max_gram_length=2, max_skip_count=3,
                          weights=[1.0, 0.5, 2.0, 3.0, 0.25, 4.0, 1.5]),
    "tfidf-no-weights-unigrams-only": dict(mode="TFIDF", min_gram_length=1, max_gram_length=1, max_skip_count=4),
}


@pytest.mark.parametrize("case", CASES)
def test_tfidf_vectorizer_modes(case):
    model = _model([2, 12], **CASES[case])
    if "weights" in CASES[case]:
        check_model(model, {"x": TOKENS}, rtol=0, atol=0)
    else:  # ONNX's reference evaluator fails on absent weights (len(None)); onnxruntime does not
        check_with_onnxruntime(model, {"x": TOKENS}, rtol=0, atol=0)


def test_tfidf_vectorizer_one_row_int64():
    attributes = dict(mode="TF", min_gram_length=1, max_gram_length=2, max_skip_count=1)
    check_model(_model([12], TensorProto.INT64, **attributes), {"x": TOKENS[1].astype(np.int64)}, rtol=0, atol=0)


def test_pool_grams_by_length_with_repeated_gram():
    """Ids run over the whole pool; a gram listed twice keeps its last column, as ONNX's trie."""
    from types import SimpleNamespace

    attributes = dict(pool_strings=None, pool_int64s=[1, 2, 1, 3, 4, 3, 4], ngram_counts=[0, 3],
                      ngram_indexes=[0, 1, 2, 3, 4], min_gram_length=2, max_gram_length=2)
    op = SimpleNamespace(name="onnx.TfIdfVectorizer")
    from zant.passes.onnx_to_uop import text

    original = text.get_attr
    text.get_attr = lambda _op, name: attributes[name]
    try:
        grams = pool_grams(op)
    finally:
        text.get_attr = original
    assert list(grams) == [2]
    tokens, columns = grams[2]
    assert tokens.tolist() == [[3, 4]] and columns.tolist() == [4]
