"""Recurrent layers: RNN, GRU, LSTM.

The sequence length is static, so each direction is one `uop.range` over the time steps; a step
is a loop nest over (batch, hidden) whose body computes the gates as dot products over the input
and the previous hidden state, then the cell's update as scalar ALU code. The hidden state is
double-buffered (a step reads every element of the previous one); the LSTM cell state is only
read at the element being written, so it is updated in place.

Everything that only changes where elements are read is a view: layout=1 is a permutation, a
reverse direction reads X and writes Y through time-reversed views, a direction or a gate is a
slice of W/R/B. With `sequence_lens`, a step past a batch entry's length keeps its state and
writes zeros to Y (ONNX: outputs past the length are 0; Y_h is the state at the last valid step).
Gate math runs in the accumulator type (f32 for 16-bit floats).

On targets with vector registers (`onnx-to-uop{conv-lanes=L}`), an f32 layer with constant W
and R and a hidden size that is a multiple of L takes the lane form:

* the input part of every gate at every step, X_t·W_gᵀ + Wb_g, does not depend on the state: it
  is computed before the recurrence, for all steps at once, as one MatMul in linalg's column-lane
  form (`lane_tiled_product`: register tiles of several steps' rows, each block of W read once
  for all of them) into XW[T, B, gates·H]; a step reads its row (the sums are the same, in the
  same order, as a step's own dot product over X_t). A sequence longer than XW_CHUNK steps runs
  in chunks (a chunk's input parts, then its steps), so XW stays XW_CHUNK × B × gates·H;
* each step runs its hidden units in blocks of L (`j = block·L + lane`, the lane loop innermost
  around the cell), every gate's R repacked as R'[H / L, H, L] (the L units of a block
  consecutive): the lane loop is what `vectorize{width=L}` vectorizes, so the gates' dot
  products over H_{t-1} are L-lane FMA chains (one per gate, independent, H_{t-1}[k] loaded
  once) and the cell's activations run on vectors. Only R is read in the recurrence: for a
  128-unit LSTM 256 KB per step, where W and R together (512 KB) outgrew the core's cache.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace

import numpy as np
from xdsl.dialects.builtin import Float32Type, IndexType
from xdsl.ir import Attribute, Operation, SSAValue
from zant.dialects.onnx import GRUOp, LSTMOp, RNNOp, get_attr, input_value, outputs
from zant.passes.onnx_to_uop.base import OnnxLowering, result_name
from zant.passes.onnx_to_uop.conv_tiling import VectorConv
from zant.passes.onnx_to_uop.elementwise import hard_sigmoid_of, softplus_of
from zant.passes.onnx_to_uop.kernel import (
    KernelBuilder,
    Layout,
    accumulator_type,
    layout_of,
    tensor_element_type,
    tensor_shape,
)
from zant.passes.onnx_to_uop.linalg import lane_tiled_product
from zant.passes.onnx_to_uop.parameters import constant_array

Activation = Callable[[KernelBuilder, SSAValue, float, float], SSAValue]

XW_CHUNK = 64
"""Steps whose input parts the lane form computes at once: a longer sequence runs in chunks, so
XW's scratch is at most XW_CHUNK × batch × gates·H (a chunk's rows still fill register tiles)."""


def _c(kb: KernelBuilder, value: float, like: SSAValue) -> SSAValue:
    return kb.const(value, like.type)


def _sigmoid(kb: KernelBuilder, x: SSAValue, alpha: float, beta: float) -> SSAValue:
    one = _c(kb, 1, x)
    return kb.alu("div", one, kb.alu("add", one, kb.alu("exp", kb.alu("neg", x))))


def _affine(kb: KernelBuilder, x: SSAValue, alpha: float, beta: float) -> SSAValue:
    return kb.alu("add", kb.alu("mul", _c(kb, alpha, x), x), _c(kb, beta, x))


def _leaky_relu(kb: KernelBuilder, x: SSAValue, alpha: float, beta: float) -> SSAValue:
    negative = kb.alu("cmplt", x, _c(kb, 0, x))
    return kb.where(negative, kb.alu("mul", _c(kb, alpha, x), x), x)


def _thresholded_relu(kb: KernelBuilder, x: SSAValue, alpha: float, beta: float) -> SSAValue:
    return kb.where(kb.alu("cmplt", _c(kb, alpha, x), x), x, _c(kb, 0, x))


def _scaled_tanh(kb: KernelBuilder, x: SSAValue, alpha: float, beta: float) -> SSAValue:
    return kb.alu("mul", _c(kb, alpha, x), kb.alu("tanh", kb.alu("mul", _c(kb, beta, x), x)))


def _elu(kb: KernelBuilder, x: SSAValue, alpha: float, beta: float) -> SSAValue:
    expm1 = kb.alu("sub", kb.alu("exp", x), _c(kb, 1, x))
    return kb.where(kb.alu("cmplt", x, _c(kb, 0, x)), kb.alu("mul", _c(kb, alpha, x), expm1), x)


def _softsign(kb: KernelBuilder, x: SSAValue, alpha: float, beta: float) -> SSAValue:
    return kb.alu("div", x, kb.alu("add", _c(kb, 1, x), kb.alu("abs", x)))


@dataclass(frozen=True)
class ActivationKind:
    fn: Activation
    defaults: tuple[float, ...] = ()
    """Default alpha (and beta): an activation with defaults consumes that many entries of
    activation_alpha (and activation_beta), in the order of the activations list."""


ACTIVATIONS: dict[str, ActivationKind] = {
    "relu": ActivationKind(lambda kb, x, a, b: kb.alu("max", x, _c(kb, 0, x))),
    "tanh": ActivationKind(lambda kb, x, a, b: kb.alu("tanh", x)),
    "sigmoid": ActivationKind(_sigmoid),
    "affine": ActivationKind(_affine, (1.0, 0.0)),
    "leakyrelu": ActivationKind(_leaky_relu, (0.01,)),
    "thresholdedrelu": ActivationKind(_thresholded_relu, (1.0,)),
    "scaledtanh": ActivationKind(_scaled_tanh, (1.0, 1.0)),
    "hardsigmoid": ActivationKind(lambda kb, x, a, b: hard_sigmoid_of(kb, x, a, b), (0.2, 0.5)),
    "elu": ActivationKind(_elu, (1.0,)),
    "softsign": ActivationKind(_softsign),
    "softplus": ActivationKind(lambda kb, x, a, b: softplus_of(kb, x)),
}

ScalarFn = Callable[[KernelBuilder, SSAValue], SSAValue]


def _activations(op: Operation, defaults: tuple[str, ...], directions: int) -> list[list[ScalarFn]]:
    """The activation functions of each direction, alpha/beta bound, from the attributes."""
    # Not the schema default: RNN's lists two Tanh even for one direction.
    given = op.properties.get("activations") is not None
    names = get_attr(op, "activations") if given else list(defaults) * directions
    if len(names) != len(defaults) * directions:
        raise ValueError(f"expected {len(defaults) * directions} activations, got {len(names)}")
    alphas = list(get_attr(op, "activation_alpha") or [])
    betas = list(get_attr(op, "activation_beta") or [])
    bound: list[ScalarFn] = []
    for name in names:
        kind = ACTIVATIONS.get(name.lower())
        if kind is None:
            raise NotImplementedError(f"activation function '{name}' is not supported")
        alpha = alphas.pop(0) if len(kind.defaults) > 0 and alphas else (kind.defaults + (0.0,))[0]
        beta = betas.pop(0) if len(kind.defaults) > 1 and betas else (kind.defaults + (0.0, 0.0))[1]
        bound.append(lambda kb, x, fn=kind.fn, a=alpha, b=beta: fn(kb, x, a, b))
    return [bound[d * len(defaults) : (d + 1) * len(defaults)] for d in range(directions)]


def _select(layout: Layout, axis: int, index: int) -> Layout:
    """The sub-tensor at `index` along `axis`, that dimension dropped."""
    return replace(
        layout,
        shape=layout.shape[:axis] + layout.shape[axis + 1 :],
        strides=layout.strides[:axis] + layout.strides[axis + 1 :],
        offset=layout.offset + index * layout.strides[axis],
    )


def _pick(layout: Layout | None, axis: int, index: int) -> Layout | None:
    """`_select` of an optional tensor."""
    return None if layout is None else _select(layout, axis, index)


def _split(layout: Layout, parts: int) -> list[Layout]:
    """`parts` equal slices along the first axis (the gates stacked in W, R, B, P)."""
    size = layout.shape[0] // parts
    return [layout.slice(0, p * size, 1, size) for p in range(parts)]


def _concat_gates(parts: list[Layout]) -> Layout:
    """The gates' slices of one stacked tensor (`_split`), whole again: gates·H along axis 0."""
    first = parts[0]
    return replace(first, shape=(first.shape[0] * len(parts), *first.shape[1:]))


