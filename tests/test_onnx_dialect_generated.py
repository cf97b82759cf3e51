"""The onnx dialect's checked-in op classes (`dialects/onnx_ops.py`) against their generator."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from xdsl.irdl import irdl_to_attr_constraint

from zant.dialects import onnx_gen
from zant.dialects.onnx import ONNX, ConvOp, GuardOp, MlTreeEnsembleOp, QLinearAddOp, TrainingAdamOp, onnx_op_class
from zant.dialects.onnx_function_ops import FUNCTION_OPS
from zant.dialects.onnx_base import ATTRIBUTE_KINDS, REGENERATE, SchemaKey, onnx_schema
from zant.dialects.onnx_ops import ALL_OPS


def test_checked_in_module_is_what_the_generator_writes():
    """Fails when onnx or the generator changed without regenerating the module."""
    assert onnx_gen.OUTPUT.read_text() == onnx_gen.generate(), (
        f"{onnx_gen.OUTPUT} is stale: run `{REGENERATE}` and commit the result"
    )


def test_check_flag_reports_a_stale_module(tmp_path, monkeypatch, capsys):
    output = tmp_path / "onnx_ops.py"
    output.write_text(onnx_gen.OUTPUT.read_text().replace('name = "onnx.Conv"', 'name = "onnx.Convolution"'))
    monkeypatch.setattr(onnx_gen, "OUTPUT", output)
    assert onnx_gen.main(["--check"]) == 1
    assert REGENERATE in capsys.readouterr().err
    assert onnx_gen.main([]) == 0
    assert onnx_gen.main(["--check"]) == 0
    assert output.read_text() == onnx_gen.OUTPUT.read_text() == onnx_gen.generate()


def test_classes_are_the_dialect_and_importable_by_name():
    assert list(ONNX.operations) == [*ALL_OPS, *FUNCTION_OPS]
    assert len(ALL_OPS) == len({op.name for op in ALL_OPS})
    assert onnx_op_class("Conv") is ConvOp and ConvOp.name == "onnx.Conv"
    assert onnx_op_class("TreeEnsemble", "ai.onnx.ml") is MlTreeEnsembleOp
    assert onnx_op_class("Adam", "ai.onnx.preview.training") is TrainingAdamOp
    assert onnx_op_class("QLinearAdd", "com.microsoft") is QLinearAddOp
    assert onnx_op_class("Guard", "ai.zant") is GuardOp
    assert all(op.verify_ is op.verify_all for op in ALL_OPS)  # schema checks ahead of IRDL's


def test_properties_have_the_verifier_constraints():
    """Each schema attribute is a property of the constraint `ATTRIBUTE_KINDS` gives its type
    (the generator spells those constraints as text), and each input a field in schema order."""
    for op in ALL_OPS:
        spec = op.spec()
        definition = op.get_irdl_definition()
        for name, attribute in spec.schema.attributes.items():
            kind = ATTRIBUTE_KINDS.get(attribute.type.name)
            if kind is not None:
                assert definition.properties[name].constr == irdl_to_attr_constraint(kind[0]), (op.name, name)
        assert [f.field for f in spec.inputs] == [name for name, _ in definition.operands], op.name
        assert [f.field for f in spec.outputs] == [name for name, _ in definition.results], op.name


def test_signatures_are_the_schemas():
    """What the format and the verifier read (`ONNX_SIGNATURE`, so that they need no `onnx`) is
    what each op's `OpSchema` says: formal names and options, counts, attribute types, required
    attributes."""
    for op in ALL_OPS:
        spec = op.spec()
        schema = spec.schema
        assert [(f.onnx_name, int(f.option)) for f in spec.inputs] == [(p.name, int(p.option)) for p in schema.inputs], op.name
        assert [(f.onnx_name, int(f.option)) for f in spec.outputs] == [(p.name, int(p.option)) for p in schema.outputs], op.name
        signature = spec.signature
        assert signature.counts == (schema.min_input, schema.max_input, schema.min_output, schema.max_output), op.name
        assert dict(signature.attributes) == {n: a.type.name for n, a in schema.attributes.items()}, op.name
        assert set(signature.required) == {n for n, a in schema.attributes.items() if a.required}, op.name


def test_a_schema_the_installed_onnx_lacks_names_the_command():
    with pytest.raises(RuntimeError, match="python -m zant.dialects.onnx_gen"):
        onnx_schema(SchemaKey("", "Conv", 999))


NAMED_BY_STRING = frozenset(
    {
        # Being edited by other engineers when the classes became importable (issue 31): to
        # convert, then remove from this list, which only shrinks.
        "passes/fold_qdq.py",
        "passes/onnx_to_uop/conv.py",
        "passes/onnx_to_uop/movement.py",
        "passes/onnx_to_uop/norm.py",
        "passes/onnx_to_uop/pool.py",
        "passes/onnx_to_uop/quant.py",
        "passes/onnx_to_uop/resample.py",
        "passes/onnx_to_uop/sampling.py",
    }
)
"""Modules that still spell onnx op names as string literals."""


def test_modules_import_op_classes_instead_of_spelling_op_names():
    """`isinstance(op, ConvOp)` / `ConvOp.name`, not `op.name == "onnx.Conv"`: a tool can follow
    the class, and a misspelt one fails at import instead of never matching."""
    root = Path(__file__).resolve().parents[1]
    names = {op.name for op in ALL_OPS}
    spelled: dict[str, list[str]] = {}
    for folder in ("passes", "zant", "tools", "bench"):
        for path in sorted((root / folder).rglob("*.py")):
            relative = path.relative_to(root).as_posix()
            for node in ast.walk(ast.parse(path.read_text(), relative)):
                if isinstance(node, ast.Constant) and node.value in names and relative not in NAMED_BY_STRING:
                    spelled.setdefault(relative, []).append(node.value)
    assert not spelled, f"import the op classes from zant.dialects.onnx instead of naming ops by string: {spelled}"
