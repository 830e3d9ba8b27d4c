"""A small POSIX-shell reader for the gate: words, operators, simple commands, a normal form.

Not a shell: it never expands anything. It knows quoting (`'…'`, `"…"`, `\\x`), operators
(`;`, `&&`, `|`, redirects …), comments, here-documents and substitutions (`$(…)`, backticks,
`<(…)`) well enough to (1) split a command line into the simple commands a shell would run, and
(2) give every command line a normal form in which whitespace and quoting no longer matter
(`git  push 'origin'` and `git push origin` are the same command), while a literal `'$(x)'` and a
real substitution `$(x)` stay different. Stdlib only (hot path).
"""

from __future__ import annotations

import re
import time
from collections import namedtuple

# a word: its text (what the shell would see, with substitutions left raw), its normal form, and
# whether any part of it is an expansion ($VAR, $(…), `…`) the reader did not evaluate
Word = namedtuple("Word", "text norm expands subs")
# one simple command: argv words, redirects [(op, Word)], here-doc bodies, and its pipeline number
Simple = namedtuple("Simple", "argv redirects heredocs pipeline")

OPERATORS = ("&&", "||", ";;", "|&", "&>>", ">>", "<<<", "<<-", "<<", ">&", "<&", ">|", "<>", "&>",
             ";", "&", "|", "(", ")", "<", ">")
SEPARATORS = frozenset({";", "&&", "||", ";;", "&", "(", ")", "|", "|&"})
PIPES = frozenset({"|", "|&"})
REDIRECTS = frozenset({">>", "<<<", "<<-", "<<", ">&", "<&", ">|", "<>", "&>", "&>>", "<", ">"})
WRITE_REDIRECTS = frozenset({">", ">>", ">|", "<>", "&>", "&>>"})
_WORD_END = frozenset(" \t\n;&|()<>")
_OP_START = frozenset(op[0] for op in OPERATORS)


class LexError(ValueError):
    """The command line could not be read (an unclosed quote or substitution)."""


class OverBudget(Exception):
    """Reading the command line took longer than the caller's deadline (time.monotonic())."""


def _balanced(text: str, start: int, close: str = ")") -> int:
    """Index just past the `)` closing a `$(` / `<(` whose body starts at `start`."""
    depth, i, n = 1, start, len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == "'":
            end = text.find("'", i + 1)
            if end < 0:
                raise LexError("unclosed ' inside a substitution")
            i = end + 1
            continue
        if c == '"':
            i = _double_end(text, i + 1)
            continue
        if c == "`":
            end = _backtick_end(text, i + 1)
            i = end
            continue
        if c == "(":
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise LexError("unclosed substitution")


def _double_end(text: str, i: int) -> int:
    """Index just past the `"` closing a double-quoted string whose body starts at `i`."""
    n = len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == '"':
            return i + 1
        if c == "$" and text.startswith("$(", i):
            i = _balanced(text, i + 2)
            continue
        if c == "`":
            i = _backtick_end(text, i + 1)
            continue
        i += 1
    raise LexError('unclosed "')


def _backtick_end(text: str, i: int) -> int:
    n = len(text)
    while i < n:
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == "`":
            return i + 1
        i += 1
    raise LexError("unclosed `")


class _WordBuilder:
    def __init__(self) -> None:
        self.text: list[str] = []
        self.norm: list[str] = []
        self.literal: list[str] = []
        self.expands = False
        self.subs: list[str] = []

    def lit(self, chars: str) -> None:
        self.text.append(chars)
        self.literal.append(chars)

    def exp(self, raw: str, sub: str | None = None) -> None:
        self._flush()
        self.text.append(raw)
        self.norm.append(raw)
        self.expands = True
        if sub is not None:
            self.subs.append(sub)

    def _flush(self) -> None:
        if self.literal:
            self.norm.append(_quote("".join(self.literal)))
            self.literal = []

    def build(self) -> Word:
        self._flush()
        return Word("".join(self.text), "".join(self.norm) or "''", self.expands, tuple(self.subs))


def _dollar(text: str, i: int, word: _WordBuilder) -> int:
    """Read a `$…` expansion starting at `i` (text[i] == '$') into `word`; returns the new index."""
    nxt = text[i + 1 : i + 2]
    if nxt == "(":
        end = _balanced(text, i + 2)
        body = text[i + 2 : end - 1]
        if body.startswith("(") and body.endswith(")"):  # $(( arithmetic ))
            word.exp(text[i:end])
        else:
            word.exp(text[i:end], body)
        return end
    if nxt == "{":
        end = text.find("}", i + 2)
        if end < 0:
            raise LexError("unclosed ${")
        word.exp(text[i : end + 1])
        return end + 1
    if nxt == "'":  # $'…' ANSI-C quoting: literal text, escapes left as written
        end = i + 2
        while end < len(text) and text[end] != "'":
            end += 2 if text[end] == "\\" else 1
        if end >= len(text):
            raise LexError("unclosed $'")
        word.lit(text[i + 2 : end])
        return end + 1
    match = re.match(r"\$(?:[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])", text[i:])
    if match:
        word.exp(match.group(0))
        return i + len(match.group(0))
    word.lit("$")
    return i + 1


