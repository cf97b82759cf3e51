"""Writes `onnx_ops.py`, the `onnx` dialect's op classes, from the ONNX schemas.

    python -m zant.dialects.onnx_gen           # rewrite dialects/onnx_ops.py
    python -m zant.dialects.onnx_gen --check   # exit 1 if it is stale

One class per operator: the latest schema of each default-domain operator in the installed
`onnx` (`onnx.Conv` is `ConvOp`), of each live `ai.onnx.ml` operator (`onnx.ml.TreeEnsemble`
is `MlTreeEnsembleOp`) and of each `ai.onnx.preview.training` operator (`onnx.training.Adam`
is `TrainingAdamOp`), then the ops of `onnx_base.OWN_OPS`. Each class declares

* one operand per schema input, named after it (sanitized to a Python identifier):
  `operand_def` for single inputs, `opt_operand_def` for optional ones, `var_operand_def` for
  the variadic last input; with more than one optional/variadic input, `AttrSizedOperandSegments`
  (as a property); results alike;
* one optional property per schema attribute, of the constraint `onnx_base.ATTRIBUTE_KINDS`
  gives its type (GRAPH and SPARSE_TENSOR attributes: any attribute);
* `NoMemoryEffect` unless the op is random (`NOT_A_FUNCTION_OF_INPUTS`), ends the function
  (`ENDS_THE_FUNCTION`) or holds a subgraph;
* `ONNX_SCHEMA`, the schema's (domain, type, version), from which `OnnxOp.spec().schema` reads
  the rest (attribute defaults, type constraints, function bodies) when a pass first asks;
* `ONNX_SIGNATURE`, what the format and the verifier need of the schema (formal names, counts,
  attribute types, required attributes), so that they do not import `onnx`.

The module is checked in so that passes import the classes and tools can follow them;
tests/test_onnx_dialect_generated.py fails when it differs from what this writes.
"""

from __future__ import annotations

import argparse
import json
import keyword
import re
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

import onnx
import onnx.defs
from onnx.defs import OpSchema

from zant.dialects.onnx_base import (
    BASES,
    ENDS_THE_FUNCTION,
    ML_DOMAIN,
    NOT_A_FUNCTION_OF_INPUTS,
    OWN_OPS,
    REGENERATE,
    TRAINING_DOMAIN,
    OnnxOp,
    op_class_name,
    op_name,
)
from zant.dialects.onnx_types import is_tensor_type

OUTPUT = Path(__file__).with_name("onnx_ops.py")

_Option = OpSchema.FormalParameterOption
_AttrType = OpSchema.AttrType

CONSTRAINTS = {
    _AttrType.INT: "IntegerAttr[I64]",
    _AttrType.FLOAT: "FloatAttr[Float32Type]",
    _AttrType.STRING: "StringAttr",
    _AttrType.INTS: "DenseArrayBase[I64]",
    _AttrType.FLOATS: "DenseArrayBase[Float32Type]",
    _AttrType.STRINGS: "ArrayAttr[StringAttr]",
    _AttrType.TENSOR: "DenseIntOrFPElementsAttr | DenseResourceAttr",
    _AttrType.TYPE_PROTO: "TypeAttribute",
}
"""ONNX attribute type → the property constraint as written in the module: `ATTRIBUTE_KINDS`'
constraints (the test checks they agree); any other type is `Attribute`."""

_BUILTINS = ("I64", "ArrayAttr", "DenseArrayBase", "DenseIntOrFPElementsAttr", "DenseResourceAttr",
             "Float32Type", "FloatAttr", "IntegerAttr", "StringAttr", "TensorType")
_IRDL = ("AttrSizedOperandSegments", "AttrSizedResultSegments", "operand_def", "opt_operand_def",
         "opt_prop_def", "opt_result_def", "result_def", "traits_def", "var_operand_def", "var_result_def")
_BASE_NAMES = ("OnnxOp", "SchemaKey", "Signature", "onnx_op_definition")
_MODULE_NAMES = frozenset({*_BUILTINS, *_IRDL, *_BASE_NAMES, "Attribute", "TypeAttribute", "ClassVar", "NoMemoryEffect", "VALUE_TYPE"})
"""Names the class bodies use: a field may not shadow one."""

_RESERVED = set(dir(OnnxOp))


