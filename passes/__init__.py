"""Zant's passes, keyed by kebab-case name, as lazy factories: importing `zant-opt` imports none.

Passes from outside the tree (files, modules, installed packages) join these in zant/plugins.py,
one layer up: `zant.plugins.all_passes()` is what the tools register.
"""

import importlib
from collections.abc import Callable

from xdsl.passes import ModulePass

BUILTIN_PASSES: dict[str, str] = {
    "set-target": "set_target:SetTargetPass",
    "fold-constants": "fold_constants:FoldConstantsPass",
    "fold-batchnorm": "fold_batchnorm:FoldBatchNormPass",
    "fold-pads": "fold_pads:FoldPadsPass",
    "inline-functions": "inline_functions:InlineFunctionsPass",
    "fold-qoperator": "fold_qoperator:FoldQOperatorPass",
    "fold-qdq": "fold_qdq:FoldQdqPass",
    "onnx-to-uop": "onnx_to_uop:OnnxToUopPass",
    "check-data-indices": "check_data_indices:CheckDataIndicesPass",
    "fuse-loops": "fuse_loops:FuseLoopsPass",
    "coalesce-loops": "coalesce_loops:CoalesceLoopsPass",
    "split-index-sets": "split_index_sets:SplitIndexSetsPass",
    "vectorize": "vectorize:VectorizePass",
    "plan-arenas": "plan_arenas:PlanArenasPass",
    "place-memories": "place_memories:PlaceMemoriesPass",
    "verify-arena-plan": "verify_arena_plan:VerifyArenaPlanPass",
    "mark-inbounds": "mark_inbounds:MarkInboundsPass",
    "contract-mulacc": "contract_mulacc:ContractMulaccPass",
    "expand-float-minmax": "expand_float_minmax:ExpandFloatMinmaxPass",
    "expand-transcendentals": "expand_transcendentals:ExpandTranscendentalsPass",
    "fold-constant-loads": "fold_constant_loads:FoldConstantLoadsPass",
    "linearize-geps": "linearize_geps:LinearizeGepsPass",
    "licm": "loop_invariant_code_motion:LoopInvariantCodeMotionPass",
    "dce": "dce:DeadCodeEliminationPass",
    "arm-dsp-dot": "arm_dsp_dot:ArmDspDotPass",
    "interleave-dot-rows": "interleave_dot_rows:InterleaveDotRowsPass",
    "mve-dot": "mve_dot:MveDotPass",
    "seed-accumulators": "seed_accumulators:SeedAccumulatorsPass",
    "fuse-smlad-bytes": "fuse_smlad_bytes:FuseSmladBytesPass",
    "unroll-dot-loops": "unroll_dot_loops:UnrollDotLoopsPass",
}
"""Pass name → `module:class` under `zant.passes`, imported when a pipeline first names it."""


def _factory(target: str) -> Callable[[], type[ModulePass]]:
    module, cls = target.split(":")
    return lambda: getattr(importlib.import_module(f"zant.passes.{module}"), cls)


def builtin_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Lazy factories for Zant's own passes."""
    return {name: _factory(target) for name, target in BUILTIN_PASSES.items()}
