"""Running a pass pipeline so that every failure names its culprit.

`zant compile/run/plan` (through `zant.driver.run_pipeline`) and `zant-opt` run passes the same
way, and report the same three failures the same way:

* a pipeline that names an unknown pass or option: a `ZantError` that lists the pass's options
  in kebab-case (`unknown option 'conv-lane' for pass 'onnx-to-uop'; its options: conv-lanes=int
  (default 0), …`);
* a pass that raises: for a pass from outside the tree, a `ZantError` naming the pass and its
  file (`pass 'my-fusion' (from fusion.py) raised KeyError: 'x'`); for a built-in pass, an
  `InternalError` naming the pass;
* a module that no longer verifies: a `VerifyFailure` (a `ZantError`) that says after which pass,
  names the failing op and prints it with a few ops around it, not the whole module.

Option names: xDSL maps a pass's dataclass field `conv_lanes` to the option `conv-lanes` and
accepts both spellings; Zant prints only the kebab-case one.
"""

from __future__ import annotations

import dataclasses
import difflib
import inspect
import re
import types
from collections.abc import Callable, Mapping, Sequence
from io import StringIO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.traits import IsolatedFromAbove
from xdsl.utils.arg_spec import ArgSpec, parse_pipeline
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError

from zant.errors import InternalError, ZantError
from zant.ir.locations import node_names

PassFactory = Callable[[], type[ModulePass]]

CONTEXT_LINES = 4
"""Lines of the enclosing op printed before and after the failing op."""

TARGET_DEFAULT = "from #zant.target"
"""The default shown for an option a pass reads from the module's target unless given."""

MAX_LINE = 160
"""A printed line is cut at this many characters (a constant's value can be megabytes)."""


class VerifyFailure(ZantError):
    """The module stopped verifying: `op` failed with `message`, after pass `after` (None: the
    input did not verify). `str()` is the whole report: where, what, and the op in context."""

    def __init__(self, op: Operation, message: str, after: str | None, context: str):
        where = "the input does not verify" if after is None else f"after pass '{after}'"
        super().__init__(f"{where}: {message}" + (f"\n{context}" if context else ""))
        self.op = op
        self.message = message
        self.after = after


def option_name(field_name: str) -> str:
    """The option's spelling on the command line: `conv_lanes` → `conv-lanes`."""
    return field_name.replace("_", "-")


def pass_options(cls: type[ModulePass]) -> list[tuple[str, str, str | None]]:
    """(kebab-case name, type, default or None when required) of each option of a pass."""
    hints = _type_hints(cls)
    options = []
    for f in dataclasses.fields(cls):
        if f.name == "name" or not f.init:
            continue
        kind = hints.get(f.name, f.type)
        if f.default is None and isinstance(kind, types.UnionType) and type(None) in kind.__args__:
            # An option Zant's passes otherwise read from the module's `#zant.target`.
            kind = next(k for k in kind.__args__ if k is not type(None))
            default = TARGET_DEFAULT if cls.__module__.startswith("zant.passes") else "none"
        elif f.default is not dataclasses.MISSING:
            default = _spell(f.default)
        elif f.default_factory is not dataclasses.MISSING:
            default = _spell(f.default_factory())
        else:
            default = None
        kind = kind if isinstance(kind, str) else getattr(kind, "__name__", str(kind))
        options.append((option_name(f.name), str(kind).replace("typing.", ""), default))
    return options


def describe_options(cls: type[ModulePass]) -> str:
    """`conv-lanes=int (default 0), conv-tile=int (default 6)`, or `none`."""
    parts = [
        f"{name}={kind}" + (" (required)" if default is None else f" (default {default})")
        for name, kind, default in pass_options(cls)
    ]
    return ", ".join(parts) or "none"


