"""The index reader: a format 2 manifest (an index of a publication's records, megabytes at a
team's scale) checked without decoding its ~120,000 hex ids through `json.loads`.

Contract:
- `read_index(data)` returns the envelope's fields, the body's bytes and its JSON value only when
  `records.parse_blob(data)` accepts `data` as a manifest of format 2 or later and they are what
  it gives; otherwise None, and the caller asks `parse_blob` (which also says why a record is
  refused). So the reader decides nothing alone: a test holds it to `parse_blob` as the oracle on
  generated, malformed and hostile blobs.
- How: the body is walked key by key in the canonical order of `ManifestRecord`'s fields (and of
  `RunIndex`'s and `ReviewIndex`'s within), read from the same field checks `parse_typed` runs, so
  a shape has one source. A list of hex ids (a check with `hex_lengths`) is checked on its bytes
  by position: every item the same width, its quotes and commas at their stride and nothing but
  lower-case hex digits between them; it is kept undecoded (`HexColumn`: its length known, its
  items decoded on first use). Any other value is decoded by json's own scanner (`raw_decode`,
  what `json.loads` runs) and checked by its field's own `Check.parse`, so its numbers, strings and
  nested objects are decided by exactly the slow path's code; but a list of numbers whose texts
  repeat (scores, weights, cell indexes) is cut on its commas, each distinct text decoded by
  `json.loads` and checked by the item's own check once, and its length by the list's limit.
- `Index.values` holds `HexColumn`s, which JSON cannot write: only for a verdict that is never
  cached (`team.check_manifests`); `Index.raw()` is the body as `parse_blob` gives it, plain lists.
- Limits, each left to the slow path: a body not ASCII, keys in any other order or with spaces
  between them, a list of ids mixing widths (40 and 64 hex), a value json or its check refuses.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import fields
from typing import Any, overload

from vacant.share.records import BODIES, FORMAT, FORMATS, Check, Envelope, RecordError

_KIND = "manifest"
_SCAN = json.JSONDecoder().raw_decode  # json.loads' own scanner: one value from a position
_HEX_DIGITS = b"0123456789abcdef"
_NUMBER_CHARS = b"0123456789.eE+-"
_SAMPLE = 400  # bytes of a list of numbers that tell whether its texts repeat


def _envelope_pattern(name: str) -> bytes:
    """The regex of an envelope field's value, quotes included (records.py `Fast`: one source)."""
    check = next(item.metadata["check"] for item in fields(Envelope) if item.name == name)
    return check.fast.pattern  # type: ignore[no-any-return]


_HEAD = re.compile(b'\\{"author":(%s),"body":' % _envelope_pattern("author"))
_TAIL = re.compile(b',"kind":"manifest","sig":(%s),"v":([0-9]+)\\}\n\\Z' % _envelope_pattern("sig"))
_TAIL_BYTES = 160  # longer than any tail _TAIL matches


class _Defer(Exception):
    """The blob is not read here: `parse_blob` decides it."""


class HexColumn(Sequence[str]):
    """A list of hex ids checked on its bytes (`"id","id",…` without the brackets): its length is
    known, its items are decoded when first asked for (a team's figures never ask)."""

    __slots__ = ("_inner", "_count", "_items")

    def __init__(self, inner: bytes, count: int) -> None:
        self._inner, self._count = inner, count
        self._items: list[str] | None = None

    def __len__(self) -> int:
        return self._count

    def decoded(self) -> list[str]:
        if self._items is None:
            self._items = self._inner[1:-1].decode().split('","') if self._count else []
        return self._items

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        return self.decoded()[index]

    def __iter__(self) -> Iterator[str]:
        return iter(self.decoded())

    def __eq__(self, other: object) -> bool:  # as the list it stands for (a verdict compares so)
        if isinstance(other, (HexColumn, list)):
            return self.decoded() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # as a list's


class Index:
    """What `parse_blob` gives of a format 2 manifest, as the team view needs it: the envelope's
    fields, the body's canonical bytes (`records.cut_body`) and its JSON value (`values`, with its
    id lists as `HexColumn`s; `raw()`: as plain lists)."""

    __slots__ = ("author", "kind", "v", "sig", "body", "values")

    def __init__(self, author: str, version: int, sig: str, body: bytes, values: dict[str, Any]) -> None:
        self.author, self.kind, self.v, self.sig, self.body, self.values = author, _KIND, version, sig, body, values

    def raw(self) -> dict[str, Any]:
        """The body's JSON value, its id lists decoded (`Envelope.body`)."""
        return {key: _plain(value) for key, value in self.values.items()}


def _plain(value: Any) -> Any:
    if isinstance(value, HexColumn):
        return value.decoded()
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


def read_index(data: bytes) -> Index | None:
    """`parse_blob`'s answer for a format 2 manifest without decoding its ids, or None: ask `parse_blob`."""
    tail = _TAIL.search(data, max(0, len(data) - _TAIL_BYTES))
    head = _HEAD.match(data)
    if tail is None or head is None or head.end() > tail.start():
        return None
    version = int(tail.group(2))
    if version not in FORMATS or version < 2 or tail.group(2) != b"%d" % version:
        return None  # format 1 is the quick reader's (vacant/share/quickread.py); `02` is no number
    body = data[head.end():tail.start()]
    try:
        values, end = _object(BODIES[_KIND], version, body, body.decode("ascii"), 0)
    except (_Defer, ValueError, RecursionError):  # ValueError: json refused it, or a byte is not ASCII
        return None
    if end != len(body):
        return None
    return Index(head.group(1)[1:-1].decode(), version, tail.group(1)[1:-1].decode(), body, values)


