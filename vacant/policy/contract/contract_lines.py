"""Where in `vacant.toml` a problem is: the line of a key, found from a validation error's location.

tomllib gives no positions for values, so the file is scanned the way TOML reads it: table
headers (`[stop]`, `[[check]]`, `[[gate.act]]`) open a context, and the key is the first
`key = …` line inside the matching context. Stdlib only; a best effort that never raises (None:
not found, and the message goes without a line).
"""

from __future__ import annotations

import re
from typing import Any

_ARRAY_HEADER = re.compile(r"^\s*\[\[\s*([A-Za-z0-9_.\-\"' ]+?)\s*\]\]")
_TABLE_HEADER = re.compile(r"^\s*\[\s*([A-Za-z0-9_.\-\"' ]+?)\s*\]")
_TOML_POSITION = re.compile(r"\(at line (\d+), column (\d+)\)\s*$")
_SECTIONS = ("stop", "gate", "store")


def _target(loc: list[Any]) -> tuple[str, int, list[str]]:
    """The table (dotted name, "" for the top level), which occurrence of it, and the keys below."""
    if len(loc) >= 2 and isinstance(loc[0], str) and isinstance(loc[1], int):
        return loc[0], loc[1], [str(part) for part in loc[2:] if not isinstance(part, int)]
    if len(loc) >= 3 and loc[0] == "gate" and isinstance(loc[2], int):
        return f"gate.{loc[1]}", loc[2], [str(part) for part in loc[3:] if not isinstance(part, int)]
    if loc and loc[0] in _SECTIONS:
        return str(loc[0]), 0, [str(part) for part in loc[1:] if not isinstance(part, int)]
    return "", 0, [str(part) for part in loc if not isinstance(part, int)]


def _contexts(lines: list[str]) -> list[tuple[str, int, bool]]:
    """For each line: (the table it is in, which occurrence, whether it is the header itself)."""
    seen: dict[str, int] = {}
    table, index = "", 0
    out = []
    for line in lines:
        header = _ARRAY_HEADER.match(line) or _TABLE_HEADER.match(line)
        if header:
            table = header.group(1).replace('"', "").replace("'", "").replace(" ", "")
            index = seen.get(table, -1) + 1 if header.re is _ARRAY_HEADER else 0
            seen[table] = index
        out.append((table, index, bool(header)))
    return out


def line_of(text: str, loc: list[Any]) -> int | None:
    """The 1-based line of the key at `loc` (a pydantic error location), or of its table's header."""
    try:
        lines = text.splitlines()
        table, index, keys = _target(list(loc))
        contexts = _contexts(lines)
        header_line = None
        for number, (line, (ctx_table, ctx_index, is_header)) in enumerate(zip(lines, contexts), 1):
            if (ctx_table, ctx_index) != (table, index):
                continue
            if is_header:
                header_line = number
                continue
            if keys and re.match(rf"^\s*[\"']?{re.escape(keys[0])}[\"']?\s*=", line):
                return number
        return header_line
    except Exception:  # noqa: BLE001 - a position is a courtesy; the message stands without it
        return None


def toml_position(message: str) -> tuple[str, int | None, int | None]:
    """tomllib's message without its `(at line L, column C)`, and L and C."""
    match = _TOML_POSITION.search(message)
    if not match:
        return message, None, None
    return message[: match.start()].rstrip(), int(match.group(1)), int(match.group(2))


def quoted_line(text: str, number: int | None, width: int = 60) -> str:
    """The line's text, trimmed, for a message (`` reads `[[check]` ``), or ''."""
    if number is None:
        return ""
    lines = text.splitlines()
    if not 1 <= number <= len(lines):
        return ""
    shown = lines[number - 1].strip()
    shown = shown if len(shown) <= width else shown[: width - 1] + "…"
    return f" (it reads `{shown}`)" if shown else ""
