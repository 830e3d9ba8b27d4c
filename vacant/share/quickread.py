"""The quick reader: a record blob checked by one compiled regex of its shape instead of
`json.loads`, the typed `parse_*` and serialising it again, for the blobs that need no escape.

Contract:
- `quick_read(data)` returns the envelope's fields, the body's canonical bytes and what the
  team view keeps of the body only when `records.parse_blob(data)` accepts `data` and they are
  what it gives; otherwise None, and the caller asks `parse_blob` (which also says why a record is
  refused). So the quick reader decides nothing alone: it only spares the slow path's work on the
  common blob, and a test holds it to `parse_blob` as the oracle on generated, malformed and
  hostile blobs.
- The regexes are generated from the same field checks `parse_typed` runs (records.py `Fast`),
  so a shape has one source: a key added to a record is matched, or the shape is left to the slow
  path whole (a check without a `Fast` form), never skipped.
- What is matched: canonical JSON (keys sorted, no spaces, one newline) whose strings are
  printable ASCII without `"` or `\\` (so a string's bytes are its characters: lengths, paths and
  ids are checked on the bytes), integers below 10**15, numbers written as their shortest `repr`
  (checked on decoding), and lists of at most each list's limit. Anything else is read slowly.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import fields
from typing import Any

from vacant.share.records import BODIES, FORMAT, FORMATS, Check, Envelope, _ascii

_TAIL = re.compile(rb',"kind":"([a-z]+)","sig":"[A-Za-z0-9_-]{86}","v":([0-9]+)\}\n\Z')
_TAIL_BYTES = 130  # longer than any tail _TAIL matches
Slot = Callable[["re.Match[bytes]"], Any]


class Quick:
    """What `parse_blob` would give of a blob, as the team view needs it: the envelope's fields, the
    body's canonical bytes (`records.cut_body`), the JSON value of each top-level body key but the
    lists (`values`), and the canonical JSON of any top-level key (`text`)."""

    __slots__ = ("author", "kind", "v", "sig", "body", "values", "_match", "_shape")

    def __init__(self, shape: _Shape, match: re.Match[bytes], values: dict[str, Any]) -> None:
        self.author, self.sig = match.group(1)[1:-1].decode(), match.group(shape.sig_group)[1:-1].decode()
        self.kind, self.v, self.body, self.values = shape.kind, shape.version, match.group(2), values
        self._match, self._shape = match, shape

    def text(self, name: str, absent: bytes = b"") -> bytes:
        """The canonical JSON of a top-level body key (`absent` for a key this format lacks)."""
        group = self._shape.top.get(name)
        return absent if group is None else self._match.group(group)

    def raw(self) -> dict[str, Any]:
        """The body's JSON value (`Envelope.body`), its lists decoded now."""
        if len(self.values) == len(self._shape.order):
            return self.values  # no list in this shape: decoded whole on reading (a review's body)
        return {name: self.values[name] if name in self.values else json.loads(self.text(name))
                for name in self._shape.order}


class _Refused(Exception):
    """The shape uses a check the quick reader has no regex for."""


class _Shape:
    """One compiled (kind, format): the blob's regex, and how to decode a match's body keys. Every
    key is decoded (and its numbers checked) on reading but the top-level lists, which hold no
    number to check and are decoded only when `Quick.raw` asks. The decoding is one expression
    generated over the match's groups (from the field checks alone, never from a record): a
    decoder called per key cost more than the regex itself."""

    def __init__(self, kind: str, version: int) -> None:
        self.kind, self.version = kind, version
        self.count = 2  # groups 1 and 2: author, body; then the body's, in order; the sig's last
        self.helpers: list[Callable[[bytes], Any]] = []
        items = sorted(_checks(BODIES[kind], version))
        self.order = tuple(name for name, _ in items)
        self.top: dict[str, int] = {}
        parts, decoded = [], []
        for name, check in items:
            pattern, group, source = self._value(check)
            self.top[name] = group
            parts.append(b'"%s":%s' % (name.encode(), pattern))
            if check.fast is not None and check.fast.kind != "list":
                decoded.append(f"{name!r}: {source}")
        author, sig = (_field_pattern(Envelope, name) for name in ("author", "sig"))
        self.sig_group = self.count + 1
        self.regex = re.compile(b'\\{"author":(%s),"body":(%s),"kind":"%s","sig":(%s),"v":%d\\}\n'
                                % (author, b"\\{" + b",".join(parts) + b"\\}", kind.encode(), sig, version))
        self.build: Callable[[tuple[Any, ...]], dict[str, Any]] = eval(  # noqa: S307 - our own source, above
            "lambda g: {" + ", ".join(decoded) + "}", {"helpers": self.helpers})

    def _group(self) -> int:
        self.count += 1
        return self.count

    def _value(self, check: Check) -> tuple[bytes, int, str]:
        """A value's regex, captured (groups are numbered by their opening parenthesis, so a nested
        object's group comes before its keys'), and the source decoding it from the groups `g`."""
        group = self._group()
        fast = check.fast
        if fast is None or fast.kind != "nested":
            return b"(%s)" % _pattern(check, direct=True), group, self._source(check, f"g[{group - 1}]")
        assert fast.cls is not None
        parts, decoded = [], []
        for name, inner in sorted(_checks(fast.cls, FORMAT)):
            pattern, _, source = self._value(inner)
            parts.append(b'"%s":%s' % (name.encode(), pattern))
            decoded.append(f"{name!r}: {source}")
        return b"(\\{" + b",".join(parts) + b"\\})", group, "{" + ", ".join(decoded) + "}"

    def _source(self, check: Check, text: str) -> str:
        """The source decoding one captured value's bytes `text` as `_decoder(check)` does."""
        fast = check.fast
        assert fast is not None
        if fast.kind == "optional":
            assert fast.inner is not None
            return f"(None if {text} == b'null' else {self._source(fast.inner, text)})"
        if fast.kind == "leaf" and fast.decode is _ascii:
            return f"{text}[1:-1].decode()"
        if fast.kind == "leaf" and fast.decode is int:
            return f"int({text})"
        self.helpers.append(_decoder(check))
        return f"helpers[{len(self.helpers) - 1}]({text})"

    def read(self, data: bytes) -> Quick | None:
        match = self.regex.fullmatch(data)
        if match is None:
            return None
        try:
            values = self.build(match.groups())
        except ValueError:  # a number not in its shortest form, or out of its bounds
            return None
        return Quick(self, match, values)