_KEYS: dict[tuple[type, int], list[tuple[bytes, Check]]] = {}


def _keys(cls: type, version: int) -> list[tuple[bytes, Check]]:
    """A record's keys as they open each value in canonical JSON (`{"after":`, then `,"cells":`,
    …: sorted) and their checks, as in format `version`."""
    found = _KEYS.get((cls, version))
    if found is None:
        items = sorted((item.name, item.metadata["check"]) for item in fields(cls)
                       if int(item.metadata.get("since", 1)) <= version)
        found = _KEYS[(cls, version)] = [(b'%s"%s":' % (b"," if n else b"{", name.encode()), check)
                                         for n, (name, check) in enumerate(items)]
    return found


def _object(cls: type, version: int, body: bytes, text: str, pos: int) -> tuple[dict[str, Any], int]:
    """The object of `cls` at `pos`, its keys in canonical order, and where it ends (`text`: `body`
    decoded, the same positions)."""
    values: dict[str, Any] = {}
    for key, check in _keys(cls, version):
        if not body.startswith(key, pos):
            raise _Defer(key)
        values[key[2:-2].decode()], pos = _value(check, body, text, pos + len(key))
    if body[pos:pos + 1] != b"}":
        raise _Defer(cls.__name__)
    return values, pos + 1


def _value(check: Check, body: bytes, text: str, pos: int) -> tuple[Any, int]:
    """One value of `check` at `pos`, and where it ends."""
    fast = check.fast
    if fast is not None and fast.kind == "optional" and fast.inner is not None:
        if body.startswith(b"null", pos):
            return None, pos + 4
        return _value(fast.inner, body, text, pos)
    if fast is not None and fast.kind == "nested" and fast.cls is not None:
        return _object(fast.cls, FORMAT, body, text, pos)  # `_nested` parses in the newest format
    if fast is not None and fast.kind == "list" and fast.inner is not None and fast.inner.hex_lengths:
        return _hex_column(fast.inner.hex_lengths, fast.limit, body, pos)
    if fast is not None and fast.kind == "list":
        value, end = _repeated(check, body, pos)
        if end != pos:
            return value, end
    value, end = _SCAN(text, pos)
    try:
        check.parse(value, "")
    except RecordError:
        raise _Defer(check.describe) from None
    return value, end


def _hex_column(lengths: tuple[int, ...], limit: int, body: bytes, pos: int) -> tuple[HexColumn, int]:
    """A list of hex ids of one of `lengths` at `pos`, checked by position: for ids `width` long,
    item n's quotes sit at n*(width+3) and n*(width+3)+width+1, a comma after each but the last,
    and everything else is a lower-case hex digit (counted: exactly 3n-1 other bytes)."""
    end = body.find(b"]", pos)
    if body[pos:pos + 1] != b"[" or end < 0:
        raise _Defer("not a list")
    inner = body[pos + 1:end]
    if not inner:
        return HexColumn(inner, 0), end + 1
    for width in lengths:
        stride = width + 3
        count, rest = divmod(len(inner) + 1, stride)
        if rest or count > limit:
            continue
        if (inner[::stride] == inner[width + 1::stride] == b'"' * count and inner[width + 2::stride] == b"," * (count - 1)
                and len(inner.translate(None, _HEX_DIGITS)) == 3 * count - 1):
            return HexColumn(inner, count), end + 1
    raise _Defer("not ids of one width")


def _repeated(check: Check, body: bytes, pos: int) -> tuple[list[Any] | None, int]:
    """The list of numbers at `pos` when few of its texts differ (a team's scores, weights and cell
    indexes repeat): json's value of each distinct text once, each of those checked once by the
    item's own check, and the list's length by the list's limit (what `_list`'s parse checks, item
    by item); and where it ends. Else (None, pos): json decodes it whole and the list's check runs.
    The list is cut apart on its commas, which no number holds; json refuses any cut that is no
    number (`,,`, `1.2.3`, `01`) as it refuses the list."""
    fast = check.fast
    end = body.find(b"]", pos)
    if fast is None or fast.inner is None or body[pos:pos + 1] != b"[" or end <= pos + 1:
        return None, pos
    inner = body[pos + 1:end]
    if inner.translate(None, _NUMBER_CHARS + b","):
        return None, pos
    sample = inner[:_SAMPLE].split(b",")
    if len(set(sample)) * 4 > len(sample):
        return None, pos  # mostly distinct (a review's `seq`): json is quicker than a call per text
    parts = inner.split(b",")
    texts = set(parts)
    if len(texts) * 4 > len(parts) or len(parts) > fast.limit:
        return None, pos
    known = {text: json.loads(text) for text in texts}
    for value in known.values():
        try:
            fast.inner.parse(value, "")
        except RecordError:
            raise _Defer(check.describe) from None
    return list(map(known.__getitem__, parts)), end + 1
