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

    def get_abi() -> Dialect:
        from zant.dialects.abi import ABI

        return ABI

    def get_arm_dsp() -> Dialect:
        from zant.dialects.arm_dsp import ArmDsp

        return ArmDsp

    def get_arm_mve() -> Dialect:
        from zant.dialects.arm_mve import ArmMve

        return ArmMve

    def get_image() -> Dialect:
        from zant.dialects.image import Image

        return Image

    def get_zant() -> Dialect:
        from zant.dialects.zant import Zant

        return Zant

    return {
        "onnx": get_onnx, "uop": get_uop, "abi": get_abi, "arm_dsp": get_arm_dsp, "arm_mve": get_arm_mve,
        "image": get_image, "zant": get_zant,
    }
