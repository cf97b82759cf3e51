"""RegexFullMatch's patterns compiled at compile time to a byte DFA (no backtracking, no heap).

The pattern (RE2's syntax, the subset below) is parsed into a Thompson NFA over UTF-8 bytes; its
subsets are then explored into a DFA whose states also remember what the zero-width assertions
need (whether the previous byte was a word byte, whether none was read yet), so `^`, `$`, `\\b`
and `\\B` are decided while stepping. The generated code runs the DFA: one table load per byte of
the field, a fixed amount of work per byte whatever the pattern or the text.

Supported: literals (UTF-8 too), `.` (any character but newline), classes `[...]` / `[^...]`
with ranges and `\\d \\w \\s` (and their negations) inside, the escapes `\\d \\D \\w \\W \\s \\S
\\n \\t \\r \\f \\v \\xHH` and escaped punctuation, groups `(...)`, `(?:...)`, `(?P<name>...)`,
alternation `|`, quantifiers `* + ? {n} {n,} {n,m}` (lazy forms too: a full match does not
care), anchors `^ $ \\A \\z \\b \\B`. As in RE2, `\\w \\d \\s \\b` are ASCII's; a negated class
and `.` match one whole non-ASCII character. Anything else (flags, backreferences, lookaround,
Unicode classes, a non-ASCII character inside a class) is refused with `RegexError`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

MAX_DFA_STATES = 4096
"""A pattern whose DFA needs more states is refused (the table would not fit a microcontroller)."""
MAX_REPEAT = 1000
"""RE2's bound on a counted repetition."""

WORD = frozenset(b for b in range(128) if chr(b).isalnum() or chr(b) == "_")
DIGIT = frozenset(range(ord("0"), ord("9") + 1))
SPACE = frozenset(b" \t\n\r\f\v")
ASCII = frozenset(range(128))


class RegexError(ValueError):
    """A pattern outside the supported subset, or too large."""


@dataclass(frozen=True)
class CharSet:
    """A set of characters: ASCII bytes, and whether every non-ASCII character is in it."""

    ascii: frozenset[int]
    non_ascii: bool = False

    def negated(self) -> CharSet:
        return CharSet(ASCII - self.ascii, not self.non_ascii)

    def __or__(self, other: CharSet) -> CharSet:
        return CharSet(self.ascii | other.ascii, self.non_ascii or other.non_ascii)


# -- parsing ------------------------------------------------------------------------------------
# The AST: ("empty",), ("bytes", b"..."), ("set", CharSet), ("assert", "^" | "$" | "b" | "B"),
# ("cat", [nodes]), ("alt", [nodes]), ("repeat", node, low, high or None).

_CLASS_ESCAPES = {"d": CharSet(DIGIT), "w": CharSet(WORD), "s": CharSet(SPACE)}
_CONTROL = {"n": 10, "t": 9, "r": 13, "f": 12, "v": 11, "a": 7}


