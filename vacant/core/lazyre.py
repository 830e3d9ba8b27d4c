"""A regular expression compiled on its first use.

A hook process is a fresh interpreter at every tool call, and compiling the shipped patterns (the
gate's ACT rules, the redactor's keyword and entropy patterns) cost about 30 ms of a Read call that
uses none of them. A `Lazy` pattern is compiled once, when a call first needs it; what it matches
is exactly what `re.compile(source, flags)` matches.

`re` itself is imported on that first use too: with the enum it builds its flags from, about 4 ms
of a hook process whose call matches nothing (bench/bench_fallback.py). So the flags a hot module
names at import are here as plain ints (`re`'s own values: a test holds them equal).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing's, without importing typing: that costs each hook call 15 ms CPU (hook/lean.py)
if TYPE_CHECKING:
    import re
    from collections.abc import Callable, Iterator
    from typing import Any

# re.IGNORECASE, re.MULTILINE, re.DOTALL, without importing re
IGNORECASE = 2
MULTILINE = 8
DOTALL = 16


def escape(text: str) -> str:
    """A pattern matching exactly `text`, as `re.escape(text)` makes one, without `re`: every
    character but a letter, a digit and `_` escaped (re.escape before Python 3.7; an escaped
    punctuation or non-ASCII character is itself)."""
    return "".join(char if char.isalnum() or char == "_" else "\\" + char for char in text)


class Lazy:
    """`re.compile(source, flags)`, deferred: the methods the callers use, and `pattern`/`flags`."""

    __slots__ = ("source", "flags", "_compiled")

    def __init__(self, source: str, flags: int = 0) -> None:
        self.source, self.flags = source, flags
        self._compiled: re.Pattern[str] | None = None

    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            import re

            self._compiled = re.compile(self.source, self.flags)
        return self._compiled

    @property
    def pattern(self) -> str:
        return self.source

    def search(self, text: str) -> re.Match[str] | None:
        return self.compiled().search(text)

    def match(self, text: str) -> re.Match[str] | None:
        return self.compiled().match(text)

    def fullmatch(self, text: str) -> re.Match[str] | None:
        return self.compiled().fullmatch(text)

    def findall(self, text: str) -> list[Any]:
        return self.compiled().findall(text)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return self.compiled().finditer(text)

    def sub(self, replacement: str | Callable[[re.Match[str]], str], text: str) -> str:
        return self.compiled().sub(replacement, text)

    def __eq__(self, other: object) -> bool:  # rules are compared by what they match
        return isinstance(other, Lazy) and (self.source, self.flags) == (other.source, other.flags)

    def __hash__(self) -> int:
        return hash((self.source, self.flags))

    def __repr__(self) -> str:
        return f"Lazy({self.source!r}, {self.flags!r})"
