"""TfIdfVectorizer: n-gram counts of integer token sequences, weighted (TF, IDF or TF-IDF).

The pool of n-grams is an attribute, so it becomes constant tables, one per gram length n:
the grams' tokens `[count, n]` and their output columns `[count]`. A gram of length n is
counted at every start s and skip distance d (1 … max_skip_count + 1; unigrams only at d = 1)
where the tokens x[s], x[s + d], … x[s + (n-1)·d] all equal the gram's, as ONNX's trie walk does.
One loop over each table replaces the trie: the code size grows with the number of gram lengths
and skip distances, not with the pool.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import IndexType, f32, i32
from xdsl.ir import Operation
from zant.dialects.onnx import TfIdfVectorizerOp, get_attr, inputs
from zant.passes.onnx_to_uop.base import OnnxLowering, result_name
from zant.passes.onnx_to_uop.kernel import (
    KernelBuilder,
    Layout,
    constant_table,
    layout_of,
    tensor_shape,
)

Grams = dict[int, tuple[np.ndarray, np.ndarray]]
"""Gram length n → (tokens [count, n], output column of each gram [count])."""


def pool_grams(op: Operation, pool: list[int] | None = None) -> Grams:
    """The pool's grams with lengths in [min_gram_length, max_gram_length], by length.

    Gram ids run over the whole pool in order (lengths 1, 2, … as `ngram_counts` delimits them);
    gram id k is counted in column `ngram_indexes[k]`. A gram listed twice keeps its last id, as
    in ONNX's trie. `pool`: the tokens in place of `pool_int64s` (`pool_strings` as the ids
    strings.py maps its tokens to).
    """
    if pool is None and get_attr(op, "pool_strings"):
        raise NotImplementedError("TfIdfVectorizer with pool_strings on a non-string input")
    pool = list(get_attr(op, "pool_int64s") or []) if pool is None else pool
    starts = list(get_attr(op, "ngram_counts") or [])
    columns = list(get_attr(op, "ngram_indexes") or [])
    lowest, highest = get_attr(op, "min_gram_length"), get_attr(op, "max_gram_length")
    by_length: dict[int, dict[tuple[int, ...], int]] = {}
    gram_id = 0
    for position, start in enumerate(starts):
        n = position + 1
        end = starts[position + 1] if position + 1 < len(starts) else len(pool)
        for first in range(start, end - n + 1, n):
            if lowest <= n <= highest:
                if gram_id >= len(columns):
                    raise ValueError(f"ngram_indexes has {len(columns)} entries, the pool more grams")
                by_length.setdefault(n, {})[tuple(pool[first : first + n])] = columns[gram_id]
            gram_id += 1
    return {
        n: (np.array(list(grams), np.int64).reshape(len(grams), n), np.array(list(grams.values()), np.int64))
        for n, grams in sorted(by_length.items())
    }


class TfIdfVectorizerLowering(OnnxLowering):
    """Counts into the f32 output (exact up to 2²⁴), then weights in place."""

    op_names = frozenset({TfIdfVectorizerOp.name})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        return self.counts(op, kb, layout_of(inputs(op)[0]), pool_grams(op))

    @staticmethod
    def counts(op: Operation, kb: KernelBuilder, x: Layout, grams: Grams) -> list[Layout]:
        """The output of integer tokens `x` [C] or [B, C] against `grams` (`pool_grams`)."""
        if x.rank > 2:
            raise ValueError(f"TfIdfVectorizer input must be [C] or [B, C], got rank {x.rank}")
        rows = x.reshape([1, x.size] if x.rank < 2 else list(x.shape))
        if rows is None:
            raise NotImplementedError("TfIdfVectorizer of a non-contiguous input view")
        batch, length = rows.shape
        size = tensor_shape(op.results[0])[-1]
        mode = get_attr(op, "mode")
        weights = list(get_attr(op, "weights") or [])
        max_skip = get_attr(op, "max_skip_count")

        # Tables first: the builder's views must come after every buffer they view.
        name = result_name(op)
        tables = [
            (n, constant_table(op, f"{name}_grams{n}", tokens, x.element_type),
             constant_table(op, f"{name}_columns{n}", columns, i32))
            for n, (tokens, columns) in grams.items()
        ]
        weight_table = constant_table(op, f"{name}_weights", np.array(weights), f32) if weights else None
        out = kb.alloc(name, tensor_shape(op.results[0]), f32).reshape([batch, size])
        assert out is not None

        zero, one = kb.const(0.0, f32), kb.const(1.0, f32)
        with kb.loop_nest([batch, size]) as index:
            kb.store(zero, out, index)
        with kb.loop(batch) as b:
            for n, tokens, columns in tables:
                with kb.loop(tokens.shape[0]) as gram:
                    count = kb.define_acc(0.0, f32)
                    wanted = [kb.load(tokens, [gram, kb.index(k)]) for k in range(n)]
                    for distance in range(1, (max_skip + 1 if n > 1 else 1) + 1):
                        starts = length - (n - 1) * distance
                        if starts <= 0:
                            break
                        with kb.loop(starts) as s:
                            match = None
                            for k in range(n):
                                at = kb.alu("add", s, kb.index(k * distance)) if k else s
                                equal = kb.alu("cmpeq", kb.load(rows, [b, at]), wanted[k])
                                match = equal if match is None else kb.alu("and", match, equal)
                            kb.acc_set(count, kb.alu("add", kb.acc_get(count), kb.where(match, one, zero)))
                    column = kb.cast(kb.load(columns, [gram]), IndexType())
                    total = kb.alu("add", kb.load(out, [b, column]), kb.acc_get(count))
                    kb.store(total, out, [b, column])
        if mode != "TF" and (mode == "IDF" or weight_table is not None):
            with kb.loop_nest([batch, size]) as (b, i):
                frequency = kb.load(out, [b, i])
                weight = kb.load(weight_table, [i]) if weight_table is not None else one
                if mode == "IDF":
                    value = kb.where(kb.alu("cmplt", zero, frequency), weight, zero)
                else:
                    value = kb.alu("mul", weight, frequency)
                kb.store(value, out, [b, i])
        return [Layout.contiguous(out.buffer, tensor_shape(op.results[0]))]


PATTERNS = (TfIdfVectorizerLowering(),)
