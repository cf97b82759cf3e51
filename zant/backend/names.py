"""Identifiers for generated code: ONNX names are never pasted raw into Zig or C.

`sanitize_zig` / `sanitize_c` turn any string into a valid identifier (ASCII letters, digits and
`_`, not starting with a digit, not a keyword or primitive type name; other characters become
`_uXXXX` escapes, so distinct names stay distinct as far as possible). `Namer` hands out unique
names with numeric suffixes; `validate_prefix` checks a user-given symbol prefix.
"""

from __future__ import annotations

import re

from zant.backend.zig_helpers import HELPERS
from zant.errors import ZantError

ZIG_KEYWORDS = frozenset(
    """addrspace align allowzero and anyframe anytype asm break callconv catch comptime const
    continue defer else enum errdefer error export extern fn for if inline linksection noalias
    noinline nosuspend opaque or orelse packed pub resume return struct suspend switch test
    threadlocal try union unreachable var volatile while async await usingnamespace""".split()
)
ZIG_PRIMITIVES = frozenset(
    """anyerror anyframe anyopaque bool c_char c_int c_long c_longdouble c_longlong c_short c_uint
    c_ulong c_ulonglong c_ushort comptime_float comptime_int f16 f32 f64 f80 f128 false isize
    noreturn null true type undefined usize void std""".split()
)
C_KEYWORDS = frozenset(
    """auto break case char const continue default do double else enum extern float for goto if
    inline int long register restrict return short signed sizeof static struct switch typedef
    union unsigned void volatile while _Bool _Complex _Imaginary bool true false alignas alignof
    nullptr static_assert thread_local typeof""".split()
)
_INT_TYPE = re.compile(r"[iu][0-9]+")
_C_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _escape(text: str) -> str:
    out = []
    for ch in text:
        if ch.isascii() and (ch.isalnum() or ch == "_"):
            out.append(ch)
        elif ch.isascii():
            out.append("_")
        else:
            code = ord(ch)
            out.append(f"_u{code:04x}" if code <= 0xFFFF else f"_U{code:08x}")
    return "".join(out)


def sanitize_zig(text: str, default: str = "t") -> str:
    """A valid Zig identifier (not a keyword or primitive type such as `u8`) derived from `text`."""
    name = _escape(text) or default
    if name[0].isdigit():
        name = "_" + name
    if name in ZIG_KEYWORDS or name in ZIG_PRIMITIVES or _INT_TYPE.fullmatch(name) or name == "_":
        name += "_"
    return name


def sanitize_c(text: str, default: str = "t") -> str:
    """A valid C identifier (not a keyword) derived from `text`."""
    name = _escape(text) or default
    if name[0].isdigit():
        name = "_" + name
    if name in C_KEYWORDS:
        name += "_"
    return name


def validate_prefix(name: str) -> str:
    """Return `name` if it can prefix every exported symbol (a C and Zig identifier), else raise."""
    if not _C_IDENT.fullmatch(name) or name in C_KEYWORDS or sanitize_zig(name) != name:
        raise ZantError(
            f"invalid model name '{name}': it must be a C identifier ([A-Za-z_][A-Za-z0-9_]*) "
            "and not a C or Zig keyword or type name"
        )
    return name


class Namer:
    """Hands out unique identifiers: `fresh("x")` gives `x`, then `x_1`, `x_2` …"""

    def __init__(self, reserved: set[str] | frozenset[str] = frozenset()):
        self.used: set[str] = set(reserved)

    def fresh(self, base: str) -> str:
        name = base
        counter = 1
        while name in self.used:
            name = f"{base}_{counter}"
            counter += 1
        self.used.add(name)
        return name


def reserved_names(name: str) -> set[str]:
    """File-scope names of the Zig file generated under prefix `name` that no local may take (Zig
    forbids shadowing): the printer's and the plan's parameter namers both start from these."""
    return {
        "std", "panic", "trapOnPanic", "kernel_call",
        f"{name}_scratch", f"{name}_constants", f"{name}_predict", *HELPERS,
        f"{name}_arena", f"{name}_set_arena", f"{name}_arena_size", f"{name}_arena_align",  # --arena caller
    }
