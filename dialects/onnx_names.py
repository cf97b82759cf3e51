"""The names the `onnx` dialect (`onnx_base`, `onnx_ops`) and its schemas (`onnx_schemas`) share:
the ONNX domains, how an operator's dialect op and class are named, which schema an op class was
generated from. Imports nothing, so that both sides can import it."""

from __future__ import annotations

from typing import NamedTuple

ML_DOMAIN = "ai.onnx.ml"
"""The traditional machine-learning operators (tree ensembles, linear models, scalers)."""

TRAINING_DOMAIN = "ai.onnx.preview.training"
"""The optimizers' update rules (Adagrad, Adam, Momentum) and Gradient."""

LOWERED_DOMAINS = (ML_DOMAIN, TRAINING_DOMAIN)
"""The domains besides the default one whose ops the importer keeps (when they have a lowering)."""

CONTRIB_DOMAIN = "com.microsoft"
"""onnxruntime's contrib operators; `onnx.defs` has no schemas for them, so the ones a pass
creates are written here, and registered like the generated ops so printed IR parses back."""

ZANT_DOMAIN = "ai.zant"
"""Zant's own operators, which passes (and the control-flow unroller) make and no exporter writes
(the importer refuses the domain in a model): `LookupTable`, `Guard`, `SequenceSelect`."""

_DOMAIN_PREFIXES = {"": "", "ai.onnx": "", ML_DOMAIN: "ml.", TRAINING_DOMAIN: "training."}
"""ONNX domain → the op-name prefix inside the `onnx` dialect. ONNX op types have no dots, so
`onnx.ml.TreeEnsemble` cannot clash with a default-domain op."""


def op_name(op_type: str, domain: str = "") -> str:
    """The dialect op name of an ONNX operator: `onnx.Conv`, `onnx.ml.TreeEnsemble`; other
    domains get a name no op of the dialect has (`onnx.com.example.Op`)."""
    return f"onnx.{_DOMAIN_PREFIXES.get(domain, domain + '.')}{op_type}"


def op_class_name(op_type: str, domain: str = "") -> str:
    """The Python name of an op's class: `ConvOp`, `MlTreeEnsembleOp`, `TrainingAdamOp`; other
    domains' ops take none (`QLinearAddOp`)."""
    return f"{_DOMAIN_PREFIXES.get(domain, '').title().replace('.', '')}{op_type}Op"


class SchemaKey(NamedTuple):
    """Which `OpSchema` an op class was generated from: its domain ("" for the default one),
    operator type and version (`since_version`)."""

    domain: str
    op_type: str
    version: int


REGENERATE = "python -m zant.dialects.onnx_gen"
"""The command that rewrites `onnx_ops.py` from the installed `onnx`'s schemas."""

QLINEAR_ADD_INPUTS = (
    "A", "A_scale", "A_zero_point", "B", "B_scale", "B_zero_point", "C_scale", "C_zero_point"
)
"""com.microsoft's QLinearAdd and QLinearMul inputs."""

QLINEAR_UNARY_INPUTS = ("X", "X_scale", "X_zero_point", "Y_scale", "Y_zero_point")
"""com.microsoft's unary QLinear inputs (QLinearLeakyRelu, QLinearSigmoid ...)."""
