"""A finding: one failing thing on a workspace state, with a location and an id stable across rounds.

The id is a short sha256 of (check or flag, path, the offending text): it does not contain the
line number, so the same problem keeps its id when lines move, and a problem that is fixed and
then broken again gets its old id back. Leading and trailing whitespace of the text is ignored
(re-indenting a line does not make it a new problem).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

SOURCES = ("check", "flag", "record")  # record: vacant's own record found altered (a removed flag)
ID_LENGTH = 12


def finding_id(name: str, path: str | None, text: str) -> str:
    """12 hex digits of sha256 over (name, path, text with its outer whitespace stripped)."""
    payload = json.dumps([name, path, (text or "").strip()], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()[:ID_LENGTH]


def test_finding_id(name: str, test_id: str) -> str:
    """A failing test's finding id: check and test id only, so it is the same on every state
    whatever line the failure points at."""
    payload = json.dumps(["test", name, test_id], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()[:ID_LENGTH]


@dataclass
class Finding:
    id: str
    source: str  # "check" | "flag"
    name: str  # the check's name, or the flag's id
    path: str | None  # workspace-relative, posix
    line: int | None
    col: int | None
    message: str
    text: str  # the offending line's exact text at that location ('' if none)
    env: bool = False  # env/NAME: a tool is missing; never attributed to anyone
    test: str | None = None  # the failing test's id, when the check's runner reported per test

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def location(self) -> str:
        """`path:line[:col]`, `path`, or '' for a finding without a location."""
        if self.path is None:
            return ""
        where = self.path
        if self.line is not None:
            where += f":{self.line}"
            if self.col is not None:
                where += f":{self.col}"
        return where


def split_lines(text: str) -> list[str]:
    """Lines as an editor numbers them: split on '\\n' only, each without its '\\r\\n' or '\\n'."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def read_text_lines(path: Path) -> list[str] | None:
    """A file's lines (undecodable bytes replaced), or None when it cannot be read."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return None
    return split_lines(data.decode("utf-8", errors="replace"))


def line_text(lines: list[str] | None, line: int | None) -> str:
    if lines is None or line is None or line < 1 or line > len(lines):
        return ""
    return lines[line - 1]
