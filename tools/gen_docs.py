"""The documentation site's reference pages, generated from the definitions so they cannot drift.

    python -m zant.tools.gen_docs --output DIR     write the pages (Markdown) into DIR

Each page is built from what the code registers, never from a hand-kept list:

* `reference/dialects/<d>.md`: every op of every Zant dialect (`zant.dialects.get_all_dialects`,
  what `zant.driver.make_context` registers besides xDSL's own) from its IRDL definition:
  operands, results, properties and attributes with their constraints, regions, traits, the
  assembly format, the docstring, and the messages its verifier raises; then the dialect's
  types and attributes.
* `reference/passes.md`: every pass of the registry (`zant.passes.builtin_passes`: one per module of `passes/`) with its
  docstring and its options (the dataclass fields: type, default, the field's docstring).
* `reference/cli.md`: every command and option of `zant` and `zant-opt`, from their argparse
  parsers (`zant.tools.cli.make_parser`, `ZantOptMain.register_all_arguments`).
* `reference/status-codes.md`: the statuses the generated C API returns, from
  `zant.dialects.abi.Status` (the table the header's `#define NAME_STATUS_*` lines are made from).

The site's MkDocs hook (`docs/hooks/reference.py`) calls `reference_pages()` at every build and
adds the pages to the site in memory, so nothing generated is committed.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import re
import sys
import textwrap
from collections.abc import Iterable, Sequence
from pathlib import Path

REFERENCE = "reference"


# ---------------------------------------------------------------------------------------------
# Markdown helpers


def cell(text: object) -> str:
    """One table cell: a single line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def code(text: object) -> str:
    """Inline code that may itself contain backticks."""
    text = " ".join(str(text).split())
    fence = "``" if "`" in text else "`"
    pad = " " if fence == "``" or text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    rows = list(rows)
    if not rows:
        return []
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return lines + [""]


def docstring(obj: object) -> str:
    """An object's own docstring, dedented ("" for none, or for a dataclass's generated one)."""
    doc = vars(obj).get("__doc__") if isinstance(obj, type) else getattr(obj, "__doc__", None)
    doc = inspect.cleandoc(doc or "")
    if isinstance(obj, type) and doc.startswith(f"{obj.__name__}("):
        return ""
    return doc


def prose(text: str) -> str:
    """Docstring text as Markdown: outside code spans, `<` and `>` are escaped (a docstring's
    `<64xf32>` is not an HTML tag)."""
    parts = re.split(r"(`+[^`]*?`+)", text)
    return "".join(
        part if part.startswith("`") else part.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        for part in parts
    )


def anchor(name: str) -> str:
    """The id MkDocs' toc extension gives a heading made of `name` alone."""
    return re.sub(r"[^\w-]", "", name.lower().replace(" ", "-"))


# ---------------------------------------------------------------------------------------------
# Dialects


def describe_constraint(constr: object) -> str:
    """An IRDL constraint in a few words: `TensorType`, `i1`, `IntegerAttr<IntAttr, i64>`, `A | B`."""
    from xdsl.irdl import AnyAttr, AnyOf, BaseAttr, EqAttrConstraint, ParamAttrConstraint, VarConstraint

    name = type(constr).__name__
    if name == "RangeLengthConstraint":
        return describe_constraint(constr.constraint)
    if name == "RangeOf":
        return describe_constraint(constr.constr)
    if name == "ArrayOfConstraint":
        return f"array of {describe_constraint(constr.elem_range_constraint)}"
    if isinstance(constr, BaseAttr):
        return constr.attr.__name__
    if isinstance(constr, EqAttrConstraint):
        return str(constr.attr)
    if isinstance(constr, AnyAttr):
        return "any"
    if isinstance(constr, AnyOf):
        return " | ".join(describe_constraint(c) for c in constr.attr_constrs)
    if isinstance(constr, ParamAttrConstraint):
        params = ", ".join(describe_constraint(p) for p in constr.param_constrs)
        return f"{constr.base_attr.__name__}<{params}>"
    if isinstance(constr, VarConstraint):
        return f"{constr.name}: {describe_constraint(constr.constraint)}"
    return name