def _reverse_time(layout: Layout) -> Layout:
    return layout.slice(0, layout.shape[0] - 1, -1, layout.shape[0])


@dataclass
class Direction:
    """One direction's operands, its state buffers and its place in the outputs (all logical
    layout-0 views: X (T, B, I), Y (T, B, H), states (B, H); gate-indexed lists)."""

    x: Layout
    w: list[Layout]
    r: list[Layout]
    wb: list[Layout] | None
    rb: list[Layout] | None
    p: list[Layout] | None
    acts: list[ScalarFn]
    y: Layout | None
    h: Layout
    h_next: Layout
    c: Layout | None
    reverse: bool
    xw: list[Layout] | None = None
    """The lane form's input parts X_t·W_gᵀ + Wb_g of every step, (T, B, H) per gate (None: the
    plain form)."""
    r_lanes: list[Layout] | None = None
    """R_g repacked as R'[H / L, H, L] for the lane form (None: the plain one)."""


@dataclass
class Step:
    """The code context of one (time, batch, hidden) element."""

    kb: KernelBuilder
    d: Direction
    t: SSAValue
    b: SSAValue
    j: SSAValue
    compute: Attribute
    clip: float | None
    mask: SSAValue | None
    """i1: this time step is within the batch entry's sequence length (None: always)."""
    block: SSAValue | None = None
    lane: SSAValue | None = None
    """j = block·L + lane in the lane form (None: the plain one)."""
    hidden_dots: list[SSAValue] | None = None
    """The lane form's gate dot products over H_{t-1}, once computed."""
    row: SSAValue | None = None
    """This step's row of the chunk's XW (the lane form)."""

    def all_hidden_dots(self) -> list[SSAValue]:
        """Every gate's H_{t-1}·R_gᵀ of the lane form, in one loop over k: one independent
        accumulator per gate, H_{t-1}[k] loaded once."""
        if self.hidden_dots is None:
            packed = self.d.r_lanes
            assert packed is not None
            accs = [self.kb.define_acc(0, self.compute) for _ in packed]
            with self.kb.loop(self.d.h.shape[1]) as k:
                v = self.load(self.d.h, [self.b, k])
                for acc, matrix in zip(accs, packed):
                    self.kb.mulacc(acc, v, self.load(matrix, [self.block, k, self.lane]))
            self.hidden_dots = [self.kb.acc_get(acc) for acc in accs]
        return self.hidden_dots

    def load(self, layout: Layout, indices: Sequence[SSAValue]) -> SSAValue:
        return self.kb.cast(self.kb.load(layout, indices), self.compute)

    def dot(
        self, vector: Callable[[SSAValue], SSAValue], matrix: Layout, length: int, packed: list[Layout] | None, gate: int
    ) -> SSAValue:
        """Σ_k vector(k) · matrix[j, k] (read from its repacked copy in the lane form)."""
        acc = self.kb.define_acc(0, self.compute)
        with self.kb.loop(length) as k:
            v = vector(k)
            if packed is not None and self.block is not None:
                weight = self.load(packed[gate], [self.block, k, self.lane])
            else:
                weight = self.load(matrix, [self.j, k])
            self.kb.mulacc(acc, v, weight)
        return self.kb.acc_get(acc)

    def input_part(self, gate: int) -> SSAValue:
        """X_t·W_gᵀ + Wb_g at this element."""
        if self.d.xw is not None:
            assert self.row is not None
            return self.load(self.d.xw[gate], [self.row, self.b, self.j])
        value = self.dot(lambda k: self.load(self.d.x, [self.t, self.b, k]), self.d.w[gate], self.d.x.shape[2],
                         None, gate)
        return self.bias(value, self.d.wb, gate)

    def hidden_part(self, gate: int, scale: Layout | None = None) -> SSAValue:
        """H_{t-1}·R_gᵀ + Rb_g, H optionally multiplied element-wise by `scale` (GRU's reset)."""

        def vector(k: SSAValue) -> SSAValue:
            h = self.load(self.d.h, [self.b, k])
            return h if scale is None else self.kb.alu("mul", self.load(scale, [self.b, k]), h)

        if self.block is not None and scale is None:
            return self.bias(self.all_hidden_dots()[gate], self.d.rb, gate)
        value = self.dot(vector, self.d.r[gate], self.d.h.shape[1], self.d.r_lanes, gate)
        return self.bias(value, self.d.rb, gate)

    def bias(self, value: SSAValue, biases: list[Layout] | None, gate: int) -> SSAValue:
        if biases is None:
            return value
        return self.kb.alu("add", value, self.load(biases[gate], [self.j]))

    def gate(self, gate: int) -> SSAValue:
        return self.kb.alu("add", self.input_part(gate), self.hidden_part(gate))

    def peephole(self, value: SSAValue, index: int, cell: SSAValue) -> SSAValue:
        if self.d.p is None:
            return value
        return self.kb.alu("add", value, self.kb.alu("mul", self.load(self.d.p[index], [self.j]), cell))

    def activate(self, index: int, value: SSAValue, clipped: bool = True) -> SSAValue:
        """The direction's activation `index` of a gate input, clipped to ±clip when set (the
        cell state passed to LSTM's h is not a gate input and is not clipped)."""
        if self.clip is not None and clipped:
            value = self.kb.alu("max", value, _c(self.kb, -self.clip, value))
            value = self.kb.alu("min", value, _c(self.kb, self.clip, value))
        return self.d.acts[index](self.kb, value)

    def h_prev(self) -> SSAValue:
        return self.load(self.d.h, [self.b, self.j])

    def one_minus(self, value: SSAValue) -> SSAValue:
        return self.kb.alu("sub", _c(self.kb, 1, value), value)