def _sorted(names: Iterable[str]) -> list[str]:
    """isort's order: constants, classes, then functions."""
    return sorted(names, key=lambda n: (0 if n.isupper() else 1 if n[0].isupper() else 2, n))


_DEFS = {
    "operand": {_Option.Single: "operand_def", _Option.Optional: "opt_operand_def", _Option.Variadic: "var_operand_def"},
    "result": {_Option.Single: "result_def", _Option.Optional: "opt_result_def", _Option.Variadic: "var_result_def"},
}


def latest_schemas(all_schemas: Sequence[OpSchema], domain: str) -> list[OpSchema]:
    """The newest schema of each operator of `domain` (both spellings of the default domain).

    Deprecated ai.onnx.ml versions are skipped: the importer does not convert that domain's
    opset, and converters still emit TreeEnsembleRegressor/Classifier, whose last live schema
    (opset 3) accepts the nodes of every earlier version."""
    latest: dict[str, OpSchema] = {}
    domains = ("", "ai.onnx") if domain in ("", "ai.onnx") else (domain,)
    for schema in all_schemas:
        if schema.domain not in domains or (schema.deprecated and domain == ML_DOMAIN):
            continue
        known = latest.get(schema.name)
        if known is None or schema.since_version > known.since_version:
            latest[schema.name] = schema
    return [latest[name] for name in sorted(latest)]


def is_side_effect_free(schema: OpSchema) -> bool:
    """ONNX ops only compute their outputs, except the random ones (and Zant's Guard); ops holding
    a subgraph are left unmarked, since the subgraph is not visible as IR that xDSL could inspect."""
    return (
        schema.name not in NOT_A_FUNCTION_OF_INPUTS
        and (schema.domain, schema.name) not in ENDS_THE_FUNCTION
        and all(a.type != _AttrType.GRAPH for a in schema.attributes.values())
    )


def _field_name(onnx_name: str, used: set[str]) -> str:
    name = re.sub(r"\W", "_", onnx_name) or "arg"
    if name[0].isdigit():
        name = "_" + name
    while keyword.iskeyword(name) or name in _RESERVED or name in used or name in _MODULE_NAMES:
        name += "_"
    used.add(name)
    return name


def _string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _strings(names: Iterable[str]) -> str:
    """A Python tuple of strings."""
    items = [_string(n) for n in names]
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"  # () when empty


def signature(schema: OpSchema) -> str:
    """The `Signature(...)` expression of `schema` (onnx_base.Signature)."""
    counts = (schema.min_input, schema.max_input, schema.min_output, schema.max_output)
    parts = [_strings(p.name for p in schema.inputs), _strings(p.name for p in schema.outputs), repr(counts)]
    if schema.attributes:
        kinds = ", ".join(f"{_string(n)}: {_string(a.type.name)}" for n, a in schema.attributes.items())
        parts.append(f"{{{kinds}}}")
    required = [n for n, a in schema.attributes.items() if a.required]
    if required:
        parts.append(f"required={_strings(required)}")
    return f"Signature({', '.join(parts)})"