class _Parser:
    def __init__(self, pattern: str):
        self.text = pattern
        self.at = 0

    def error(self, what: str) -> RegexError:
        return RegexError(f"pattern {self.text!r}: {what} at offset {self.at} (supported: RE2's literals, "
                          "classes, groups, | and quantifiers, ^ $ \\b \\B)")

    def peek(self) -> str | None:
        return self.text[self.at] if self.at < len(self.text) else None

    def take(self) -> str:
        char = self.text[self.at]
        self.at += 1
        return char

    def parse(self):
        node = self.alternation()
        if self.peek() is not None:
            raise self.error(f"unexpected {self.peek()!r}")
        return node

    def alternation(self):
        branches = [self.concatenation()]
        while self.peek() == "|":
            self.take()
            branches.append(self.concatenation())
        return branches[0] if len(branches) == 1 else ("alt", branches)

    def concatenation(self):
        items = []
        while self.peek() not in (None, "|", ")"):
            items.append(self.quantified(self.atom()))
        return ("cat", items) if items else ("empty",)

    def quantified(self, node):
        while self.peek() in ("*", "+", "?", "{"):
            char = self.peek()
            if char == "{":
                bounds = self.counted()
                if bounds is None:
                    break
                low, high = bounds
            else:
                self.take()
                low, high = {"*": (0, None), "+": (1, None), "?": (0, 1)}[char]
            if self.peek() == "?":
                self.take()  # lazy: the same set of full matches
            if node[0] == "assert":
                raise self.error("a quantified assertion")
            if node[0] == "repeat":
                raise self.error("a repeated repetition (RE2's 'bad repetition operator')")
            node = ("repeat", node, low, high)
        return node

    def counted(self) -> tuple[int, int | None] | None:
        """{n}, {n,}, {n,m}; None (a literal '{', as in RE2) when it is not one of them."""
        end = self.text.find("}", self.at)
        body = self.text[self.at + 1 : end] if end > 0 else ""
        parts = body.split(",")
        if end < 0 or len(parts) > 2 or not parts[0].isdigit() or (len(parts) == 2 and parts[1] and not parts[1].isdigit()):
            return None
        self.at = end + 1
        low = int(parts[0])
        high = low if len(parts) == 1 else (int(parts[1]) if parts[1] else None)
        if low > MAX_REPEAT or (high is not None and (high > MAX_REPEAT or high < low)):
            raise self.error(f"bad repetition {{{body}}}")
        return low, high

    def atom(self):
        char = self.take()
        if char == "(":
            if self.text.startswith("?:", self.at):
                self.at += 2
            elif self.text.startswith("?P<", self.at) or self.text.startswith("?<", self.at):
                end = self.text.find(">", self.at)
                if end < 0:
                    raise self.error("an unterminated group name")
                self.at = end + 1
            elif self.peek() == "?":
                raise self.error("a group flag or lookaround '(?'")
            node = self.alternation()
            if self.peek() != ")":
                raise self.error("a missing ')'")
            self.take()
            return node
        if char == ")":
            raise self.error("an unmatched ')'")
        if char in "*+?":
            raise self.error(f"a quantifier {char!r} with nothing before it")
        if char == "^":
            return ("assert", "^")
        if char == "$":
            return ("assert", "$")
        if char == ".":
            return ("set", CharSet(ASCII - {10}, True))
        if char == "[":
            return ("set", self.char_class())
        if char == "\\":
            return self.escape(in_class=False)
        return ("bytes", char.encode("utf-8"))

    def escape(self, in_class: bool):
        if self.peek() is None:
            raise self.error("a trailing backslash")
        char = self.take()
        if char.lower() in _CLASS_ESCAPES:
            found = _CLASS_ESCAPES[char.lower()]
            return ("set", found.negated() if char.isupper() else found)
        if not in_class and char in "bB":
            return ("assert", char)
        if not in_class and char == "A":
            return ("assert", "^")
        if not in_class and char == "z":
            return ("assert", "$")
        if char in _CONTROL:
            return ("bytes", bytes([_CONTROL[char]]))
        if char == "x":
            digits = self.text[self.at : self.at + 2]
            if len(digits) != 2 or any(d not in "0123456789abcdefABCDEF" for d in digits):
                raise self.error("a bad \\x escape")
            self.at += 2
            return ("bytes", chr(int(digits, 16)).encode("utf-8"))
        if char.isalnum():
            raise self.error(f"the escape \\{char}")
        return ("bytes", char.encode("utf-8"))

    def class_char(self) -> CharSet | int:
        """One item of a class: a character (its code) or a class escape's set."""
        char = self.take()
        if char == "\\":
            node = self.escape(in_class=True)
            if node[0] == "set":
                return node[1]
            char = node[1].decode("utf-8")
        if ord(char) >= 128:
            raise self.error(f"a non-ASCII character {char!r} in a class")
        return ord(char)

    def char_class(self) -> CharSet:
        negate = self.peek() == "^"
        if negate:
            self.take()
        found = CharSet(frozenset())
        first = True
        while True:
            if self.peek() is None:
                raise self.error("a missing ']'")
            if self.peek() == "]" and not first:
                self.take()
                break
            if self.text.startswith("[:", self.at):
                raise self.error("a POSIX class [:...:]")
            first = False
            item = self.class_char()
            if isinstance(item, CharSet):
                found = found | item
                continue
            if self.peek() == "-" and self.at + 1 < len(self.text) and self.text[self.at + 1] != "]":
                self.take()
                high = self.class_char()
                if isinstance(high, CharSet) or high < item:
                    raise self.error("a bad range")
                found = found | CharSet(frozenset(range(item, high + 1)))
            else:
                found = found | CharSet(frozenset({item}))
        return found.negated() if negate else found


# -- NFA ----------------------------------------------------------------------------------------


