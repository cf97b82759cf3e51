"""`zant.analysis.use_density`: loads and stores of each scratch buffer per call, per byte."""

from __future__ import annotations

from pathlib import Path

from xdsl.dialects import func
from xdsl.parser import Parser

from zant.analysis.use_density import trip_count, use_densities
from zant.dialects.uop import RangeOp
from zant.driver import make_context

CASE = Path(__file__).parent / "filecheck" / "passes" / "place-memories.mlir"


def test_accesses_count_every_iteration_of_the_loops_around_them():
    module = Parser(make_context(), CASE.read_text()).parse_module()
    function = next(op for op in module.walk() if isinstance(op, func.FuncOp))
    found = {d.buffer.tensor_name.data: d for d in use_densities(function).values()}
    # big: 64 stores, then 4 loads in each of 100 rounds; hot: a load and a store in each of
    # 100 x 4 iterations, then 4 loads.
    assert (found["big"].accesses, found["big"].size) == (64 + 400, 256)
    assert (found["hot"].accesses, found["hot"].size) == (800 + 4, 16)
    assert found["hot"].density == 804 / 16 > found["big"].density == 464 / 256


def test_trip_counts():
    assert [trip_count(RangeOp(a, b, s)) for a, b, s in ((0, 10, 1), (0, 10, 3), (5, 5, 1), (4, 2, 1))] == [10, 4, 0, 0]