def parse_passes(available: Mapping[str, PassFactory], pipeline: str) -> tuple[ModulePass, ...]:
    """The passes of a `-p` pipeline; an unknown pass, an unknown option or a bad value is a
    `ZantError` naming the pass (and listing its options)."""
    try:
        specs = list(parse_pipeline(pipeline))
    except (ArgSpecParseError, Exception) as error:  # the syntax (xDSL's error is a BaseException)
        lines = str(error).strip().splitlines()
        column = lines[1].rpartition(":")[2] if len(lines) > 2 else ""
        where = f" (at column {column})" if column.isdigit() else ""
        raise ZantError(f"invalid pass pipeline '{pipeline}': {lines[-1].strip()}{where}") from error
    unknown = [spec.name for spec in specs if spec.name not in available]
    if unknown:
        close = difflib.get_close_matches(unknown[0], list(available), n=1)
        hint = f"did you mean '{close[0]}'? " if close else ""
        names = ", ".join(f"'{name}'" for name in unknown)
        raise ZantError(
            f"invalid pass pipeline '{pipeline}': unknown pass {names} ({hint}`zant-opt --list-passes` "
            "lists the passes; one written outside Zant needs --load-passes FILE.py)"
        )
    return tuple(_instantiate(available[spec.name](), spec) for spec in specs)


def _instantiate(cls: type[ModulePass], spec: ArgSpec) -> ModulePass:
    fields = {f.name for f in dataclasses.fields(cls) if f.init and f.name != "name"}
    for given in spec.parameters:
        if given.replace("-", "_") not in fields:
            raise ZantError(
                f"unknown option '{option_name(given)}' for pass '{spec.name}'; "
                f"its options: {describe_options(cls)}"
            )
    try:
        return cls.from_pass_spec(spec)
    except Exception as error:
        message = re.sub(r"<class '(\w+)'>", r"\1", str(error).replace('"', "'"))
        for field_name in fields:
            message = message.replace(f"'{field_name}'", f"'{option_name(field_name)}'")
        raise ZantError(
            f"invalid options for pass '{spec.name}': {message}; its options: {describe_options(cls)}"
        ) from error


def plugin_origin(cls: type) -> str | None:
    """The file (or module) a pass from outside Zant and xDSL comes from; None for theirs."""
    module = cls.__module__
    if module.split(".")[0] in ("zant", "xdsl"):
        return None
    try:
        return inspect.getsourcefile(cls) or module
    except TypeError:
        return module


def apply_passes(
    passes: Sequence[ModulePass],
    ctx: Context,
    module: ModuleOp,
    *,
    verify: bool = True,
    between: Callable[[ModulePass, ModuleOp], None] | None = None,
) -> None:
    """Apply `passes` in order; with `verify`, check the input and the module after each pass
    (`VerifyFailure`); `between` is called after each pass (and its check)."""
    if verify:
        check_verifies(module, None)
    for p in passes:
        run_pass(p, ctx, module)
        if verify:
            check_verifies(module, p.name)
        if between is not None:
            between(p, module)


def run_pass(p: ModulePass, ctx: Context, module: ModuleOp) -> None:
    """Apply one pass; what it raises is reported with its name (see the module's docstring)."""
    try:
        p.apply(ctx, module)
    except ZantError:
        raise
    except (DiagnosticException, ParseError) as error:  # a pass's own diagnostic: a user error
        message = str(error)
        if message.startswith(f"{p.name}{{"):  # names itself with its options: already says which
            raise ZantError(message) from error
        message = message.removeprefix(f"{p.name}: ")  # a pass that names itself, once
        raise ZantError(f"pass '{p.name}' failed: {message}") from error
    except Exception as error:
        origin = plugin_origin(type(p))
        if origin is None:
            raise InternalError(f"pass '{p.name}' raised {type(error).__name__}: {error}") from error
        raise ZantError(
            f"pass '{p.name}' (from {origin}) raised {type(error).__name__}: {error}"
        ) from error


def check_verifies(module: ModuleOp, after: str | None) -> None:
    """Raise a `VerifyFailure` if `module` does not verify (`after`: the pass just run)."""
    failure = first_failure(module)
    if failure is not None:
        op, message = failure
        context = op_in_context(op, message)
        nodes = node_names(op.location)
        if nodes:  # provenance (zant.ir.locations): the ONNX nodes the op was made of
            listed = ", ".join(f"'{n}'" for n in nodes[:5]) + (", …" if len(nodes) > 5 else "")
            context = f"  (made from ONNX node{'s' if len(nodes) > 1 else ''} {listed})\n{context}"
        raise VerifyFailure(op, message, after, context.rstrip("\n"))


