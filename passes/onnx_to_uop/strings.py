"""String tensors: StringConcat, StringSplit, StringNormalizer, RegexFullMatch, Equal on strings
and LabelEncoder with string keys or values.

A string tensor of shape S and capacity CAP (`!onnx.string<CAP>`, see `zant.ir.strings`) lives in
a u8 buffer of prod(S)·CAP bytes: element i's field is bytes [i·CAP, (i+1)·CAP), its string from
the first byte, NUL-padded. Its `Layout` here has the shape S + (CAP,), the field's bytes the last
axis, so broadcasting and indexing work on the elements as for any tensor.

Every kernel writes each byte of its results exactly once, at an index that is a loop variable
(a field is written whole, its padding included); what it writes is computed from reads whose
data-dependent indices (a string's length, a DFA state, a piece's start) are clamped into the
field or table they read. No input can make the code read or write outside its buffers, and
the work is fixed by the capacities and shapes, never by the data. An output whose element count
depends on the data (StringNormalizer removing stopwords, StringSplit's pieces) is compiled for
the shape the model declares; the data are checked against it first (`abi.Status.OUTPUT_SIZE`,
nothing written when they do not fit).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import AnyFloat, IndexType, IntegerType, Signedness, TensorType
from xdsl.ir import Operation, SSAValue

from zant.dialects import abi
from zant.dialects.onnx import (
    ConcatOp,
    ConstantOp,
    EqualOp,
    FlattenOp,
    GatherOp,
    IdentityOp,
    OnnxOp,
    RegexFullMatchOp,
    ReshapeOp,
    SqueezeOp,
    StringConcatOp,
    StringNormalizerOp,
    StringSplitOp,
    TfIdfVectorizerOp,
    TransposeOp,
    UnsqueezeOp,
    WhereOp,
    get_attr,
    inputs,
)
from zant.ir.strings import StringType
from zant.passes.onnx_to_uop.base import OnnxLowering, result_name
from zant.passes.onnx_to_uop.kernel import KernelBuilder, Layout, layout_of, tensor_element_type, tensor_shape
from zant.passes.onnx_to_uop.ml import ml_op_names
from zant.passes.onnx_to_uop.parameters import check, constant_array, constant_indices, data_index
from zant.passes.onnx_to_uop.regex import RegexError, compile_pattern
from zant.passes.onnx_to_uop.text import TfIdfVectorizerLowering, pool_grams

I32 = IntegerType(32)
I64 = IntegerType(64)
U8 = IntegerType(8, Signedness.UNSIGNED)


def string_capacity(value: SSAValue) -> int | None:
    """The capacity of a string tensor value, None for any other value."""
    value_type = value.type
    if isinstance(value_type, TensorType) and isinstance(value_type.get_element_type(), StringType):
        return value_type.get_element_type().capacity.data
    return None


def string_buffer_size(value: SSAValue) -> int:
    """Bytes of a string tensor's buffer: its elements times its capacity."""
    return math.prod(tensor_shape(value)) * string_capacity(value)


def string_layout(value: SSAValue) -> Layout:
    """The layout of a string tensor's bytes: its shape and a last axis of its capacity."""
    layout = layout_of(value)
    shape = tensor_shape(value)
    if layout.rank == len(shape) + 1:  # already seen through a view of the bytes
        return layout
    return Layout.contiguous(layout.buffer, (*shape, string_capacity(value)))


def has_strings(op: Operation) -> bool:
    return any(string_capacity(v) is not None for v in (*op.operands, *op.results))