def _read_word(text: str, i: int) -> tuple[Word, int]:
    word = _WordBuilder()
    n = len(text)
    while i < n:
        c = text[i]
        if c in _WORD_END:
            if c in "<>" and text[i + 1 : i + 2] == "(" and not word.text:  # <(…) >(…)
                end = _balanced(text, i + 2)
                word.exp(text[i:end], text[i + 2 : end - 1])
                i = end
                continue
            break
        if c == "\\":
            if text[i + 1 : i + 2] == "\n":
                i += 2
                continue
            word.lit(text[i + 1 : i + 2])
            i += 2
            continue
        if c == "'":
            end = text.find("'", i + 1)
            if end < 0:
                raise LexError("unclosed '")
            word.lit(text[i + 1 : end])
            if end == i + 1:
                word.lit("")
            i = end + 1
            continue
        if c == '"':
            i += 1
            while True:
                if i >= n:
                    raise LexError('unclosed "')
                c = text[i]
                if c == '"':
                    i += 1
                    break
                if c == "\\" and text[i + 1 : i + 2] in ('"', "\\", "$", "`", "\n"):
                    if text[i + 1] != "\n":
                        word.lit(text[i + 1])
                    i += 2
                    continue
                i = _expansion_or_char(text, i, word)
            continue
        i = _expansion_or_char(text, i, word)
    return word.build(), i


def _expansion_or_char(text: str, i: int, word) -> int:
    """`$…` and backquotes expand alike inside double quotes and bare; anything else is literal."""
    c = text[i]
    if c == "$":
        return _dollar(text, i, word)
    if c == "`":
        end = _backtick_end(text, i + 1)
        word.exp(text[i:end], text[i + 1 : end - 1])
        return end
    word.lit(c)
    return i + 1


def lex(text: str, deadline: float | None = None) -> list[tuple[str, object]]:
    """Tokens: ("w", Word), ("o", operator), ("h", here-doc body). Newlines become ";".
    With a deadline, raises OverBudget once it has passed (checked every 1024 tokens)."""
    tokens: list[tuple[str, object]] = []
    pending: list[tuple[str, bool]] = []  # here-doc delimiters waiting for the end of the line
    expect_delimiter: str | None = None
    i, n = 0, len(text)
    while i < n:
        if deadline is not None and not len(tokens) & 1023 and tokens and time.monotonic() > deadline:
            raise OverBudget(f"reading the command line ran out of time after {len(tokens)} tokens")
        c = text[i]
        if c in " \t\r":
            i += 1
            continue
        if c == "\\" and text[i + 1 : i + 2] == "\n":
            i += 2
            continue
        if c == "\n":
            tokens.append(("o", ";"))
            i += 1
            for delimiter, strip in pending:
                body: list[str] = []
                while i < n:
                    end = text.find("\n", i)
                    line = text[i:] if end < 0 else text[i:end]
                    i = n if end < 0 else end + 1
                    if (line.lstrip("\t") if strip else line) == delimiter:
                        break
                    body.append(line)
                tokens.append(("h", "\n".join(body)))
            pending = []
            continue
        if c == "#":
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if c in "<>" and text[i + 1 : i + 2] == "(":
            word, i = _read_word(text, i)
            tokens.append(("w", word))
            continue
        op = next((o for o in OPERATORS if text.startswith(o, i)), None) if c in _OP_START else None
        if op is not None:
            tokens.append(("o", op))
            i += len(op)
            if op in ("<<", "<<-"):
                expect_delimiter = op
            continue
        word, i = _read_word(text, i)
        if not word.expands and word.text.isdigit() and text[i : i + 1] in ("<", ">"):  # 2>file, 0<&3
            op = next(o for o in OPERATORS if text.startswith(o, i))
            tokens.append(("o", word.text + op))
            i += len(op)
            continue
        tokens.append(("w", word))
        if expect_delimiter is not None:
            pending.append(("".join(ch for ch in word.text), expect_delimiter == "<<-"))
            expect_delimiter = None
    if pending:  # a here-doc with no body line at all (the text ended on its line)
        tokens.extend(("h", "") for _ in pending)
    return tokens


def normal_form(text: str) -> str:
    """The command line with whitespace and quoting normalised (same tokens -> same string)."""
    try:
        tokens = lex(text)
    except LexError:
        return " ".join(text.split())
    out: list[str] = []
    for kind, value in tokens:
        if kind == "w":
            out.append(value.norm)
        elif kind == "o":
            out.append(value)
        else:
            out.append("<<" + _quote(value))
    while out and out[-1] == ";":
        out.pop()
    return " ".join(out)


def simple_commands(text: str, deadline: float | None = None) -> list[Simple]:
    """The simple commands of a command line, in order (raises LexError when unreadable,
    OverBudget when a deadline passes)."""
    commands: list[Simple] = []
    argv: list[Word] = []
    redirects: list[tuple[str, Word]] = []
    heredocs: list[str] = []
    pipeline = 0
    redirect_op: str | None = None
    last: Simple | None = None

    def close() -> None:
        nonlocal argv, redirects, heredocs, last
        if argv or redirects:
            last = Simple(argv, redirects, heredocs, pipeline)
            commands.append(last)
        argv, redirects, heredocs = [], [], []

    for kind, value in lex(text, deadline):
        if kind == "h":
            (last.heredocs if (last is not None and not argv and not redirects) else heredocs).append(value)
            continue
        if kind == "o":
            if value.lstrip("0123456789") in REDIRECTS:
                redirect_op = value.lstrip("0123456789")
                continue
            close()
            if value not in PIPES:
                pipeline += 1
            continue
        if redirect_op is not None:
            redirects.append((redirect_op, value))
            redirect_op = None
            continue
        argv.append(value)
    close()
    return commands


def simple_norm(command: Simple) -> str:
    return " ".join([w.norm for w in command.argv] + [f"{op} {w.norm}" for op, w in command.redirects])


def _quote(text: str) -> str:
    """shlex.quote, imported when a shell word is first normalised (shlex compiles a pattern at
    import: a Read, Write or Edit call never needs it)."""
    import shlex

    return shlex.quote(text)