def _definition_kind(definition: object) -> str:
    """`variadic`, `optional` or `` for an operand, result, property or attribute definition."""
    name = type(definition).__name__
    if name.startswith("Var"):
        return "variadic"
    if name.startswith("Opt"):
        return "optional"
    return ""


def verifier_messages(cls: type) -> list[str]:
    """The messages of the `VerifyException`s an op's own `verify_` raises, with the formatted
    parts of an f-string shown as `{expression}`."""
    method = vars(cls).get("verify_")
    # IRDL wraps the class's verify_ in one that checks the definition first, then calls it.
    method = inspect.getclosurevars(method).nonlocals.get("custom_verify", method) if method else None
    if method is None or not getattr(method, "__module__", "").startswith("zant"):
        return []
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(method)))
    except (OSError, TypeError, SyntaxError):
        return []
    messages = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args):
            continue
        func = node.exc.func
        if (func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")) != "VerifyException":
            continue
        messages.append(_message_text(node.exc.args[0]))
    return [m for m in dict.fromkeys(messages) if m]


def _message_text(node: ast.expr) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
            else:
                parts.append("{" + ast.unparse(value.value) + "}")
        return "".join(parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _message_text(node.left) + _message_text(node.right)
    return ""


def _trait_names(definition) -> list[str]:
    names = []
    for trait in definition.traits:
        text = type(trait).__name__
        if dataclasses.is_dataclass(trait):
            params = [
                f"{f.name}={getattr(trait, f.name)!s}" for f in dataclasses.fields(trait)
                if not isinstance(getattr(trait, f.name), (tuple, list, dict, type)) or getattr(trait, f.name)
            ]
            params = [p.replace("MemoryEffectKind.", "") for p in params if "<" not in p or "MemoryEffectKind" in p]
            if params:
                text += "(" + ", ".join(params) + ")"
        names.append(text)
    return names


def op_section(cls: type) -> list[str]:
    """One op: a heading with its name, then its definition."""
    definition = cls.get_irdl_definition()
    lines = [f"### `{definition.name}`", "", f"*{cls.__name__}*, `{cls.__module__}`", ""]
    doc = docstring(cls)
    if doc:
        lines += [prose(doc), ""]
    if definition.assembly_format:
        lines += ["Assembly format:", "", "```", definition.assembly_format, "```", ""]
    else:
        custom = "parse" in vars(cls) or "print" in vars(cls)
        lines += [("Custom parser and printer (see the docstring)." if custom else "Generic format only."), ""]

    def slots(title: str, entries) -> list[str]:
        rows = [(code(n), code(describe_constraint(d.constr)), _definition_kind(d)) for n, d in entries]
        return [f"**{title}**", ""] + table(["name", "constraint", ""], rows) if rows else []

    lines += slots("Operands", definition.operands)
    lines += slots("Results", definition.results)
    attributes = [
        (n, d, "property") for n, d in definition.properties.items()
    ] + [(n, d, "attribute") for n, d in definition.attributes.items()]
    if attributes:
        rows = []
        for name, d, where in attributes:
            default = getattr(d, "default_value", None)
            rows.append((
                code(name), code(describe_constraint(d.constr)), where,
                _definition_kind(d) + (f", default {code(default)}" if default is not None else ""),
            ))
        lines += ["**Attributes**", ""] + table(["name", "constraint", "stored as", ""], rows)
    if definition.regions:
        lines += ["**Regions**: " + ", ".join(f"`{n}` ({type(d).__name__})" for n, d in definition.regions), ""]
    if definition.successors:
        lines += ["**Successors**: " + ", ".join(f"`{n}`" for n, _ in definition.successors), ""]
    traits = _trait_names(definition)
    if traits:
        lines += ["**Traits**: " + ", ".join(f"`{t}`" for t in traits), ""]
    messages = [m.replace("{self.name}", definition.name) for m in verifier_messages(cls)]
    if messages:
        lines += ["**Verifier errors**:", ""] + [f"- {code(m)}" for m in messages] + [""]
    return lines


def attribute_section(cls: type) -> list[str]:
    lines = [f"### `{cls.name}`", "", f"*{cls.__name__}*, `{cls.__module__}`", ""]
    doc = docstring(cls)
    if doc:
        lines += [prose(doc), ""]
    try:
        params = cls.get_irdl_definition().parameters
    except Exception:
        params = []
    rows = [(code(n), code(describe_constraint(c))) for n, c in params]
    lines += (["**Parameters**", ""] + table(["name", "constraint"], rows)) if rows else []
    return lines


def zant_dialects() -> dict[str, object]:
    """Zant's dialects by name, as `zant.driver.make_context` registers them."""
    from zant.dialects import get_all_dialects

    return {name: factory() for name, factory in get_all_dialects().items()}


def dialect_page(name: str, dialect) -> str:
    module = sys.modules[next(iter(dialect.operations)).__module__] if list(dialect.operations) else None
    ops = sorted(dialect.operations, key=lambda cls: cls.get_irdl_definition().name)
    attributes = sorted(dialect.attributes, key=lambda cls: cls.name)
    lines = [f"# The `{name}` dialect", ""]
    intro = docstring(module) if module else ""
    if intro:
        lines += [prose(intro), ""]
    lines += [
        f"{len(ops)} ops and {len(attributes)} types and attributes, generated from their IRDL "
        "definitions by `zant.tools.gen_docs`.", "",
    ]
    lines += ["## Ops", ""]
    lines += [", ".join(f"[`{cls.get_irdl_definition().name}`](#{anchor(cls.get_irdl_definition().name)})" for cls in ops), ""]
    for cls in ops:
        lines += op_section(cls)
    if attributes:
        lines += ["## Types and attributes", ""]
        for cls in attributes:
            lines += attribute_section(cls)
    return "\n".join(lines).rstrip() + "\n"


# ---------------------------------------------------------------------------------------------
# Passes


def field_docs(cls: type) -> dict[str, str]:
    """The docstrings written under a dataclass's fields (a string right after `name: T = ...`),
    along the class's bases."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if klass is object or not klass.__module__.startswith("zant"):
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError, SyntaxError):
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for field, after in zip(body, body[1:]):
            if (
                isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name)
                and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                docs[field.target.id] = inspect.cleandoc(after.value.value)
    return docs


def default_pipelines() -> dict[str, list[str]]:
    """Target -> the pass names of its default pipeline."""
    from zant.driver import TARGETS
    from zant.pipelines import pipeline_for

    from xdsl.utils.arg_spec import parse_pipeline

    return {target: [spec.name for spec in parse_pipeline(pipeline_for(target))] for target in TARGETS}


def passes_page() -> str:
    from zant.diagnostics import option_name, pass_options
    from zant.passes import builtin_passes

    pipelines = default_pipelines()
    lines = [
        "# Passes", "",
        f"Zant's {len(builtin_passes())} passes, one per module of `passes/` (`zant.passes.builtin_passes`), "
        "each with its docstring and options (the pass's dataclass fields), generated by "
        "`zant.tools.gen_docs`. Options are written in kebab-case: `zant-opt -p 'NAME{option=value}'`; "
        "`zant-opt --list-passes` prints the same list. The [research guide](../research.md) shows how "
        "to write one.", "",
    ]
    lines += table(
        ["pass", "summary", "in the default pipeline of"],
        [
            (f"[`{name}`](#{anchor(name)})", _first_sentence(docstring(factory())),
             ", ".join(t for t, names in pipelines.items() if name in names) or "none")
            for name, factory in builtin_passes().items()
        ],
    )
    for name, factory in builtin_passes().items():
        cls = factory()
        lines += [f"## `{name}`", "", f"*{cls.__name__}*, `{cls.__module__}`", ""]
        doc = docstring(cls)
        lines += [prose(doc) or "(no docstring)", ""]
        module_doc = docstring(sys.modules[cls.__module__])
        if module_doc:
            lines += [f"From the module `{cls.__module__}`:", ""]
            lines += ["> " + line if line.strip() else ">" for line in prose(module_doc).splitlines()] + [""]
        options = pass_options(cls)
        notes = {option_name(k): v for k, v in field_docs(cls).items()}
        if options:
            lines += ["**Options**", ""] + table(
                ["option", "type", "default", "meaning"],
                [(code(o), code(kind), "required" if default is None else code(default), prose(notes.get(o, "")))
                 for o, kind, default in options],
            )
        else:
            lines += ["No options.", ""]
    return "\n".join(lines).rstrip() + "\n"


def _first_sentence(doc: str) -> str:
    paragraph = " ".join(doc.split("\n\n")[0].split())
    sentence, dot, _ = paragraph.partition(". ")
    return sentence + dot.strip()


# ---------------------------------------------------------------------------------------------
# Command lines


def zant_opt_parser() -> argparse.ArgumentParser:
    """`zant-opt`'s parser, built as `ZantOptMain` builds it."""
    from zant.tools.zant_opt import ZantOptMain

    main = ZantOptMain(args=[])
    parser = argparse.ArgumentParser(prog="zant-opt", description=main.__class__.__module__)
    main.register_all_arguments(parser)
    return parser


def options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """A parser's options and positionals, without help and the subcommands."""
    return [
        a for a in parser._actions
        if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))
    ]


