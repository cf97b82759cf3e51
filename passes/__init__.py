"""Zant's passes, keyed by kebab-case name, as lazy factories: importing `zant-opt` imports none.

Passes of installed packages (entry point group `zant.passes`) are listed too; see zant/plugins.py.
"""

from collections.abc import Callable

from xdsl.passes import ModulePass


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    def get_fold_constants():
        from zant.passes.fold_constants import FoldConstantsPass

        return FoldConstantsPass

    def get_onnx_to_uop():
        from zant.passes.onnx_to_uop import OnnxToUopPass

        return OnnxToUopPass

    def get_plan_arenas():
        from zant.passes.plan_arenas import PlanArenasPass

        return PlanArenasPass

    def get_verify_arena_plan():
        from zant.passes.verify_arena_plan import VerifyArenaPlanPass

        return VerifyArenaPlanPass

    builtin = {
        "fold-constants": get_fold_constants,
        "onnx-to-uop": get_onnx_to_uop,
        "plan-arenas": get_plan_arenas,
        "verify-arena-plan": get_verify_arena_plan,
    }
    from zant.plugins import entry_point_passes

    return builtin | entry_point_passes(builtin)
