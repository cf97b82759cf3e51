"""Zant's dialects, registered lazily by name (importing the tool imports none of them)."""

from collections.abc import Callable

from xdsl.ir import Dialect


def get_all_dialects() -> dict[str, Callable[[], Dialect]]:
    def get_onnx() -> Dialect:
        from zant.dialects.onnx import ONNX

        return ONNX

    def get_uop() -> Dialect:
        from zant.dialects.uop import UOp

        return UOp

    return {"onnx": get_onnx, "uop": get_uop}