@dataclass
class _Nfa:
    moves: list[list[tuple[frozenset[int], int]]] = field(default_factory=list)  # byte set → state
    empties: list[list[tuple[str | None, int]]] = field(default_factory=list)  # (assertion, state)

    def state(self) -> int:
        self.moves.append([])
        self.empties.append([])
        if len(self.moves) > 50 * MAX_DFA_STATES:
            raise RegexError("the pattern is too large")
        return len(self.moves) - 1

    def build(self, node, start: int) -> int:
        """States for `node` from `start`; returns its end state."""
        kind = node[0]
        if kind == "empty":
            return start
        if kind == "bytes":
            for byte in node[1]:
                nxt = self.state()
                self.moves[start].append((frozenset({byte}), nxt))
                start = nxt
            return start
        if kind == "set":
            return self.char_set(node[1], start)
        if kind == "assert":
            end = self.state()
            self.empties[start].append((node[1], end))
            return end
        if kind == "cat":
            for item in node[1]:
                start = self.build(item, start)
            return start
        if kind == "alt":
            end = self.state()
            for branch in node[1]:
                first = self.state()
                self.empties[start].append((None, first))
                self.empties[self.build(branch, first)].append((None, end))
            return end
        _, inner, low, high = node
        for _ in range(low):
            start = self.build(inner, start)
        if high is None:  # a loop: inner any number of times
            loop_start = self.state()
            self.empties[start].append((None, loop_start))
            self.empties[self.build(inner, loop_start)].append((None, loop_start))
            return loop_start
        end = self.state()
        self.empties[start].append((None, end))
        for _ in range(high - low):
            start = self.build(inner, start)
            self.empties[start].append((None, end))
        return end

    def char_set(self, chars: CharSet, start: int) -> int:
        end = self.state()
        if chars.ascii:
            self.moves[start].append((chars.ascii, end))
        if chars.non_ascii:  # one whole UTF-8 sequence: a lead byte, then 1-3 continuation bytes
            continuation = frozenset(range(0x80, 0xC0))
            for lead, count in ((range(0xC2, 0xE0), 1), (range(0xE0, 0xF0), 2), (range(0xF0, 0xF5), 3)):
                state = self.state()
                self.moves[start].append((frozenset(lead), state))
                for _ in range(count - 1):
                    nxt = self.state()
                    self.moves[state].append((continuation, nxt))
                    state = nxt
                self.moves[state].append((continuation, end))
        return end


# -- DFA ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Dfa:
    """The compiled pattern: state 0 is dead (absorbing, rejecting), `start` the initial state.
    `classes[b]` is byte b's class; `table[s, c]` the state after a byte of class c in state s;
    `accept[s]` whether the text may end in state s."""

    classes: np.ndarray  # [256] uint8
    table: np.ndarray  # [states, class count]
    accept: np.ndarray  # [states] bool
    start: int


def compile_pattern(pattern: str) -> Dfa:
    """The DFA that accepts exactly the byte strings the pattern fully matches."""
    nfa = _Nfa()
    first = nfa.state()
    final = nfa.build(_Parser(pattern).parse(), first)

    def closure(kernel: frozenset[int], prev_word: bool, at_start: bool, next_byte: int | None) -> set[int]:
        next_word = next_byte is not None and next_byte in WORD
        holds = {None: True, "^": at_start, "$": next_byte is None,
                 "b": prev_word != next_word, "B": prev_word == next_word}
        seen, todo = set(kernel), list(kernel)
        while todo:
            for assertion, target in nfa.empties[todo.pop()]:
                if holds[assertion] and target not in seen:
                    seen.add(target)
                    todo.append(target)
        return seen

    # Bytes that every byte set, the word test and the assertions treat alike share a class.
    sets = sorted({s for moves in nfa.moves for s, _ in moves}, key=sorted)
    signatures = [(b in WORD, *(b in s for s in sets)) for b in range(256)]
    representatives: dict[tuple, int] = {}
    classes = np.array([representatives.setdefault(sig, len(representatives)) for sig in signatures], np.uint8)
    members = [signatures.index(sig) for sig in representatives]  # one byte per class

    State = tuple[frozenset[int], bool, bool]
    start: State = (frozenset({first}), False, True)
    dead: State = (frozenset(), False, False)
    ids: dict[State, int] = {dead: 0, start: 1}
    order: list[State] = [dead, start]
    rows: list[list[int]] = []
    for state in order:  # grows while it is walked
        kernel, prev_word, at_start = state
        row = []
        for byte in members:
            reached = closure(kernel, prev_word, at_start, byte) if kernel else set()
            moved = frozenset(t for s in reached for chars, t in nfa.moves[s] if byte in chars)
            target: State = (moved, byte in WORD, False) if moved else dead
            if target not in ids:
                if len(order) >= MAX_DFA_STATES:
                    raise RegexError(f"pattern {pattern!r} needs more than {MAX_DFA_STATES} DFA states")
                ids[target] = len(order)
                order.append(target)
            row.append(ids[target])
        rows.append(row)
    accept = np.array([bool(k) and final in closure(k, w, s, None) for k, w, s in order], bool)
    dtype = np.uint8 if len(order) <= 256 else np.uint16
    return Dfa(classes, np.array(rows, dtype), accept, 1)


def full_match(dfa: Dfa, text: bytes) -> bool:
    """Run the DFA in Python (the generated code's loop; tests compare it with Python's `re`)."""
    state = dfa.start
    for byte in text:
        state = int(dfa.table[state, dfa.classes[byte]])
    return bool(dfa.accept[state])


__all__ = ["Dfa", "MAX_DFA_STATES", "RegexError", "compile_pattern", "full_match"]