def _rnn_cell(s: Step) -> SSAValue:
    return s.activate(0, s.gate(0))


def _lstm_cell(s: Step, input_forget: bool) -> SSAValue:
    """Gates i, o, f, c; peepholes P = (p_i, p_o, p_f); returns H and updates the cell state."""
    assert s.d.c is not None
    c_prev = s.load(s.d.c, [s.b, s.j])
    i = s.activate(0, s.peephole(s.gate(0), 0, c_prev))
    f = s.one_minus(i) if input_forget else s.activate(0, s.peephole(s.gate(2), 2, c_prev))
    g = s.activate(1, s.gate(3))
    c = s.kb.alu("add", s.kb.alu("mul", f, c_prev), s.kb.alu("mul", i, g))
    o = s.activate(0, s.peephole(s.gate(1), 1, c))
    s.kb.store(s.kb.cast(_masked_state(s, c, lambda: c_prev), s.d.c.element_type), s.d.c, [s.b, s.j])
    return s.kb.alu("mul", o, s.activate(2, c, clipped=False))


def _gru_cell(s: Step, linear_before_reset: bool, reset: Layout | None) -> SSAValue:
    """Gates z, r, h: H = (1 - z)·h̃ + z·H_{t-1}, where h̃ applies the reset gate r to H_{t-1}
    before R_h (default; r precomputed into `reset`) or to the product (linear_before_reset)."""
    z = s.activate(0, s.gate(0))
    if linear_before_reset:
        r = s.activate(0, s.gate(1))
        candidate = s.kb.alu("add", s.input_part(2), s.kb.alu("mul", r, s.hidden_part(2)))
    else:
        candidate = s.kb.alu("add", s.input_part(2), s.hidden_part(2, scale=reset))
    h_tilde = s.activate(1, candidate)
    return s.kb.alu("add", s.kb.alu("mul", s.one_minus(z), h_tilde), s.kb.alu("mul", z, s.h_prev()))


