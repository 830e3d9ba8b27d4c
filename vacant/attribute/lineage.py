"""Lineage: the wrong value a step introduced, and where (if anywhere) the run had seen it.

"The wrong value" is the set of salient tokens on the finding's own line as step k introduced it:
numbers and quoted strings when there are any, else identifiers of three characters or more that
are not keywords. Only when that line has none is the changed block around it used (a step that
writes several lines puts values there that the finding is not about). A source holds the value when its tokens include every one of them
(exact, whole-token matching: 0.0725 does not match 0.07255).
"""

from __future__ import annotations

import difflib
import keyword
import re
from dataclasses import dataclass
from typing import Any

from vacant.attribute.replay import Timeline
from vacant.core.globs import glob_matches
from vacant.store.objects import ObjectStore
from vacant.store.run import RunView

TOKEN = re.compile(
    r"""(?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')"""
    r"""|(?P<number>(?<![\w.])[-+]?\d+(?:[.,]\d+)*(?:[eE][-+]?\d+)?%?(?![\w]))"""
    r"""|(?P<ident>[A-Za-z_][A-Za-z0-9_]*)"""
)
COMMON_WORDS = frozenset({"true", "false", "null", "none", "self", "this", "def", "function", "const", "let", "var"})
EXTERNAL_ORIGINS = ("prompt", "url", "search")


def tokens(text: str) -> tuple[set[str], set[str]]:
    """(numbers and quoted strings, identifiers) found in a text."""
    literal, identifiers = set(), set()
    for match in TOKEN.finditer(text):
        if match.group("string") is not None:
            inner = match.group("string")[1:-1]
            if inner.strip():
                literal.add(inner)
        elif match.group("number") is not None:
            literal.add(match.group("number").lstrip("+"))
        else:
            word = match.group("ident")
            if len(word) >= 3 and not keyword.iskeyword(word) and word.lower() not in COMMON_WORDS:
                identifiers.add(word)
    return literal, identifiers


def salient(text: str, before: str = "") -> set[str]:
    """The salient tokens of `text` that `before` did not already have."""
    literal, identifiers = tokens(text)
    old_literal, old_identifiers = tokens(before)
    new_literal = literal - old_literal
    return new_literal if new_literal else identifiers - old_identifiers


def contains(content: str, value: set[str]) -> bool:
    if not value:
        return False
    literal, identifiers = tokens(content)
    have = literal | identifiers
    # quoted strings in the deliverable may appear unquoted in a source: look for them as text too
    return all(token in have or (" " in token and token in content) for token in value)


def _decode(data: bytes | None) -> str:
    return "" if data is None else data.decode("utf-8", "replace")


@dataclass
class Introduced:
    """The wrong value's tokens and the lines of the new state they were taken from (1-based;
    empty when the whole change was used)."""

    tokens: set[str]
    lines: list[int]


def introduced_value(timeline: Timeline, store: ObjectStore, index: int, path: str | None, line: int | None,
                     text: str = "") -> Introduced:
    """What change `index` introduced at the finding's location: the finding's own line decides;
    only when that line has no salient token is the changed block around it used, and only when
    the line did not change there, the text files the change touched."""
    change = timeline.change(index)
    touched = [*change["added"], *change["changed"]]
    if path in touched and line:
        old = _decode(timeline.content(store, index - 1, path)).splitlines()
        new = _decode(timeline.content(store, index, path)).splitlines()
        line = _locate(new, line, text)
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
            if tag != "equal" and j1 < line <= max(j2, j1 + 1):
                before = "\n".join(old[i1:i2])
                own = salient(new[line - 1], before) if line <= len(new) else set()
                if own:
                    return Introduced(own, [line])
                return Introduced(salient("\n".join(new[j1:j2]), before), list(range(j1 + 1, j2 + 1)))
    value: set[str] = set()
    for rel in touched:
        before, after = timeline.content(store, index - 1, rel), timeline.content(store, index, rel)
        if after is not None and b"\0" not in after[:8192]:
            value |= salient(_decode(after), _decode(before))
    return Introduced(value, [])


def _locate(lines: list[str], line: int, text: str) -> int:
    """The finding's line on this state: its number on the final state, unless its text sits
    elsewhere here (later steps moved it); then the nearest line holding that text."""
    wanted = text.strip()
    if not wanted or (0 < line <= len(lines) and lines[line - 1].strip() == wanted):
        return line
    hits = [n for n, candidate in enumerate(lines, start=1) if candidate.strip() == wanted]
    return min(hits, key=lambda n: (abs(n - line), n)) if hits else line


@dataclass
class Source:
    kind: str  # external | internal
    origin: str  # file | url | prompt | search | command | subagent | pinned
    ref: str
    read_seq: int | None
    producer_step: int | None  # the run's step that produced it (internal sources)
    producer_agent: str | None = None

    def describe(self) -> str:
        return f"{self.origin}:{self.ref}"