def op_class(schema: OpSchema, base: str, name: str | None = None) -> tuple[str, str]:
    """The class name and the source of the op class of `schema`, derived from `base`, named
    `name` (default: `op_name`)."""
    class_name = op_class_name(schema.name, schema.domain)
    used: set[str] = set()
    lines = [
        "@onnx_op_definition",
        f"class {class_name}({base}):",
        f'    """ONNX `{schema.domain or "ai.onnx"}.{schema.name}` (opset {schema.since_version}), from its schema."""',
        "",
        f"    name = {_string(name or op_name(schema.name, schema.domain))}",
        f"    ONNX_SCHEMA: ClassVar[SchemaKey] = SchemaKey({_string(schema.domain)}, {_string(schema.name)}, {schema.since_version})",
        f"    ONNX_SIGNATURE: ClassVar[Signature] = {signature(schema)}",
    ]

    def formals(kind: str, params: Iterable[OpSchema.FormalParameter]) -> int:
        """Declares the operands or results; returns how many are optional or variadic."""
        flexible = 0
        for param in params:
            # A formal that admits sequences or optionals (SequenceAt, Optional, Identity ...)
            # takes any ONNX value type; `resolve-sequences` leaves only tensors.
            constraint = "TensorType" if all(map(is_tensor_type, param.types)) else "VALUE_TYPE"
            lines.append(f"    {_field_name(param.name, used)} = {_DEFS[kind][param.option]}({constraint})")
            flexible += param.option != _Option.Single
        return flexible

    lines.append("")
    operands = formals("operand", schema.inputs)
    results = formals("result", schema.outputs)
    options = [
        option
        for option, count in (("AttrSizedOperandSegments", operands), ("AttrSizedResultSegments", results))
        if count > 1
    ]
    if options:
        lines.append(f"    irdl_options = ({', '.join(f'{o}(as_property=True)' for o in options)},)")
    if is_side_effect_free(schema):
        # NoMemoryEffect (not Pure) lets `dce` erase and `cse` merge the op; it is not marked
        # speculatable, since e.g. an integer Div by zero traps and must not be hoisted.
        lines.append("    traits = traits_def(NoMemoryEffect())")
    if schema.attributes:
        lines.append("")
    for attr_name, attribute in schema.attributes.items():
        field = _field_name(attr_name, used)
        constraint = CONSTRAINTS.get(attribute.type, "Attribute")
        spelled = "" if field == attr_name else f", prop_name={_string(attr_name)}"
        lines.append(f"    {field} = opt_prop_def({constraint}{spelled})")
    return class_name, "\n".join(lines)


def op_classes() -> list[tuple[str, str]]:
    """(class name, source) of every op class, in the dialect's order."""
    all_schemas = onnx.defs.get_all_schemas_with_history()
    classes = [
        op_class(schema, BASES.get((domain, schema.name), OnnxOp).__name__)
        for domain in ("", ML_DOMAIN, TRAINING_DOMAIN)
        for schema in latest_schemas(all_schemas, domain)
    ]
    classes += [op_class(own.schema, own.base.__name__, own.name) for own in OWN_OPS]
    names = [name for name, _ in classes]
    if len(set(names)) != len(names):
        raise ValueError(f"two ops would share a class name: {sorted(n for n in names if names.count(n) > 1)}")
    return classes


def generate() -> str:
    """The text of `onnx_ops.py`."""
    classes = op_classes()
    bases = sorted({base.__name__ for base in BASES.values()} | {own.base.__name__ for own in OWN_OPS})
    header = f'''"""The `onnx` dialect's op classes (the dialect and its helpers are `zant.dialects.onnx`).

GENERATED by `{REGENERATE}` from the schemas of onnx {onnx.__version__} and those
of `onnx_base.OWN_OPS`: do not edit. tests/test_onnx_dialect_generated.py fails when it is stale.
"""

from typing import ClassVar

from xdsl.dialects.builtin import (
{"".join(f"    {n},{chr(10)}" for n in _sorted(_BUILTINS))})
from xdsl.ir import Attribute, TypeAttribute
from xdsl.irdl import (
{"".join(f"    {n},{chr(10)}" for n in _sorted(_IRDL))})
from xdsl.traits import NoMemoryEffect

from zant.dialects.onnx_base import (
{"".join(f"    {n},{chr(10)}" for n in _sorted((*bases, *_BASE_NAMES)))})
from zant.dialects.onnx_types import VALUE_TYPE
'''
    body = "\n\n\n".join(source for _, source in classes)
    listing = "".join(f"    {name},\n" for name, _ in classes)
    footer = (
        f'ALL_OPS: tuple[type[OnnxOp], ...] = (\n{listing})\n"""Every op class, in the dialect\'s order."""\n\n'
        f'__all__ = ["ALL_OPS", {", ".join(_string(name) for name, _ in classes)}]\n'
    )
    return f"{header}\n\n{body}\n\n\n{footer}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m zant.dialects.onnx_gen", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if onnx_ops.py differs from what would be written")
    args = parser.parse_args(argv)
    text = generate()
    current = OUTPUT.read_text() if OUTPUT.exists() else None
    if args.check:
        if current != text:
            print(f"{OUTPUT} is stale: run `{REGENERATE}`", file=sys.stderr)
            return 1
        return 0
    if current != text:
        OUTPUT.write_text(text)
        print(f"wrote {OUTPUT} ({text.count('@onnx_op_definition')} ops)")
    else:
        print(f"{OUTPUT} is up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