def _masked_state(s: Step, new: SSAValue, old: Callable[[], SSAValue]) -> SSAValue:
    """Past a batch entry's sequence length the state is kept (`old` is only read then)."""
    return new if s.mask is None else s.kb.where(s.mask, new, old())


@dataclass(frozen=True)
class CellKind:
    gates: int
    activations: tuple[str, ...]
    """The default activation of each role (f, g, h): one list entry per role and direction."""


CELLS = {
    RNNOp.name: CellKind(1, ("Tanh",)),
    GRUOp.name: CellKind(3, ("Sigmoid", "Tanh")),
    LSTMOp.name: CellKind(4, ("Sigmoid", "Tanh", "Tanh")),
}
SEQUENCE_LENS, INITIAL_H, INITIAL_C, PEEPHOLES = 4, 5, 6, 7


def _optional(op: Operation, index: int) -> Layout | None:
    value = input_value(op, index)
    return None if value is None else layout_of(value)


def _batch_major(layout: Layout | None, perm: Sequence[int], batch_major: bool) -> Layout | None:
    """A layout=1 tensor seen in the layout=0 order."""
    return layout.permute(perm) if layout is not None and batch_major else layout


class RecurrentLowering(OnnxLowering):
    """`RNN`, `GRU` and `LSTM`: every direction, activation list (with alpha/beta), clip,
    layout, GRU's linear_before_reset, LSTM's input_forget and peepholes, sequence_lens and
    optional initial states; any subset of the outputs Y, Y_h, Y_c."""

    op_names = frozenset(CELLS)

    def __init__(self, vector: VectorConv | None = None):
        self.vector = vector

    def _lane_weights(self, value: SSAValue, gates: int) -> np.ndarray | None:
        """The constant W or R (directions, gates·H, K) when the lane form applies, else None."""
        if self.vector is None:
            return None
        array = constant_array(value)
        if array is None or array.dtype != np.float32 or array.shape[1] % (gates * self.vector.lanes):
            return None
        return array

    def _input_parts(
        self, kb: KernelBuilder, d: Direction, w: np.ndarray, xw: Layout, first: int, steps: int,
        chunk: SSAValue | None = None, chunks: int = 1,
    ) -> None:
        """XW[s, b, g·H + j] = X_t[b]·W_g[j]ᵀ + Wb_g[j] for the `steps` steps t = first +
        chunk·steps + s (this direction's W, in X's step order; `chunk`, one of `chunks`, None:
        0), one column-lane MatMul over the steps' rows (T and B one dimension when X's view
        allows)."""
        assert self.vector is not None
        _, batch, depth = d.x.shape
        columns = w.shape[0]
        bias = None if d.wb is None else _concat_gates(d.wb)
        step_stride, batch_stride, k_stride = d.x.strides
        offset = d.x.offset + first * step_stride
        if batch == 1 or step_stride == batch * batch_stride:
            # One row per (step, batch entry): register tiles of several steps' rows.
            row_stride = step_stride if batch == 1 else batch_stride
            x = Layout(d.x.buffer, (steps * batch, depth), (row_stride, k_stride), offset)
            out = Layout(xw.buffer, (steps * batch, columns), (columns, 1), xw.offset)
        else:
            x = Layout(d.x.buffer, (steps, batch, depth), (step_stride, batch_stride, k_stride), offset)
            out = Layout(xw.buffer, (steps, batch, columns), (batch * columns, columns, 1), xw.offset)
        outer: list[SSAValue] = []
        if chunk is not None:
            # The chunk's rows: X seen as (chunks, rows…), XW as the same buffer for every chunk.
            x = replace(x, shape=(chunks, *x.shape), strides=(steps * step_stride, *x.strides))
            out = replace(out, shape=(chunks, *out.shape), strides=(0, *out.strides))
            outer = [chunk]

        def epilogue(kb: KernelBuilder, value: SSAValue, rows: list[SSAValue], i: SSAValue, j: SSAValue) -> SSAValue:
            return value if bias is None else kb.alu("add", value, kb.load(bias, [j]))

        done = lane_tiled_product(kb, self.vector, x, np.ascontiguousarray(w.T), out, epilogue, outer)
        assert done == columns

    def _packed(self, kb: KernelBuilder, value: SSAValue, d: int, gates: int, name: str) -> list[Layout] | None:
        """Direction d's gate matrices of the constant R as R'[H / L, K, L], or None."""
        array = self._lane_weights(value, gates)
        if array is None:
            return None
        assert self.vector is not None
        lanes = self.vector.lanes
        hidden, depth = array.shape[1] // gates, array.shape[2]
        return [
            kb.constant(f"{name}_lanes", np.ascontiguousarray(
                array[d, g * hidden:(g + 1) * hidden].reshape(hidden // lanes, lanes, depth).transpose(0, 2, 1)
            ), Float32Type())
            for g in range(gates)
        ]

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        cell = CELLS[op.name]
        batch_major = get_attr(op, "layout") == 1
        direction = get_attr(op, "direction")
        if direction not in ("forward", "reverse", "bidirectional"):
            raise ValueError(f"unknown direction '{direction}'")
        x = _batch_major(layout_of(input_value(op, 0)), (1, 0, 2), batch_major)
        w, r = layout_of(input_value(op, 1)), layout_of(input_value(op, 2))
        assert x is not None
        steps, batch, _ = x.shape
        directions, _, hidden = r.shape
        if directions != (2 if direction == "bidirectional" else 1):
            raise ValueError(f"{directions} directions in W/R for direction '{direction}'")
        element_type = tensor_element_type(input_value(op, 0))
        compute = accumulator_type(element_type)
        acts = _activations(op, cell.activations, directions)

        results: list[Layout] = []
        logical: list[Layout | None] = []
        for index, value in enumerate(outputs(op)):
            if value is None:
                logical.append(None)
                continue
            layout = kb.alloc(result_name(op, op.results.index(value)), tensor_shape(value), element_type)
            results.append(layout)
            perm = (1, 2, 0, 3) if index == 0 else (1, 0, 2)
            # An unused output (the TorchScript exporter names Y_h and Y_c always) is not
            # written: its buffer only stands in for the result.
            logical.append(_batch_major(layout, perm, batch_major) if value.uses else None)
        logical += [None] * (3 - len(logical))

        b = _optional(op, 3)
        lstm = isinstance(op, LSTMOp)
        p = _optional(op, PEEPHOLES) if lstm else None
        initial_h = _batch_major(_optional(op, INITIAL_H), (1, 0, 2), batch_major)
        initial_c = _batch_major(_optional(op, INITIAL_C), (1, 0, 2), batch_major) if lstm else None
        sequence_lens = _optional(op, SEQUENCE_LENS)
        clip = get_attr(op, "clip")
        name = result_name(op, 0)
        for d in range(directions):
            reverse = direction == "reverse" or d == 1
            in_time = _reverse_time if reverse else lambda layout: layout
            y = _pick(logical[0], 1, d)
            biases = None if b is None else _split(_select(b, 0, d), 2 * cell.gates)
            state = Direction(
                x=in_time(x),
                w=_split(_select(w, 0, d), cell.gates),
                r=_split(_select(r, 0, d), cell.gates),
                wb=None if biases is None else biases[: cell.gates],
                rb=None if biases is None else biases[cell.gates :],
                p=None if p is None else _split(_select(p, 0, d), 3),
                acts=acts[d],
                y=None if y is None else in_time(y),
                h=kb.alloc(f"{name}_h{d}", (batch, hidden), compute),
                h_next=kb.alloc(f"{name}_hnext{d}", (batch, hidden), compute),
                c=kb.alloc(f"{name}_c{d}", (batch, hidden), compute) if lstm else None,
                reverse=reverse,
            )
            if isinstance(compute, Float32Type) and isinstance(element_type, Float32Type):
                w_array = self._lane_weights(input_value(op, 1), cell.gates)
                r_lanes = None
                if w_array is not None:
                    r_lanes = self._packed(kb, input_value(op, 2), d, cell.gates, f"{name}_r{d}")
                if w_array is not None and r_lanes is not None:
                    xw = kb.alloc(f"{name}_xw{d}", (min(steps, XW_CHUNK), batch, cell.gates * hidden), compute)
                    gates = [xw.slice(2, g * hidden, 1, hidden) for g in range(cell.gates)]
                    state = replace(state, xw=gates, r_lanes=r_lanes)
            _init_state(kb, state.h, _pick(initial_h, 0, d))
            if state.c is not None:
                _init_state(kb, state.c, _pick(initial_c, 0, d))
            if state.xw is None:
                with kb.loop(steps) as t:
                    self._step(op, kb, state, t, sequence_lens, compute, clip)
            else:
                # Chunks of XW_CHUNK steps (a shorter sequence: one): the chunk's input parts,
                # then its steps.
                assert w_array is not None
                chunk = min(steps, XW_CHUNK)
                whole, rest = divmod(steps, chunk)
                for count, first, size in ((whole, 0, chunk), (1, whole * chunk, rest)):
                    if not count or not size:
                        continue
                    with _chunks(kb, count) as c:
                        self._input_parts(kb, state, w_array[d], xw, first, size, c, count)
                        with kb.loop(size) as s:
                            t = s if c is None else kb.alu("add", kb.alu("mul", c, kb.index(size)), s)
                            if first:
                                t = kb.alu("add", t, kb.index(first))
                            self._step(op, kb, state, t, sequence_lens, compute, clip, s)
            for final, out in ((state.h, logical[1]), (state.c, logical[2])):
                if final is not None and out is not None:
                    _copy(kb, final, _select(out, 0, d))
        return results

    def _step(
        self,
        op: Operation,
        kb: KernelBuilder,
        d: Direction,
        t: SSAValue,
        sequence_lens: Layout | None,
        compute: Attribute,
        clip: float | None,
        row: SSAValue | None = None,
    ) -> None:
        """One time step t; `row`: the step's row of the chunk's XW (lane form)."""
        steps, batch, _ = d.x.shape
        hidden = d.h.shape[1]

        def element_step(b: SSAValue, j: SSAValue, block: SSAValue | None = None, lane: SSAValue | None = None) -> Step:
            mask = None
            if sequence_lens is not None:
                time = kb.alu("sub", kb.index(steps - 1), t) if d.reverse else t
                length = kb.cast(kb.load(sequence_lens, [b]), IndexType())
                mask = kb.alu("cmplt", time, length)
            return Step(kb, d, t, b, j, compute, clip, mask, block, lane, row=row)

        reset = None
        if isinstance(op, GRUOp) and not get_attr(op, "linear_before_reset"):
            # The reset gate of every hidden unit, before R_h reads r ⊙ H_{t-1} as a whole.
            reset = kb.alloc(f"{result_name(op, 0)}_reset", (batch, hidden), compute)
            with kb.loop_nest((batch, hidden)) as (b, j):
                s = element_step(b, j)
                kb.store(s.activate(0, s.gate(1)), reset, [b, j])
        with _hidden_units(kb, d, batch, hidden, self.vector) as (b, j, block, lane):
            s = element_step(b, j, block, lane)
            if isinstance(op, LSTMOp):
                h = _lstm_cell(s, bool(get_attr(op, "input_forget")))
            elif isinstance(op, GRUOp):
                h = _gru_cell(s, bool(get_attr(op, "linear_before_reset")), reset)
            else:
                h = _rnn_cell(s)
            kb.store(_masked_state(s, h, s.h_prev), d.h_next, [b, j])
            if d.y is not None:
                out = h if s.mask is None else kb.where(s.mask, h, _c(kb, 0, h))
                kb.store(kb.cast(out, d.y.element_type), d.y, [t, b, j])
        _copy(kb, d.h_next, d.h)


@contextmanager
def _chunks(kb: KernelBuilder, count: int) -> Iterator[SSAValue | None]:
    """A loop over `count` chunks, or no loop (None) for one."""
    if count == 1:
        yield None
        return
    with kb.loop(count) as c:
        yield c


@contextmanager
def _hidden_units(
    kb: KernelBuilder, d: Direction, batch: int, hidden: int, vector: VectorConv | None
) -> Iterator[tuple[SSAValue, SSAValue, SSAValue | None, SSAValue | None]]:
    """Loops over (batch, hidden unit j): plain, or in the lane form (b, block, lane) with
    j = block·L + lane; yields (b, j, block, lane), block and lane None when plain."""
    if d.r_lanes is None or vector is None:
        with kb.loop_nest((batch, hidden)) as (b, j):
            yield b, j, None, None
        return
    lanes = vector.lanes
    with kb.loop(batch) as b, kb.loop(hidden // lanes) as block, kb.loop(lanes) as lane:
        yield b, kb.alu("add", kb.alu("mul", block, kb.index(lanes)), lane), block, lane


def _init_state(kb: KernelBuilder, state: Layout, initial: Layout | None) -> None:
    if initial is not None:
        _copy(kb, initial, state)
        return
    with kb.loop_nest(state.shape) as ivs:
        kb.store(kb.const(0, state.element_type), state, ivs)


def _copy(kb: KernelBuilder, source: Layout, target: Layout) -> None:
    """An element-wise copy converting the element type (state ↔ tensor)."""
    with kb.loop_nest(source.shape) as ivs:
        kb.store(kb.cast(kb.load(source, ivs), target.element_type), target, ivs)


PATTERNS = (RecurrentLowering(),)