def subcommands(parser: argparse.ArgumentParser) -> dict[str, tuple[argparse.ArgumentParser, str]]:
    """Subcommand name -> (its parser, its one-line help)."""
    found = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, sub in action.choices.items():
                found[name] = (sub, helps.get(name) or "")
    return found


def option_label(action: argparse.Action) -> str:
    return ", ".join(action.option_strings) if action.option_strings else action.dest


def option_rows(parser: argparse.ArgumentParser) -> list[tuple[str, ...]]:
    rows = []
    for action in options(parser):
        value = ""
        if action.nargs != 0 and not isinstance(action, argparse._VersionAction):
            value = action.metavar or (
                "{" + ",".join(map(str, action.choices)) + "}" if action.choices else action.dest.upper()
            )
            if isinstance(value, tuple):
                value = " ".join(value)
        default = action.default
        if action.required:
            shown = "required"
        elif default in (None, False, argparse.SUPPRESS) or default == []:
            shown = ""
        else:
            shown = code(default)
        help_text = (action.help or "") % {"default": default, "prog": parser.prog} if action.help else ""
        if action.choices and action.metavar:
            help_text += f" (one of: {', '.join(map(str, action.choices))})"
        rows.append((code(option_label(action)), code(value) if value else "", help_text, shown))
    return rows