def first_failure(module: ModuleOp) -> tuple[Operation, str] | None:
    """The first op that does not verify and why, or None when the module verifies.

    xDSL verifies nested ops first and reports a value used outside its isolated-from-above
    parent (a function) on that parent; here the op that uses the value is the culprit."""
    try:
        module.verify()
        return None
    except Exception as error:
        whole = error
    for op in module.walk(region_first=True):
        try:
            op.verify(verify_nested_ops=False)
        except Exception as error:
            if op.has_trait(IsolatedFromAbove) and (escaped := _escaped_use(op)) is not None:
                return escaped
            return op, f"'{op.name}' op {_message(error)}"
    return module, _message(whole)


def _escaped_use(isolated: Operation) -> tuple[Operation, str] | None:
    for op in isolated.walk():
        if op is isolated:
            continue
        for index, operand in enumerate(op.operands):
            owner = operand.owner
            if owner is isolated or not isolated.is_ancestor(owner):
                definer = owner.name if isinstance(owner, Operation) else "a block argument"
                state = "" if _in_tree(owner) else ", which is no longer in the IR"
                return op, (
                    f"'{op.name}' op operand #{index} is defined by {definer} outside its "
                    f"isolated-from-above parent '{isolated.name}'{state}"
                )
    return None


def _in_tree(owner) -> bool:
    node = owner
    while node is not None and not isinstance(node, ModuleOp):
        node = node.parent
    return node is not None


def _message(error: BaseException) -> str:
    text = str(error).strip()
    prefix = "Operation does not verify: "
    return text[len(prefix) :] if text.startswith(prefix) else text


def op_in_context(op: Operation, message: str, lines: int = CONTEXT_LINES) -> str:
    """The op's enclosing op printed (custom form, else generic), cut to `lines` lines before
    and after the op, with xDSL's `^^^` marker under it; each line cut at `MAX_LINE` characters."""
    from xdsl.printer import Printer
    from xdsl.utils.diagnostic import Diagnostic

    parent = op.parent_op()
    scope = op if parent is None or isinstance(parent, ModuleOp) else parent
    diagnostic = Diagnostic()
    diagnostic.add_message(op, message)
    for generic in (False, True):  # an op too broken for its custom form prints generically
        text = StringIO()
        try:
            Printer(stream=text, diagnostic=diagnostic, print_generic_format=generic).print_op(scope)
            break
        except Exception:
            continue
    else:
        return f"(the failing op, '{op.name}', cannot be printed)"
    printed = text.getvalue().splitlines()
    marks = [i for i, line in enumerate(printed) if line.lstrip().startswith("^")]
    if not marks:
        return ""
    first = max(0, marks[0] - 1 - lines)
    last = min(len(printed), marks[0] + 4 + lines)  # the marker box is three lines
    excerpt = printed[first:last]
    if first > 0:
        excerpt.insert(0, "  ...")
    if last < len(printed):
        excerpt.append("  ...")
    return "\n".join(_cut(line) for line in excerpt)


def _cut(text: str) -> str:
    return "\n".join(line if len(line) <= MAX_LINE else line[: MAX_LINE - 3] + "..." for line in text.splitlines())


def _spell(value) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, tuple):
        return ",".join(_spell(v) for v in value)
    return str(value)


def _type_hints(cls: type) -> dict:
    try:
        import typing

        return typing.get_type_hints(cls)
    except Exception:
        return {}


def pass_summary(cls: type[ModulePass]) -> str:
    """The first sentence of a pass's own docstring ("" without one: a dataclass's generated
    signature and an inherited docstring do not count)."""
    doc = (cls.__doc__ or "").strip()
    if not doc or doc.startswith(f"{cls.__name__}(") or "__doc__" not in vars(cls):
        return ""
    paragraph = " ".join(line.strip() for line in doc.split("\n\n")[0].splitlines())
    sentence, dot, _ = paragraph.partition(". ")
    return sentence + dot.strip()