class Text:
    """i32 scalar code over string fields: bytes, lengths, comparisons, clamped indices."""

    def __init__(self, kb: KernelBuilder):
        self.kb = kb

    def c(self, value: int) -> SSAValue:
        return self.kb.const(value, I32)

    def alu(self, name: str, *operands: SSAValue) -> SSAValue:
        return self.kb.alu(name, *operands)

    def where(self, condition: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.kb.where(condition, a, b)

    def at(self, value: SSAValue, size: int) -> SSAValue:
        """An i32 value as an index clamped into [0, size)."""
        clamped = self.alu("min", self.alu("max", value, self.c(0)), self.c(size - 1))
        return self.kb.cast(clamped, IndexType())

    def byte(self, field: Layout, ivs: Sequence[SSAValue], j: int | SSAValue) -> SSAValue:
        """Byte j of the field at `ivs` (j a static int, an index, or an i32 clamped into it)."""
        if isinstance(j, int):
            j = self.kb.index(j)
        elif j.type != IndexType():
            j = self.at(j, field.shape[-1])
        return self.kb.cast(self.kb.load(field, [*ivs, j]), I32)

    def length(self, field: Layout, ivs: Sequence[SSAValue]) -> SSAValue:
        """The string's length: the bytes before the field's first NUL."""
        count, alive = self.kb.define_acc(0, I32), self.kb.define_acc(1, I32)
        with self.kb.loop(field.shape[-1]) as j:
            live = self.alu("and", self.kb.acc_get(alive), self.kb.cast(self.alu("cmpne", self.byte(field, ivs, j), self.c(0)), I32))
            self.kb.acc_set(alive, live)
            self.kb.acc_set(count, self.alu("add", self.kb.acc_get(count), live))
        return self.kb.acc_get(count)

    def fold(self, byte: SSAValue, fold: str | None) -> SSAValue:
        """ASCII case change of a byte: 'LOWER', 'UPPER' or None (unchanged)."""
        if fold is None:
            return byte
        low, high, delta = (ord("A"), ord("Z"), 32) if fold == "LOWER" else (ord("a"), ord("z"), -32)
        inside = self.alu("and", self.alu("cmple", self.c(low), byte), self.alu("cmple", byte, self.c(high)))
        return self.where(inside, self.alu("add", byte, self.c(delta)), byte)

    def equal(self, a: Layout, a_ivs: Sequence[SSAValue], b: Layout, b_ivs: Sequence[SSAValue], fold: str | None = None) -> SSAValue:
        """Whether two fields hold the same string: the same bytes up to the first NUL of each
        (whatever follows it in the field), `fold` comparing ASCII case-insensitively."""
        kb = self.kb
        same, a_live, b_live = kb.define_acc(1, I32), kb.define_acc(1, I32), kb.define_acc(1, I32)
        longer = max(a.shape[-1], b.shape[-1])

        def live_byte(field: Layout, ivs, j, live) -> SSAValue:
            byte = self.byte(field, ivs, j)
            alive = self.alu("and", kb.acc_get(live), kb.cast(self.alu("cmpne", byte, self.c(0)), I32))
            kb.acc_set(live, alive)
            return self.where(self.alu("cmpne", alive, self.c(0)), self.fold(byte, fold), self.c(0))

        with kb.loop(longer) as j:

            def field_byte(field: Layout, ivs, live) -> SSAValue:
                if field.shape[-1] == longer:
                    return live_byte(field, ivs, j, live)
                # a field shorter than the other: its last byte read again past its end, counted as NUL
                position = kb.cast(j, I32)
                byte = live_byte(field, ivs, self.alu("min", position, self.c(field.shape[-1] - 1)), live)
                return self.where(self.alu("cmple", self.c(field.shape[-1]), position), self.c(0), byte)

            a_byte, b_byte = field_byte(a, a_ivs, a_live), field_byte(b, b_ivs, b_live)
            match = kb.cast(self.alu("cmpeq", a_byte, b_byte), I32)
            kb.acc_set(same, self.alu("and", kb.acc_get(same), match))
        return self.alu("cmpne", kb.acc_get(same), self.c(0))

    def store(self, value: SSAValue, out: Layout, ivs: Sequence[SSAValue]) -> None:
        self.kb.store(self.kb.cast(value, U8), out, ivs)


def string_table(kb: KernelBuilder, name: str, strings: Sequence[str]) -> Layout:
    """Constant strings as a [count, CAP] field table (CAP: the longest, at least 1 byte)."""
    encoded = [s.encode("utf-8") for s in strings]
    capacity = max([1, *map(len, encoded)])
    array = np.zeros((max(len(encoded), 1), capacity), np.uint8)
    for row, data in enumerate(encoded):
        array[row, : len(data)] = np.frombuffer(data, np.uint8)
    return kb.constant(name, array, U8)


def alloc_strings(kb: KernelBuilder, op: Operation, index: int = 0) -> Layout:
    result = op.results[index]
    return kb.alloc(result_name(op, index), (*tensor_shape(result), string_capacity(result)), U8)


def _refuse_nul(strings: Sequence[str], what: str) -> None:
    if any("\0" in s for s in strings):
        raise ValueError(f"{what} hold a NUL character (strings are NUL-padded fields)")


class StringConcatLowering(OnnxLowering):
    """Z = X + Y element-wise with broadcasting; Z's capacity is X's plus Y's, so the sum fits.
    Byte j of a result is X's while j < len(X), then Y's byte j - len(X), then NUL."""

    op_names = frozenset({StringConcatOp.name})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        x_value, y_value = inputs(op)
        shape = tensor_shape(op.results[0])
        x, y = (string_layout(v) for v in (x_value, y_value))
        x, y = x.broadcast_to((*shape, x.shape[-1])), y.broadcast_to((*shape, y.shape[-1]))
        out = alloc_strings(kb, op)
        t = Text(kb)
        with kb.loop_nest(shape) as ivs:
            x_length = t.length(x, ivs)
            with kb.loop(out.shape[-1]) as j:
                position = kb.cast(j, I32)
                from_y = t.alu("sub", position, x_length)
                y_byte = t.where(t.alu("cmplt", from_y, t.c(y.shape[-1])), t.byte(y, ivs, from_y), t.c(0))
                in_x = t.alu("cmplt", position, x_length)
                t.store(t.where(in_x, t.byte(x, ivs, position), y_byte), out, [*ivs, j])
        return [out]


class StringEqualLowering(OnnxLowering):
    """Equal on string tensors, with broadcasting: byte-wise equality of the fields."""

    op_names = frozenset()

    def matches(self, op: Operation) -> bool:
        return isinstance(op, EqualOp) and has_strings(op)

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        shape = tensor_shape(op.results[0])
        a, b = (string_layout(v) for v in inputs(op))
        a, b = a.broadcast_to((*shape, a.shape[-1])), b.broadcast_to((*shape, b.shape[-1]))
        out = kb.alloc(result_name(op), shape, tensor_element_type(op.results[0]))
        t = Text(kb)
        with kb.loop_nest(shape) as ivs:
            kb.store(t.equal(a, ivs, b, ivs), out, ivs)
        return [out]


class RegexFullMatchLowering(OnnxLowering):
    """Whether each string matches the pattern as a whole: the pattern's DFA (`regex.py`),
    compiled now, run over the field's bytes up to its first NUL; one table load per byte."""

    op_names = frozenset({RegexFullMatchOp.name})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        pattern = get_attr(op, "pattern")
        if pattern is None:
            raise ValueError("RegexFullMatch needs its 'pattern' attribute")
        try:
            dfa = compile_pattern(pattern)
        except RegexError as error:
            raise NotImplementedError(str(error)) from None
        x = string_layout(inputs(op)[0])
        shape = tensor_shape(op.results[0])
        out = kb.alloc(result_name(op), shape, tensor_element_type(op.results[0]))
        if math.prod(shape) == 0:
            return [out]
        name = result_name(op)
        states, class_count = dfa.table.shape
        classes = kb.constant(f"{name}_byte_classes", dfa.classes, U8)
        table = kb.constant(f"{name}_dfa", dfa.table.reshape(-1), U8 if dfa.table.dtype == np.uint8 else IntegerType(16, Signedness.UNSIGNED))
        accept = kb.constant(f"{name}_accept", dfa.accept.astype(np.uint8), U8)
        t = Text(kb)
        with kb.loop_nest(shape) as ivs:
            state, alive = kb.define_acc(dfa.start, I32), kb.define_acc(1, I32)
            with kb.loop(x.shape[-1]) as j:
                byte = kb.load(x, [*ivs, j])
                live = t.alu("and", kb.acc_get(alive), kb.cast(t.alu("cmpne", kb.cast(byte, I32), t.c(0)), I32))
                kb.acc_set(alive, live)
                byte_class = kb.cast(kb.load(classes, [kb.cast(byte, IndexType())]), I32)
                at = t.alu("add", t.alu("mul", kb.acc_get(state), t.c(class_count)), byte_class)
                following = kb.cast(kb.load(table, [t.at(at, states * class_count)]), I32)
                kb.acc_set(state, t.where(t.alu("cmpne", live, t.c(0)), following, kb.acc_get(state)))
            accepted = kb.load(accept, [t.at(kb.acc_get(state), states)])
            kb.store(kb.alu("cmpne", kb.cast(accepted, I32), t.c(0)), out, ivs)
        return [out]


class StringNormalizerLowering(OnnxLowering):
    """Stopwords removed (whole elements equal to one, ASCII case-insensitively unless
    is_case_sensitive), the rest case-changed (ASCII letters; other bytes kept), in order; no
    element left gives one empty string. The input is [C] or [1, C]; the number of elements kept
    depends on the data: the output is compiled for its declared [C'] / [1, C'] and the kept
    count checked against it (status OUTPUT_SIZE)."""

    op_names = frozenset({StringNormalizerOp.name})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        x_value = inputs(op)[0]
        x = string_layout(x_value)
        in_shape, out_shape = tensor_shape(x_value), tensor_shape(op.results[0])
        if len(in_shape) == 2 and in_shape[0] == 1 and len(out_shape) == 2:
            x = Layout(x.buffer, x.shape[1:], x.strides[1:], x.offset)
            rows = (1,)
        elif len(in_shape) == 1 and len(out_shape) == 1:
            rows = ()
        else:
            raise ValueError(f"input of shape {list(in_shape)} (ONNX takes [C] or [1, C]), output {list(out_shape)}")
        count, kept_count = in_shape[-1], out_shape[-1]
        action = get_attr(op, "case_change_action") or "NONE"
        if action not in ("NONE", "LOWER", "UPPER"):
            raise ValueError(f"case_change_action '{action}' (NONE, LOWER or UPPER)")
        fold = None if action == "NONE" else action
        sensitive = bool(get_attr(op, "is_case_sensitive"))
        stopwords = list(get_attr(op, "stopwords") or [])
        _refuse_nul(stopwords, "stopwords")
        out = alloc_strings(kb, op)
        flat_out = Layout(out.buffer, out.shape[len(rows):], out.strides[len(rows):], out.offset)
        name = result_name(op)
        t = Text(kb)
        if count == 0:
            raise ValueError("an empty input (ONNX gives one empty string, whose shape the model cannot declare)")
        keep = kb.alloc(f"{name}_keep", (count,), I32)
        stops = string_table(kb, f"{name}_stopwords", stopwords) if stopwords else None
        total = kb.define_acc(0, I32)
        with kb.loop(count) as i:
            hit = kb.define_acc(0, I32)
            if stops is not None:
                with kb.loop(len(stopwords)) as k:
                    same = t.equal(x, [i], stops, [k], None if sensitive else "LOWER")
                    kb.acc_set(hit, t.alu("or", kb.acc_get(hit), kb.cast(same, I32)))
            kept = t.alu("xor", kb.acc_get(hit), t.c(1))
            kb.store(kept, keep, [i])
            kb.acc_set(total, t.alu("add", kb.acc_get(total), kept))
        kept_total = kb.acc_get(total)
        fits = t.alu("cmpeq", kept_total, t.c(kept_count))
        if kept_count == 1:
            fits = t.alu("or", fits, t.alu("cmpeq", kept_total, t.c(0)))
        check(kb, fits, abi.Status.OUTPUT_SIZE)
        with kb.loop(kept_count) as o:
            # the source of output o: the input whose kept prefix count is o when it is kept
            source, seen = kb.define_acc(-1, I32), kb.define_acc(0, I32)
            target = kb.cast(o, I32)
            with kb.loop(count) as i:
                kept = kb.load(keep, [i])
                chosen = t.alu("and", t.alu("cmpne", kept, t.c(0)), t.alu("cmpeq", kb.acc_get(seen), target))
                kb.acc_set(source, t.where(chosen, kb.cast(i, I32), kb.acc_get(source)))
                kb.acc_set(seen, t.alu("add", kb.acc_get(seen), kept))
            at = t.at(kb.acc_get(source), count)
            size = t.where(t.alu("cmple", t.c(0), kb.acc_get(source)), t.length(x, [at]), t.c(0))
            with kb.loop(x.shape[-1]) as j:
                byte = t.fold(t.byte(x, [at], j), fold)
                t.store(t.where(t.alu("cmplt", kb.cast(j, I32), size), byte, t.c(0)), flat_out, [o, j])
        return [out]


class StringSplitLowering(OnnxLowering):
    """Each string split at `delimiter` (Python's str.split: empty pieces kept), or at runs of
    ASCII whitespace when it is absent or empty (none kept, leading and trailing runs dropped),
    at most `maxsplit` times; pieces padded with empty strings to the last axis the model
    declares for them, `length` the number of pieces. More pieces than that axis is a run-time
    check (status OUTPUT_SIZE) made before anything is written; an undeclared axis is an error.

    Pass 1 gives every byte its piece number (-1: a delimiter byte or dropped whitespace) in a
    scratch row and counts the pieces; pass 2 makes piece p from the bytes numbered p, which
    are contiguous: its start is the first such byte, its length their count."""

    op_names = frozenset({StringSplitOp.name})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        x_value = inputs(op)[0]
        x = string_layout(x_value)
        shape = tensor_shape(x_value)
        pieces = tensor_shape(op.results[0])[-1]
        capacity = x.shape[-1]
        delimiter = (get_attr(op, "delimiter") or "").encode("utf-8")
        if b"\0" in delimiter:
            raise ValueError("a delimiter holding a NUL character")
        maxsplit = get_attr(op, "maxsplit")
        limit = None if maxsplit is None or maxsplit < 0 else int(maxsplit)
        out = alloc_strings(kb, op, 0)
        lengths = kb.alloc(result_name(op, 1), shape, tensor_element_type(op.results[1]))
        if math.prod(shape) == 0:
            return [out, lengths]
        t = Text(kb)
        name = result_name(op)
        piece_of = kb.alloc(f"{name}_piece_of", (*shape, capacity), I32)
        most = kb.define_acc(0, I32)
        with kb.loop_nest(shape) as ivs:
            found = self._number(t, x, ivs, piece_of, delimiter, limit)
            kb.store(kb.cast(found, tensor_element_type(op.results[1])), lengths, ivs)
            kb.acc_set(most, t.alu("max", kb.acc_get(most), found))
        check(kb, t.alu("cmple", kb.acc_get(most), t.c(pieces)), abi.Status.OUTPUT_SIZE)
        with kb.loop_nest(shape) as ivs:
            with kb.loop(pieces) as p:
                piece = kb.cast(p, I32)
                start, size = kb.define_acc(capacity, I32), kb.define_acc(0, I32)
                with kb.loop(capacity) as j:
                    mine = t.alu("cmpeq", kb.load(piece_of, [*ivs, j]), piece)
                    kb.acc_set(start, t.where(mine, t.alu("min", kb.acc_get(start), kb.cast(j, I32)), kb.acc_get(start)))
                    kb.acc_set(size, t.alu("add", kb.acc_get(size), kb.cast(mine, I32)))
                first, count = kb.acc_get(start), kb.acc_get(size)
                with kb.loop(capacity) as q:
                    offset = kb.cast(q, I32)
                    byte = t.byte(x, ivs, t.alu("add", first, offset))
                    t.store(t.where(t.alu("cmplt", offset, count), byte, t.c(0)), out, [*ivs, p, q])
        return [out, lengths]

    @staticmethod
    def _number(t: Text, x: Layout, ivs, piece_of: Layout, delimiter: bytes, limit: int | None) -> SSAValue:
        """Pass 1 over one field: each byte's piece number into `piece_of`; the piece count."""
        kb = t.kb
        capacity = x.shape[-1]
        alive = kb.define_acc(1, I32)
        piece = kb.define_acc(0, I32)  # separator mode: the current piece; whitespace: pieces started
        extra = kb.define_acc(0, I32)  # separator mode: delimiter bytes left to skip; whitespace: in a word
        can_split = lambda: t.c(1) if limit is None else kb.cast(t.alu("cmplt", kb.acc_get(piece), t.c(limit + (0 if delimiter else 1))), I32)  # noqa: E731
        with kb.loop(capacity) as j:
            byte = t.byte(x, ivs, j)
            live = t.alu("and", kb.acc_get(alive), kb.cast(t.alu("cmpne", byte, t.c(0)), I32))
            kb.acc_set(alive, live)
            is_live = t.alu("cmpne", live, t.c(0))
            position = kb.cast(j, I32)
            if delimiter:
                matched = t.alu("cmpne", can_split(), t.c(0))
                for k, expected in enumerate(delimiter):
                    inside = t.alu("cmplt", t.alu("add", position, t.c(k)), t.c(capacity))
                    same = t.alu("cmpeq", t.byte(x, ivs, t.alu("add", position, t.c(k))), t.c(expected))
                    matched = t.alu("and", matched, t.alu("and", inside, same))
                skipping = t.alu("cmplt", t.c(0), kb.acc_get(extra))
                starts = t.alu("and", t.alu("not", skipping), matched)
                number = t.where(t.alu("or", skipping, starts), t.c(-1), kb.acc_get(piece))
                kb.store(t.where(is_live, number, t.c(-1)), piece_of, [*ivs, j])
                gone = t.alu("and", is_live, starts)
                kb.acc_set(extra, t.where(gone, t.c(len(delimiter) - 1),
                                          t.where(skipping, t.alu("sub", kb.acc_get(extra), t.c(1)), kb.acc_get(extra))))
                kb.acc_set(piece, t.alu("add", kb.acc_get(piece), kb.cast(gone, I32)))
            else:
                # Python's ASCII whitespace: \t \n \v \f \r, the separators 0x1c-0x1f, space
                space = t.alu("or", t.alu("and", t.alu("cmple", t.c(9), byte), t.alu("cmple", byte, t.c(13))),
                              t.alu("and", t.alu("cmple", t.c(0x1C), byte), t.alu("cmple", byte, t.c(ord(" ")))))
                in_word = t.alu("cmpne", kb.acc_get(extra), t.c(0))
                ends = t.alu("and", t.alu("and", in_word, space), t.alu("cmpne", can_split(), t.c(0)))
                begins = t.alu("and", t.alu("not", in_word), t.alu("not", space))
                started = t.alu("add", kb.acc_get(piece), kb.cast(t.alu("and", is_live, begins), I32))
                inside = t.alu("and", t.alu("or", in_word, begins), t.alu("not", ends))
                number = t.where(t.alu("and", is_live, inside), t.alu("sub", started, t.c(1)), t.c(-1))
                kb.store(number, piece_of, [*ivs, j])
                kb.acc_set(piece, started)
                kb.acc_set(extra, t.where(is_live, kb.cast(inside, I32), kb.acc_get(extra)))
        # separator mode counts the splits made: pieces = splits + 1 (an empty string is one
        # empty piece, as in Python); whitespace mode counts the pieces started
        return t.alu("add", kb.acc_get(piece), t.c(1)) if delimiter else kb.acc_get(piece)


class StringLabelEncoderLowering(OnnxLowering):
    """LabelEncoder where the keys or the values are strings: each element's last matching
    key picks its value (the default where none matches), as ONNX's reference maps them."""

    op_names = frozenset()

    def matches(self, op: Operation) -> bool:
        return op.name in ml_op_names("LabelEncoder") and has_strings(op)

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        x_value = inputs(op)[0]
        result = op.results[0]
        shape = tensor_shape(result)
        keys, values = self._listed(op, "keys"), self._listed(op, "values")
        if keys is None or values is None or len(keys) != len(values):
            raise ValueError("keys and values must be given, one value per key")
        name = result_name(op)
        t = Text(kb)
        string_keys = string_capacity(x_value) is not None
        if string_keys:
            _refuse_nul(keys, "keys")
            key_table = string_table(kb, f"{name}_keys", keys)
            x = string_layout(x_value)
        else:
            key_table = kb.constant(f"{name}_keys", np.asarray(keys), tensor_element_type(x_value))
            x = layout_of(x_value)
        out_strings = string_capacity(result) is not None
        if out_strings:
            default = get_attr(op, "default_string")
            default = "_Unused" if default is None else default
            _refuse_nul([*values, default], "values")
            value_table = string_table(kb, f"{name}_values", [*values, default])
            out = alloc_strings(kb, op)
        else:
            out_type = tensor_element_type(result)
            default = get_attr(op, "default_tensor")
            if default is None:
                default = get_attr(op, "default_float" if isinstance(out_type, AnyFloat) else "default_int64")
            value_table = kb.constant(f"{name}_values", np.asarray([*values, np.asarray(default).item()]), out_type)
            out = kb.alloc(name, shape, out_type)
        with kb.loop_nest(shape) as ivs:
            chosen = kb.define_acc(len(keys), I32)  # the default's row
            with kb.loop(len(keys)) as k:
                if string_keys:
                    hit = t.equal(x, ivs, key_table, [k])
                else:
                    hit = kb.alu("cmpeq", kb.load(x, ivs), kb.load(key_table, [k]))
                kb.acc_set(chosen, t.where(hit, kb.cast(k, I32), kb.acc_get(chosen)))
            row = t.at(kb.acc_get(chosen), len(keys) + 1)
            if out_strings:
                with kb.loop(out.shape[-1]) as j:
                    inside = value_table.shape[-1]
                    byte = t.byte(value_table, [row], t.alu("min", kb.cast(j, I32), t.c(inside - 1)))
                    t.store(t.where(t.alu("cmplt", kb.cast(j, I32), t.c(inside)), byte, t.c(0)), out, [*ivs, j])
            else:
                kb.store(kb.load(value_table, [row]), out, ivs)
        return [out]

    @staticmethod
    def _listed(op: Operation, kind: str) -> list | None:
        for suffix in ("strings", "tensor", "floats", "int64s"):
            found = get_attr(op, f"{kind}_{suffix}")
            if found is not None and len(found):
                return list(found) if suffix == "strings" else np.asarray(found).ravel().tolist()
        return None


def copy_fields(kb: KernelBuilder, source: Layout, target: Layout) -> None:
    """Copy string fields between layouts of one element shape; a wider target field gets NUL
    bytes past the source's (capacities only grow along a graph)."""
    t = Text(kb)
    width = source.shape[-1]
    with kb.loop_nest(target.shape[:-1]) as ivs:
        with kb.loop(target.shape[-1]) as j:
            if target.shape[-1] <= width:
                byte = t.byte(source, ivs, j)
            else:
                position = kb.cast(j, I32)
                inside = t.alu("cmplt", position, t.c(width))
                byte = t.where(inside, t.byte(source, ivs, t.alu("min", position, t.c(width - 1))), t.c(0))
            t.store(byte, target, [*ivs, j])


class StringMovementLowering(OnnxLowering):
    """Identity, Reshape, Flatten, Squeeze, Unsqueeze, Transpose and Concat of string tensors:
    the fields as elements with one more, innermost, axis of bytes (a view where it can be)."""

    op_names = frozenset()
    MOVEMENT = frozenset({
        IdentityOp.name, ReshapeOp.name, FlattenOp.name, SqueezeOp.name, UnsqueezeOp.name, TransposeOp.name, ConcatOp.name,
    })

    def matches(self, op: Operation) -> bool:
        return op.name in self.MOVEMENT and string_capacity(op.results[0]) is not None

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        shape = tensor_shape(op.results[0])
        capacity = string_capacity(op.results[0])
        operands = [v for v in inputs(op) if v is not None]
        if isinstance(op, ConcatOp):
            axis = get_attr(op, "axis") % len(shape)
            out = alloc_strings(kb, op)
            start = 0
            for value in operands:
                source = string_layout(value)
                if source.shape[axis]:
                    copy_fields(kb, source, out.slice(axis, start, 1, source.shape[axis]))
                start += source.shape[axis]
            return [out]
        source = string_layout(operands[0])
        if any(constant_array(v) is None for v in operands[1:]):
            raise NotImplementedError("a run-time shape or axes input on a string tensor (freeze it)")
        if source.shape[-1] != capacity:
            raise ValueError(f"capacity {source.shape[-1]} in, {capacity} out")
        if isinstance(op, TransposeOp):
            perm = get_attr(op, "perm")
            perm = list(reversed(range(len(shape)))) if perm is None else list(perm)
            return [source.permute([*perm, len(shape)])]
        reshaped = source.reshape((*shape, capacity))
        if reshaped is None:  # a view the new shape cannot express: a row-major copy first
            copy = kb.alloc(result_name(op), source.shape, U8)
            copy_fields(kb, source, copy)
            reshaped = copy.reshape((*shape, capacity))
        return [reshaped]


class StringGatherLowering(OnnxLowering):
    """Gather of strings (a label table picked by an index, ...): the fields are the elements;
    a run-time index is a `uop.bound_index` (`check-data-indices` checks it before the kernel,
    status BAD_INDEX), a constant one is checked now."""

    op_names = frozenset()

    def matches(self, op: Operation) -> bool:
        return isinstance(op, GatherOp) and string_capacity(op.results[0]) is not None

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        data_value, indices_value = inputs(op)
        data, indices = string_layout(data_value), layout_of(indices_value)
        rank = len(tensor_shape(data_value))
        axis = get_attr(op, "axis") % rank
        known = constant_indices(op, 1, data.shape[axis])
        out = alloc_strings(kb, op)
        if data.shape[-1] != out.shape[-1]:
            raise ValueError(f"capacity {data.shape[-1]} in, {out.shape[-1]} out")
        split = axis + indices.rank  # each index read once, its slice of fields copied inside
        with kb.loop_nest(out.shape[:split]) as outer:
            picked = data_index(kb, kb.load(indices, outer[axis:]), data.shape[axis], known)
            with kb.loop_nest(out.shape[split:]) as inner:
                kb.store(kb.load(data, [*outer[:axis], picked, *inner]), out, [*outer, *inner])
        return [out]


class StringWhereLowering(OnnxLowering):
    """Where on strings, with broadcasting: each field from X or Y (a narrower one NUL-padded)."""

    op_names = frozenset()

    def matches(self, op: Operation) -> bool:
        return isinstance(op, WhereOp) and string_capacity(op.results[0]) is not None

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        condition_value, x_value, y_value = inputs(op)
        shape = tensor_shape(op.results[0])
        condition = layout_of(condition_value).broadcast_to(shape)
        x, y = (string_layout(v) for v in (x_value, y_value))
        x, y = x.broadcast_to((*shape, x.shape[-1])), y.broadcast_to((*shape, y.shape[-1]))
        out = alloc_strings(kb, op)
        t = Text(kb)

        def byte(field: Layout, ivs, j) -> SSAValue:
            if field.shape[-1] == out.shape[-1]:
                return t.byte(field, ivs, j)
            position = kb.cast(j, I32)
            inside = t.alu("cmplt", position, t.c(field.shape[-1]))
            return t.where(inside, t.byte(field, ivs, t.alu("min", position, t.c(field.shape[-1] - 1))), t.c(0))

        with kb.loop_nest(shape) as ivs:
            pick = kb.load(condition, ivs)
            with kb.loop(out.shape[-1]) as j:
                t.store(t.where(pick, byte(x, ivs, j), byte(y, ivs, j)), out, [*ivs, j])
        return [out]


class StringOneHotEncoderLowering(OnnxLowering):
    """OneHotEncoder of strings (`cats_strings`): Y[..., c] = 1 where X[...] is category c."""

    op_names = frozenset()

    def matches(self, op: Operation) -> bool:
        return op.name in ml_op_names("OneHotEncoder") and has_strings(op)

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        categories = list(get_attr(op, "cats_strings") or [])
        if not categories:
            raise ValueError("a string input needs cats_strings")
        if not get_attr(op, "zeros"):
            raise NotImplementedError("zeros=0 (an unknown category is a run-time error); use zeros=1")
        _refuse_nul(categories, "cats_strings")
        table = string_table(kb, f"{result_name(op)}_categories", categories)
        x = string_layout(inputs(op)[0])
        out_type = tensor_element_type(op.results[0])
        out = kb.alloc(result_name(op), tensor_shape(op.results[0]), out_type)
        t = Text(kb)
        one, zero = kb.const(1, out_type), kb.const(0, out_type)
        with kb.loop_nest(x.shape[:-1]) as ivs:
            with kb.loop(len(categories)) as c:
                kb.store(kb.where(t.equal(x, ivs, table, [c]), one, zero), out, [*ivs, c])
        return [out]


class StringTfIdfVectorizerLowering(OnnxLowering):
    """TfIdfVectorizer of string tokens (`pool_strings`): each token becomes the id of the pool
    string it equals (-1 for none) in a scratch tensor, then the integer lowering counts the
    ids' n-grams against the pool's (`text.py`)."""

    op_names = frozenset()

    def matches(self, op: Operation) -> bool:
        return isinstance(op, TfIdfVectorizerOp) and has_strings(op)

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        pool = list(get_attr(op, "pool_strings") or [])
        if not pool:
            raise ValueError("a string input needs pool_strings")
        _refuse_nul(pool, "pool_strings")
        ids = {text: index for index, text in enumerate(dict.fromkeys(pool))}
        grams = pool_grams(op, [ids[text] for text in pool])
        table = string_table(kb, f"{result_name(op)}_pool", list(ids))
        x = string_layout(inputs(op)[0])
        tokens = kb.alloc(f"{result_name(op)}_token_ids", x.shape[:-1], I64)
        t = Text(kb)
        with kb.loop_nest(x.shape[:-1]) as ivs:
            found = kb.define_acc(-1, I64)
            with kb.loop(len(ids)) as k:
                hit = t.equal(x, ivs, table, [k])
                kb.acc_set(found, kb.where(hit, kb.cast(k, I64), kb.acc_get(found)))
            kb.store(kb.acc_get(found), tokens, ivs)
        return TfIdfVectorizerLowering.counts(op, kb, tokens, grams)


STRING_LABEL_CLASSIFIERS = ml_op_names("LinearClassifier", "TreeEnsembleClassifier")
"""Classifiers whose label output may be strings: their own families write it (`ml.store_labels`)."""


class StringGuardLowering(OnnxLowering):
    """Any other op on string tensors: refused by name (the other families' kernels address
    elements, not fields of bytes)."""

    op_names = frozenset()
    SUPPORTED = ("StringConcat, StringSplit, StringNormalizer, RegexFullMatch, Equal, ai.onnx.ml.LabelEncoder, "
                 "OneHotEncoder, TfIdfVectorizer, the classifiers' labels, Identity, Reshape, Flatten, Squeeze, Unsqueeze, "
                 "Transpose, Concat, Gather and Where")

    def matches(self, op: Operation) -> bool:
        # a string Constant's value is its fields' bytes: constants.py's global takes it as is
        return (isinstance(op, OnnxOp) and has_strings(op) and op.name not in STRING_LABEL_CLASSIFIERS
                and not isinstance(op, ConstantOp))

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        raise NotImplementedError(f"string tensors are supported by {self.SUPPORTED} only")


PATTERNS = (
    StringConcatLowering(),
    StringEqualLowering(),
    RegexFullMatchLowering(),
    StringNormalizerLowering(),
    StringSplitLowering(),
    StringLabelEncoderLowering(),
    StringMovementLowering(),
    StringGatherLowering(),
    StringWhereLowering(),
    StringOneHotEncoderLowering(),
    StringTfIdfVectorizerLowering(),
    StringGuardLowering(),
)

__all__ = ["PATTERNS", "string_buffer_size", "string_capacity", "string_layout"]