def parser_section(parser: argparse.ArgumentParser, title: str, summary: str, level: int) -> list[str]:
    lines = [f"{'#' * level} `{title}`", ""]
    if summary:
        lines += [summary[0].upper() + summary[1:] + ("" if summary.endswith(".") else "."), ""]
    usage = parser.format_usage().removeprefix("usage: ").strip()
    lines += ["```", " ".join(usage.split()), "```", ""]
    lines += table(["option", "value", "meaning", "default"], option_rows(parser))
    return lines


def cli_page() -> str:
    from zant.tools.cli import make_parser

    zant = make_parser()
    commands = subcommands(zant)
    lines = [
        "# Command line", "",
        "Every command and option of `zant` and `zant-opt`, generated from their argparse parsers "
        "by `zant.tools.gen_docs` (the text is each option's `--help`).", "",
        "## `zant`", "",
        (zant.description or "").strip(), "",
        "```", " ".join(zant.format_usage().removeprefix("usage: ").split()), "```", "",
    ]
    lines += table(["option", "value", "meaning", "default"], option_rows(zant))
    lines += table(["command", "what it does"], [(f"[`zant {n}`](#{anchor('zant ' + n)})", h) for n, (_, h) in commands.items()])
    for name, (sub, help_text) in commands.items():
        lines += parser_section(sub, f"zant {name}", help_text or (sub.description or ""), 3)
    opt = zant_opt_parser()
    lines += parser_section(opt, "zant-opt", "xDSL's `xdsl-opt` with Zant's dialects, passes, an `.onnx` frontend and a `zig` target", 2)
    return "\n".join(lines).rstrip() + "\n"