def find_source(view: RunView, timeline: Timeline, store: ObjectStore, value: set[str], before_seq: int,
                pinned: list[str]) -> Source | None:
    """The latest read before `before_seq` that holds the value, else a pinned input that does."""
    if not value:
        return None
    reads = [r for r in view.of_type("read") if r["seq"] < before_seq]
    for read in reversed(reads):
        if _holds(store, read, value):
            return classify(view, _shown_file(reads, read, store, value), _ValueIn(timeline, store, value))
    for path, entry in sorted(timeline.states[0].items()):
        if entry[0] == "f" and any(glob_matches(glob, path) for glob in pinned) and store.has(entry[3]):
            if contains(_decode(store.get(entry[3])), value):
                return Source("external", "pinned", path, None, None)
    return None


def _holds(store: ObjectStore, read: dict[str, Any], value: set[str]) -> bool:
    return store.has(read["object"]) and contains(_decode(store.get(read["object"])), value)


def _shown_file(reads: list[dict[str, Any]], read: dict[str, Any], store: ObjectStore,
                value: set[str]) -> dict[str, Any]:
    """A command whose output shows a file (`cat F`, `sed -n 1,5p F`, when the platform reported
    that file read for the same step) passed the file's text on: the file is the source, not the
    command that printed it."""
    if read["origin"] != "command" or read["step"] is None:
        return read
    same_step = (r for r in reversed(reads) if r["origin"] == "file" and r["step"] == read["step"])
    return next((r for r in same_step if _holds(store, r, value)), read)


@dataclass
class _ValueIn:
    """Which recorded change put the value into a file (the file's contents, state by state)."""

    timeline: Timeline
    store: ObjectStore
    value: set[str]

    def holds(self, index: int, path: str) -> bool:
        return contains(_decode(self.timeline.content(self.store, index, path)), self.value)

    def writer(self, view: RunView, path: str, before_seq: int) -> int | None:
        """The step whose change last made `path` hold the value before `before_seq` (None: the
        file held it from the baseline on, or no recorded step put it there). When the recorded
        state at the read does not hold the value, the file changed before a scan saw it (out of
        band, or a parallel process): the first later change that makes it hold the value."""
        changes = self.timeline.changes
        at = sum(1 for change in changes if change["seq"] < before_seq)  # the state the read saw recorded
        writer = None
        for index in range(1, at + 1):
            if self._brought(index, path):
                writer = changes[index - 1]["step"]
        if self.holds(at, path):
            return writer
        return next((changes[index - 1]["step"] for index in range(at + 1, len(changes) + 1)
                     if self._touched(index, path) and self.holds(index, path)), None)

    def _touched(self, index: int, path: str) -> bool:
        change = self.timeline.change(index)
        return path in change["added"] or path in change["changed"]

    def _brought(self, index: int, path: str) -> bool:
        return self._touched(index, path) and self.holds(index, path) and not self.holds(index - 1, path)


def classify(view: RunView, read: dict[str, Any], value_in: _ValueIn | None = None) -> Source:
    """Is this read's origin outside the run, or something the run itself produced? A file is the
    run's own when a recorded step put the value into it (not merely the file's last writer: a
    later step that only moved other lines did not produce the value)."""
    origin, ref = read["origin"], read["ref"]
    if origin in EXTERNAL_ORIGINS:
        return Source("external", origin, ref, read["seq"], None)
    if origin == "subagent":
        producer = _agent_step(view, ref, read)
        return Source("internal", origin, ref, read["seq"], producer, ref)
    if origin == "command":
        return Source("internal", origin, ref, read["seq"], read["step"])
    writer = value_in.writer(view, ref, read["seq"]) if value_in is not None else _last_writer(view, ref, read["seq"])
    if writer is None:
        return Source("external", origin, ref, read["seq"], None)
    if view.steps[writer].out_of_band:
        return Source("external", "out-of-band", ref, read["seq"], None)
    return Source("internal", origin, ref, read["seq"], writer)


def _last_writer(view: RunView, path: str, before_seq: int) -> int | None:
    writer = None
    for change in view.of_type("change"):
        if change["seq"] >= before_seq:
            break
        if change["step"] is not None and path in (*change["added"], *change["changed"]):
            writer = change["step"]
    return writer


def _agent_step(view: RunView, agent_id: str, read: dict[str, Any]) -> int | None:
    """The step that carried a sub-agent's reply: the Agent call, or the sub-agent's last step."""
    if read.get("step") is not None:
        return read["step"]
    own = [s.number for s in view.ordered() if s.agent_id == agent_id]
    return own[-1] if own else None