def _checks(cls: type, version: int) -> list[tuple[str, Check]]:
    return [(item.name, item.metadata["check"]) for item in fields(cls)
            if int(item.metadata.get("since", 1)) <= version]


def _field_pattern(cls: type, name: str) -> bytes:
    return dict(_checks(cls, 1))[name].fast.pattern  # type: ignore[union-attr]


def _slot(group: str, decode: Callable[[bytes], Any]) -> Slot:
    return lambda match: decode(match.group(group))


def _pattern(check: Check, direct: bool) -> bytes:
    """The regex of a value of `check`; `direct`: its match is decoded on its own (so a `checked`
    leaf may appear; inside a list it is decoded by json and could not be checked)."""
    fast = check.fast
    if fast is None or (fast.kind == "checked" and not direct):
        raise _Refused(check.describe)
    if fast.kind in ("leaf", "checked"):
        return b"(?:%s)" % fast.pattern
    if fast.kind == "optional":
        assert fast.inner is not None and fast.inner.fast is not None
        return b"(?:null|%s)" % _pattern(fast.inner, direct and fast.inner.fast.kind in ("leaf", "checked"))
    if fast.kind == "list":
        assert fast.inner is not None
        item = _pattern(fast.inner, direct=False)
        return b"\\[(?:%s(?:,%s){0,%d})?\\]" % (item, item, fast.limit - 1)
    assert fast.kind == "nested" and fast.cls is not None
    parts = [b'"%s":%s' % (name.encode(), _pattern(inner, direct=False))
             for name, inner in sorted(_checks(fast.cls, FORMAT), key=lambda pair: pair[0])]
    return b"\\{" + b",".join(parts) + b"\\}"


def _decoder(check: Check) -> Callable[[bytes], Any]:
    """How a matched value's bytes become its JSON value."""
    fast = check.fast
    assert fast is not None
    if fast.kind in ("leaf", "checked"):
        assert fast.decode is not None
        return fast.decode
    if fast.kind == "optional":
        assert fast.inner is not None
        inner = _decoder(fast.inner)
        return lambda text: None if text == b"null" else inner(text)
    return json.loads  # a list or an object: no `checked` leaf inside (`_pattern` refused it)


_SHAPES: dict[tuple[str, int], _Shape | None] = {}


def shape(kind: str, version: int) -> _Shape | None:
    """The compiled shape of a (kind, format), None when a check has no quick form."""
    key = (kind, version)
    if key not in _SHAPES:
        try:
            _SHAPES[key] = _Shape(kind, version) if kind in BODIES and version in FORMATS else None
        except _Refused:
            _SHAPES[key] = None
    return _SHAPES[key]


def quick_read(data: bytes) -> Quick | None:
    """`parse_blob`'s answer for `data` without its cost, or None: ask `parse_blob`."""
    tail = _TAIL.search(data, max(0, len(data) - _TAIL_BYTES))
    if tail is None:
        return None
    found = shape(tail.group(1).decode(), int(tail.group(2)))
    return found.read(data) if found is not None else None


_CHANGED = re.compile(rb'"changed":\[(.*?)\],"n":')  # a string here holds no `"`: the first `],"n":` ends it
_LINE_PATH = re.compile(rb'"path":"([^"]*)"')  # in `lines`, only a `PathLines` has a `path` key
_STRING = re.compile(rb'"([^"]*)"')


def run_paths(quick: Quick) -> set[str]:
    """Every path a quick-read run record says it changed: its steps' `changed` and its line data's
    paths (what `team._paths` collects from the typed record)."""
    found = {path.decode() for changed in _CHANGED.findall(quick.text("steps")) for path in _STRING.findall(changed)}
    found.update(path.decode() for path in _LINE_PATH.findall(quick.text("lines")))
    return found