# ---------------------------------------------------------------------------------------------
# Status codes

def statuses() -> list[tuple[str, int, str]]:
    """(macro, value, meaning) of every failure status, from `zant.dialects.abi.Status`: the
    table the header's `#define NAME_STATUS_*` lines and the printer's returns are made from."""
    from zant.dialects.abi import STATUS_COMMENTS, Status

    return [(f"NAME_{s.macro}", s.value, STATUS_COMMENTS[s]) for s in Status if s != Status.OK]


def status_page() -> str:
    lines = [
        "# Status codes", "",
        "What `NAME_predict`, `NAME_predict_sized`, `NAME_init` and `NAME_check_plan` return. "
        "Generated by `zant.tools.gen_docs` from `zant.dialects.abi.Status`, the one table the "
        "header's `#define NAME_STATUS_*` lines (`zant.backend.plan.emit_header`) are made from. "
        "0 is success. The [C ABI](../c-abi.md) says when each is returned.", "",
    ]
    lines += table(["status", "value", "meaning (the header's comment)"],
                   [(code(m), v, meaning) for m, v, meaning in statuses()])
    return "\n".join(lines).rstrip() + "\n"


# ---------------------------------------------------------------------------------------------


def index_page(dialects: Iterable[str]) -> str:
    lines = [
        "# Reference", "",
        "Generated at every build of this site by `zant.tools.gen_docs` from the definitions "
        "themselves (IRDL op definitions, the pass registry, the argparse parsers, the generated "
        "header), so they describe the code as it is. `python -m zant.tools.gen_docs --output DIR` "
        "writes the same pages.", "",
        "- [Command line](cli.md): `zant` and `zant-opt`, every command and option",
        "- [Passes](passes.md): every registered pass and its options",
        "- [Status codes](status-codes.md): what the generated C functions return",
    ]
    lines += [f"- [The `{name}` dialect](dialects/{name}.md)" for name in dialects]
    from zant.driver import make_context

    others = sorted(set(make_context().registered_dialect_names) - set(dialects))
    lines += [
        "", f"`zant-opt` and the compiler's context (`zant.driver.make_context`) also register xDSL's "
        f"{len(others)} dialects, which xDSL documents: " + ", ".join(f"`{name}`" for name in others) + ".",
    ]
    return "\n".join(lines) + "\n"


def reference_pages() -> dict[str, str]:
    """Path under the site's docs folder -> Markdown, for every reference page."""
    dialects = zant_dialects()
    pages = {f"{REFERENCE}/index.md": index_page(dialects)}
    pages[f"{REFERENCE}/cli.md"] = cli_page()
    pages[f"{REFERENCE}/passes.md"] = passes_page()
    pages[f"{REFERENCE}/status-codes.md"] = status_page()
    for name, dialect in dialects.items():
        pages[f"{REFERENCE}/dialects/{name}.md"] = dialect_page(name, dialect)
    return pages


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m zant.tools.gen_docs", description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", "-o", required=True, metavar="DIR", help="folder to write the pages into (required)")
    args = parser.parse_args(argv)
    from zant.errors import run_cli

    def write() -> int:
        for path, text in reference_pages().items():
            target = Path(args.output) / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
            print(target)
        return 0

    return run_cli("gen_docs", write, False)


if __name__ == "__main__":
    sys.exit(main())
