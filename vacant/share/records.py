"""The shared records: a compact run record and one review record per review, as typed records
with one canonical JSON form each; docs/SHARE.md is generated from these definitions
(vacant/share/sharedoc.py).

Contract:
- A record holds ids, names, paths, levels, counts and hashes only: never a transcript, a tool
  input or output, file contents, a check's message or an offending line. Those stay in the step
  log and the reports, on the machine that recorded them.
- `parse_*` accept exactly the documented shape (unknown keys, wrong types, ids that look like
  paths are errors), so a record from the remote can never name a place to write.
- Canonical JSON (sorted keys, no spaces, ASCII) is what is hashed and signed: a record's bytes
  decide its name, so the same record always has the same name, wherever and however often made.
- Formats: a run record is written in format 2 (with line data: keyed line hashes and edit
  scripts, never the lines); reviews and manifests keep format 1, which readers of format 1 still
  count. Format 1 run records (no line data) are read as before and blamed file-level.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from typing import Any


FORMAT = 2  # the newest; what each kind is written in: WRITTEN_FORMAT
FORMATS = (1, 2)
KINDS = ("run", "review", "manifest")
KIND_DIRS = {"run": "runs", "review": "reviews", "manifest": "manifests"}  # where each kind sits in an author's tree
ENTRY = re.compile(r"^(runs|reviews|manifests)/([0-9a-f]{2})/([0-9a-f]{62})$")
WRITTEN_FORMAT = {"run": 2, "review": 1, "manifest": 2}  # reviews did not change in 2; a manifest has its index

# line data (format 2): bounded so a record stays small whatever the run touched
LINE_HASH_HEX = 16
MAX_VERSION_LINES = 20_000  # a path with a longer version is left file-level (`lines-cap`)
MAX_RECORD_HASHES = 50_000  # line hashes in one record; paths past it are left file-level (`record-cap`)
OMITTED = ("lines-cap", "record-cap", "binary")
MAX_INDEXED_PATHS = 2000  # a run that changed more is not path-indexed (read whatever path is asked)
MAX_INDEX = 1_000_000  # records one manifest indexes


class RecordError(ValueError):
    """A record that is not exactly the documented shape (the message says which key and why)."""


# -- field checkers: each parses one JSON value and describes itself for the doc ---------------

ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$"  # no '/', no leading '.', so never path-like
_ID = re.compile(ID_PATTERN)
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_HEX_OID = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True)
class Fast:
    """How a checked value looks in canonical JSON when it needs no escape: the subset the quick
    reader (vacant/share/quickread.py) matches with one regex per record shape. `kind`: `leaf` (a
    regex and how to decode its match), `checked` (a leaf whose decoding also checks it, so never
    inside a list), `optional`, `list` (of `inner`, at most `limit`) or `nested` (`cls`)."""
    kind: str
    pattern: bytes = b""
    decode: Callable[[bytes], Any] | None = None
    inner: Check | None = None
    limit: int = 0
    cls: type | None = None


@dataclass(frozen=True)
class Check:
    describe: str
    parse: Callable[[Any, str], Any]
    fast: Fast | None = None  # None: the quick reader leaves records holding this to `parse_typed`
    # a whole list of such values checked at once: the list as `parse` of each item would give it,
    # or None to check it item by item (which also names the bad one); a manifest's index holds
    # tens of thousands of values, and a Python call per value cost more than everything else
    bulk: Callable[[list[Any]], list[Any] | None] | None = None
    # a hex id of one of these lengths (lower case), nothing else: how the index reader
    # (vacant/share/quickindex.py) checks a list of them on its bytes without decoding it
    hex_lengths: tuple[int, ...] = ()


SAFE_CHAR = rb"[ !#-\[\]-~]"  # printable ASCII but `"` and `\`: canonical JSON writes these as they are


def _ascii(quoted: bytes) -> str:
    return quoted[1:-1].decode("ascii")


def _leaf(pattern: bytes) -> Fast:
    return Fast("leaf", pattern, _ascii)


def _text(limit: int) -> Check:
    def parse(value: Any, where: str) -> str:
        if not isinstance(value, str) or not value or len(value) > limit or _CONTROL.search(value):
            raise RecordError(f"{where}: expected a one-line string of 1..{limit} characters")
        return value
    return Check(f"string (1..{limit}, one line)", parse, _leaf(b'"%s{1,%d}"' % (SAFE_CHAR, limit)))


def _hex_bulk(lengths: tuple[int, ...]) -> Callable[[list[Any]], list[Any] | None]:
    """A bulk check of hex ids of these (even) lengths: each length, then the digits of them all at
    once: `bytes.fromhex` refuses any character but a hex digit or whitespace, two characters a
    byte leave no room for whitespace, and no digit may be upper case (a regex, or deleting the
    digits, over megabytes of ids cost more than the rest of reading an index)."""
    allowed = set(lengths)

    def bulk(values: list[Any]) -> list[Any] | None:
        try:
            text = "".join(values)
            digits = bytes.fromhex(text)
        except (TypeError, ValueError):  # not all strings, or a character that is not hex
            return None
        fits = set(map(len, values)) <= allowed and 2 * len(digits) == len(text)
        return values if fits and not any(upper in text for upper in "ABCDEF") else None
    return bulk


def _pattern(regex: re.Pattern[str], describe: str, hex_lengths: tuple[int, ...] = ()) -> Check:
    def parse(value: Any, where: str) -> str:
        if not isinstance(value, str) or not regex.fullmatch(value):  # `$` alone lets a final newline by
            raise RecordError(f"{where}: expected {describe}, got {str(value)[:80]!r}")
        return value
    anchored = regex.pattern.startswith("^") and regex.pattern.endswith("$")
    inner = regex.pattern[1:-1]  # the lookahead keeps the match inside one escape-free string
    joined = re.compile(f"(?:{inner})(?:\n(?:{inner}))*")

    def bulk(values: list[Any]) -> list[Any] | None:  # one match over the values joined by newlines
        try:
            text = "\n".join(values)
        except TypeError:  # not all strings
            return None
        one_each = text.count("\n") == len(values) - 1  # no value holds a newline of its own
        return values if not values or (one_each and joined.fullmatch(text)) else None
    fast = _leaf(b'"(?=%s*")(?:%s)"' % (SAFE_CHAR, inner.encode())) if anchored else None
    return Check(describe, parse, fast, _hex_bulk(hex_lengths) if hex_lengths else bulk if anchored else None,
                 hex_lengths)


def _relpath(value: Any, where: str) -> str:
    parts = value.split("/") if isinstance(value, str) else []
    if (not isinstance(value, str) or not value or len(value) > 4096 or "\x00" in value or "\\" in value
            or value.startswith("/") or any(p in ("", ".", "..") for p in parts)):
        raise RecordError(f"{where}: expected a relative path without '..', got {str(value)[:80]!r}")
    return value


def _integer(low: int) -> Check:
    def parse(value: Any, where: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < low or value > 2**53:
            raise RecordError(f"{where}: expected an integer >= {low}")
        return value
    def bulk(values: list[Any]) -> list[Any] | None:  # each item's type, then the range at once
        if not values:
            return values
        return values if set(map(type, values)) == {int} and min(values) >= low and max(values) <= 2**53 else None
    digits = {0: rb"0|[1-9][0-9]{0,14}", 1: rb"[1-9][0-9]{0,14}"}.get(low)  # below 10**15 < 2**53
    return Check(f"integer >= {low}", parse, Fast("leaf", digits, int) if digits else None, bulk)


def _number(low: float, high: float) -> Check:
    def parse(value: Any, where: str) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                or not low <= value <= high:
            raise RecordError(f"{where}: expected a number in [{low}, {high}]")
        return float(value)

    known: dict[bytes, float | int] = {}  # the texts seen valid: a team's scores and weights repeat

    def decode(text: bytes) -> float | int:  # json's value; a float is canonical in its shortest repr
        if text in known:
            return known[text]
        value: float | int = float(text) if b"." in text else int(text)
        if (isinstance(value, float) and repr(value).encode() != text) or not low <= value <= high:
            raise ValueError(text)
        if len(known) < 4096:
            known[text] = value
        return value

    def bulk(values: list[Any]) -> list[Any] | None:  # each distinct value's range once: scores and weights repeat
        kinds = set(map(type, values))  # every item's type (a set of the values would fold False into 0)
        if not kinds <= {int, float} or not all(math.isfinite(v) and low <= v <= high for v in set(values)):
            return None
        return values if kinds <= {float} else [float(v) for v in values]
    return Check(f"number in [{low:g}, {high:g}]", parse,
                 Fast("checked", rb"(?:0|[1-9][0-9]{0,16})(?:\.[0-9]{1,24})?", decode), bulk)


def _optional(inner: Check) -> Check:
    def bulk(values: list[Any]) -> list[Any] | None:  # for an inner check that keeps its values as they are
        present = [v for v in values if v is not None]
        return values if inner.bulk is not None and inner.bulk(present) is present else None
    return Check(f"{inner.describe} or null", lambda v, w: None if v is None else inner.parse(v, w),
                 Fast("optional", inner=inner), bulk)


def _boolean(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise RecordError(f"{where}: expected true or false")
    return value


BOOLEAN = Check("true or false", _boolean, Fast("leaf", b"true|false", lambda text: text == b"true"),
                lambda values: values if all(type(v) is bool for v in values) else None)


def _list(inner: Check, limit: int) -> Check:
    check, bulk = inner.parse, inner.bulk

    def parse(value: Any, where: str) -> list[Any]:
        if not isinstance(value, list) or len(value) > limit:
            raise RecordError(f"{where}: expected a list of at most {limit}")
        checked = bulk(value) if bulk is not None else None
        if checked is not None:
            return checked
        try:
            return [check(item, where) for item in value]
        except RecordError:  # again, naming the item
            return [check(item, f"{where}[{n}]") for n, item in enumerate(value)]
    return Check(f"list (<= {limit}) of {inner.describe}", parse, Fast("list", inner=inner, limit=limit))


def _nested(cls: type) -> Check:
    return Check(f"`{cls.__name__}`", lambda v, w: parse_typed(cls, v, w), Fast("nested", cls=cls))


def _one_of(*allowed: str) -> Check:
    def parse(value: Any, where: str) -> str:
        if value not in allowed:
            raise RecordError(f"{where}: expected one of {', '.join(allowed)}")
        return value
    fast = _leaf(b'"(?:%s)"' % b"|".join(re.escape(a).encode() for a in allowed))
    plain = all(re.fullmatch(SAFE_CHAR + b"+", a.encode()) for a in allowed)
    return Check("one of " + ", ".join(f"`{a}`" for a in allowed), parse, fast if plain else None)


def _one_of_int(*allowed: int) -> Check:
    def parse(value: Any, where: str) -> int:
        if isinstance(value, bool) or value not in allowed:
            raise RecordError(f"{where}: format {value} is not one of {', '.join(map(str, allowed))} "
                              "(a newer vacant wrote it?)")
        return value
    return Check("one of " + ", ".join(map(str, allowed)), parse,
                 Fast("leaf", b"|".join(str(a).encode() for a in allowed), int))


IDENT = _pattern(_ID, f"an id matching `{ID_PATTERN}`")
SHA256 = _pattern(_HEX64, "64 hex digits (sha256)", (64,))
GIT_OID = _pattern(_HEX_OID, "a git commit id (40 or 64 hex digits)", (40, 64))
OBJECT_ID = _pattern(_HEX_OID, "a git object id (40 or 64 hex digits)", (40, 64))
_SEGMENT = rb'(?!\.\.?[/"])[ !#-.0-\[\]-~]+'  # never empty, `.` or `..`; no `/`, `"` or `\`
PATH = Check("relative path (no `..`, no leading `/`)", _relpath,
             _leaf(b'"(?=[^"]{1,4096}")%s(?:/%s)*"' % (_SEGMENT, _SEGMENT)))


LINE_HASH = _pattern(re.compile(rf"^[0-9a-f]{{{LINE_HASH_HEX}}}$"), f"{LINE_HASH_HEX} hex digits (a keyed line hash)",
                     (LINE_HASH_HEX,))


def spec(check: Check, doc: str, since: int = 1) -> Any:
    """A documented key; `since`: the format that added it (absent from older records)."""
    if since > 1:
        return field(default=None, metadata={"check": check, "doc": doc, "since": since})
    return field(metadata={"check": check, "doc": doc})


def _since(item: Any) -> int:
    return int(item.metadata.get("since", 1))


# -- the records ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Cell:
    """An agent cell, as in the reputation table: people are never part of it."""
    platform: str = spec(_text(200), "the agent platform (claude-code, codex, opencode, …)")
    agent_definition: str = spec(_text(200), "main, or the sub-agent's definition")
    model: str = spec(_text(200), "the model, `unknown` when the platform never said")
    task_family: str = spec(_text(200), "the contract's task family")


@dataclass(frozen=True)
class StepEntry:
    n: int = spec(_integer(0), "the step number in the run")
    tool: str = spec(_text(200), "the tool (`oob` for an out-of-band change set)")
    cell: int | None = spec(_optional(_integer(0)), "index into the run's `cells`; null: no actor (out-of-band)")
    outcome: str | None = spec(_optional(_text(40)), "ok, failed, not-run, unknown; null while open")
    changed: list[str] = spec(_list(PATH, 100_000), "paths the step added, changed or removed (sorted)")


@dataclass(frozen=True)
class FindingEntry:
    id: str = spec(IDENT, "the finding's stable id")
    source: str = spec(_one_of("check", "flag"), "where the finding came from")
    name: str = spec(_text(200), "the check's name, or the flag's id")
    level: str = spec(_text(40), "the grade (docs/LEVELS.md)")
    step: int | None = spec(_optional(_integer(0)), "the step blamed, after lineage hops")
    flip_step: int | None = spec(_optional(_integer(0)), "the step where the finding appeared on replay")
    path: str | None = spec(_optional(PATH), "where the finding is")
    line: int | None = spec(_optional(_integer(0)), "its line")
    evidence_sha256: str = spec(SHA256, "sha256 of the canonical JSON of the report's `evidence` (the values stay local)")
    origin: str | None = spec(_optional(_text(40)), "the kind of the lineage source (file, url, prompt, …), never its text")


@dataclass(frozen=True)
class ReadCoverage:
    state: str = spec(_one_of("complete", "partial", "none"), "as in the Stop report")
    why: str = spec(_text(1000), "the report's reason")


@dataclass(frozen=True)
class Hunk:
    """Lines `start` to `end` (0-based, `end` excluded) of the path's previous version, replaced."""
    start: int = spec(_integer(0), "first line replaced")
    end: int = spec(_integer(0), "end of the lines replaced (`start` when only inserting)")
    lines: list[str] = spec(_list(LINE_HASH, MAX_VERSION_LINES), "the hashes of the lines put in their place")


@dataclass(frozen=True)
class LineEdit:
    """One recorded change to the path, in log order: who made it and what it did to the lines."""
    step: int | None = spec(_optional(_integer(0)),
                            "the step (a `StepEntry.n`) that made it; null: changed while several steps were open")
    open_steps: list[int] = spec(_list(_integer(0), 10_000), "for a null `step`: the steps open then (one of them)")
    hunks: list[Hunk] | None = spec(_optional(_list(_nested(Hunk), MAX_VERSION_LINES + 1)),
                                    "the edit script from the previous version (sorted, not overlapping); "
                                    "null: the new version's content was not kept (over the object-store cap)")


@dataclass(frozen=True)
class PathLines:
    """One path the run changed, line by line (hashes only): its version at the run's baseline and
    each recorded change to it. Rebuilding every version and carrying authorship through them is
    `vacant blame --team`."""
    path: str = spec(PATH, "the path")
    base: list[str] | None = spec(_optional(_list(LINE_HASH, MAX_VERSION_LINES)),
                                  "the line hashes at the run's baseline (empty: no such file); "
                                  "null: given by `base_blob`, not kept, or `omitted`")
    base_blob: str | None = spec(_optional(GIT_OID),
                                 "when the baseline is exactly the path as committed in the run's `commit`: that "
                                 "git blob, whose lines a clone hashes itself (`base` is then null; most runs start "
                                 "from a clean checkout, and this keeps their records small)")
    edits: list[LineEdit] = spec(_list(_nested(LineEdit), 100_000), "every recorded change to the path, in order")
    omitted: str | None = spec(_optional(_one_of(*OMITTED)),
                               "why the path has no line data and is blamed file-level: a version over "
                               f"{MAX_VERSION_LINES:,} lines, the record over {MAX_RECORD_HASHES:,} hashes, "
                               "or a version holding a NUL byte; null: it has")


@dataclass(frozen=True)
class RunRecord:
    """One run, as far as its step log went when it was recorded (`through_seq`)."""
    run: str = spec(IDENT, "the run id")
    platform: str = spec(_text(200), "the platform that recorded it")
    commit: str | None = spec(_optional(GIT_OID),
                              "HEAD when the run started (null: not a git checkout, or recorded before vacant noted it)")
    started: float = spec(_number(0, 1e11), "unix time of the run's first record")
    through_seq: int = spec(_integer(0), "the last step-log record this run record covers; a later one supersedes it")
    cells: list[Cell] = spec(_list(_nested(Cell), 1000), "the cells that acted, first act first")
    steps: list[StepEntry] = spec(_list(_nested(StepEntry), 100_000), "every step, in number order")
    reads: int = spec(_integer(0), "how many reads the hooks recorded")
    read_coverage: ReadCoverage = spec(_nested(ReadCoverage), "the run's read coverage")
    findings: list[FindingEntry] = spec(_list(_nested(FindingEntry), 10_000), "the last Stop report's findings")
    line_key: str | None = spec(_optional(GIT_OID), "the root commit whose id keys the line hashes (see above); "
                                "null: no commit yet, so no line data", since=2)
    lines: list[PathLines] | None = spec(_list(_nested(PathLines), 100_000),
                                  "every path the run changed, line by line, sorted by path", since=2)


@dataclass(frozen=True)
class ReviewRecord:
    """One review that moved reputation: a `review` event of a run's step log."""
    run: str = spec(IDENT, "the run whose Stop recorded it")
    seq: int = spec(_integer(1), "the `review` event's seq in that run's step log (two green Stops are two reviews)")
    cell: Cell = spec(_nested(Cell), "the cell reviewed")
    score: float = spec(_number(0, 1), "0: it introduced a finding, 1: a green Stop")
    weight: float = spec(_number(0, 1000), "the review's weight")
    finding: str | None = spec(_optional(IDENT), "the finding that cost the score, null for a green Stop")


@dataclass(frozen=True)
class RunIndex:
    """The run records a manifest indexes, a list per key: the n-th item of each list is the n-th
    record's. What a reader keeps of a run record without reading it."""
    name: list[str] = spec(_list(SHA256, MAX_INDEX), "the record's name (the sha256 of its bytes)")
    oid: list[str] = spec(_list(OBJECT_ID, MAX_INDEX), "its git blob id")
    run: list[str] = spec(_list(IDENT, MAX_INDEX), "its `run`")
    through_seq: list[int] = spec(_list(_integer(0), MAX_INDEX), "its `through_seq`")
    lines: list[bool] = spec(_list(BOOLEAN, MAX_INDEX), "whether its `lines` holds any path")
    path_counts: list[int | None] = spec(
        _list(_optional(_integer(0)), MAX_INDEX),
        "how many paths it names (its steps' `changed` and its `lines`), the next that many of `paths`; "
        f"null: more than {MAX_INDEXED_PATHS:,}, none listed")
    paths: list[int] = spec(_list(_integer(0), 100 * MAX_INDEX),
                            "every record's paths in turn, each as an index into the manifest's `paths`, ascending")


@dataclass(frozen=True)
class ReviewIndex:
    """The review records a manifest indexes, a list per key of `ReviewRecord` (the n-th item of each
    list is the n-th record's): a reader counts them without reading them."""
    name: list[str] = spec(_list(SHA256, MAX_INDEX), "the record's name (the sha256 of its bytes)")
    oid: list[str] = spec(_list(OBJECT_ID, MAX_INDEX), "its git blob id")
    run: list[str] = spec(_list(IDENT, MAX_INDEX), "its `run`")
    seq: list[int] = spec(_list(_integer(1), MAX_INDEX), "its `seq`")
    cell: list[int] = spec(_list(_integer(0), MAX_INDEX), "its `cell`, as an index into the manifest's `cells`")
    score: list[float] = spec(_list(_number(0, 1), MAX_INDEX), "its `score`")
    weight: list[float] = spec(_list(_number(0, 1000), MAX_INDEX), "its `weight`")
    finding: list[str | None] = spec(_list(_optional(IDENT), MAX_INDEX), "its `finding`")


@dataclass(frozen=True)
class ManifestRecord:
    """One publication's word for its records, under one signature: a reader verifies one signature
    per publication, not one per record. Format 1 names the records (each then needs only its hash
    checked). Format 2 also indexes them (`runs`, `reviews`: what a reader keeps of each, with its
    git blob id) and may say what the author's whole ref holds (`runs_tree`, `reviews_tree`): when
    a ref's `runs/` and `reviews/` are exactly those trees, the manifests reachable from this one
    through `after` index every record there, so a reader counts the indexes and reads no record."""
    records: list[str] = spec(_list(SHA256, MAX_INDEX), "the sha256 names of the records it vouches for "
                              "beyond its index, sorted (format 1: all it added; format 2 as vacant writes it: none)")
    after: list[str] | None = spec(_optional(_list(SHA256, 10_000)), "the names of the author's format 2 manifests "
                                   "this publication came after (the heads of its chain, [] for the first)", since=2)
    runs_tree: str | None = spec(_optional(OBJECT_ID), "with `whole`: the git tree id of the ref's `runs/` with this "
                                 "publication in (null: the ref has none)", since=2)
    reviews_tree: str | None = spec(_optional(OBJECT_ID), "the same for `reviews/`", since=2)
    whole: bool | None = spec(_optional(BOOLEAN), "true: `runs_tree` and `reviews_tree` (null there: no such "
                              "directory) are the whole ref's, indexed through `after`", since=2)
    cells: list[Cell] | None = spec(_optional(_list(_nested(Cell), MAX_INDEX)), "the cells `reviews.cell` indexes",
                                    since=2)
    paths: list[str] | None = spec(_optional(_list(PATH, MAX_INDEX)), "the paths `runs.paths` indexes, sorted",
                                   since=2)
    runs: RunIndex | None = spec(_optional(_nested(RunIndex)), "the run records it indexes", since=2)
    reviews: ReviewIndex | None = spec(_optional(_nested(ReviewIndex)), "the review records it indexes", since=2)


@dataclass(frozen=True)
class Envelope:
    """What a record blob holds: the body, who signed it, and the signature."""
    v: int = spec(_one_of_int(*FORMATS), "format version: 2 for a run record, 1 for the others; "
                  "a format 1 run record (no line data) is still read")
    kind: str = spec(_one_of(*KINDS), "which body this is")
    author: str = spec(_pattern(re.compile(r"^[0-9a-f]{32}$"), "32 hex digits"),
                       "the signer's key fingerprint (sha256 of the raw public key, first 32 hex digits)")
    body: dict = spec(Check("`RunRecord`, `ReviewRecord` or `ManifestRecord`", lambda v, w: v), "the record")
    sig: str = spec(_pattern(re.compile(r"^[A-Za-z0-9_-]{86}$"), "86 base64url characters"),
                    "Ed25519 signature (base64url, no padding) over the signed bytes described above")


BODIES: dict[str, type] = {"run": RunRecord, "review": ReviewRecord, "manifest": ManifestRecord}


def parse_typed(cls: type, value: Any, where: str = "record", version: int = FORMAT) -> Any:
    """Build `cls` from JSON in format `version`, checking every key; nothing undocumented gets
    through (a key a later format added is unknown to an earlier one)."""
    if not isinstance(value, dict):
        raise RecordError(f"{where}: expected an object")
    layout = _layout(cls, version)
    if value.keys() != layout.names:
        extra = sorted(set(value) - layout.names)
        if extra:
            raise RecordError(f"{where}: unknown key(s) {', '.join(extra)}")
        missing = [name for name, _ in layout.checks if name not in value]
        raise RecordError(f"{where}: missing key(s) {', '.join(missing)}")
    try:
        parsed = {name: parse(value[name], where) for name, parse in layout.checks}
    except RecordError:  # the same checks again, naming the key: a bad record is rare, a good one common
        parsed = {name: parse(value[name], f"{where}.{name}") for name, parse in layout.checks}
    record = object.__new__(cls)  # a frozen dataclass, filled without its __init__'s per-key setattr
    record.__dict__.update(layout.absent, **parsed)
    return record


@dataclass(frozen=True)
class _Layout:
    names: frozenset[str]
    checks: tuple[tuple[str, Callable[[Any, str], Any]], ...]  # (key, parse), in field order
    absent: dict[str, Any]  # keys a later format added: their defaults


_LAYOUTS: dict[tuple[type, int], _Layout] = {}


def _layout(cls: type, version: int) -> _Layout:
    found = _LAYOUTS.get((cls, version))
    if found is None:
        known = [f for f in fields(cls) if _since(f) <= version]
        absent = {f.name: f.default for f in fields(cls) if _since(f) > version}
        found = _LAYOUTS[(cls, version)] = _Layout(frozenset(f.name for f in known),
                                                  tuple((f.name, f.metadata["check"].parse) for f in known), absent)
    return found


def to_json(record: Any, version: int = FORMAT) -> dict[str, Any]:
    """The JSON of a record in format `version` (keys a later format added are left out)."""
    if not (is_dataclass(record) and not isinstance(record, type)):
        return dict(record)
    data = asdict(record)
    for item in fields(record):
        if _since(item) > version:
            del data[item.name]
    return data


def canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode()


def signed_bytes(kind: str, author: str, body: dict[str, Any], version: int) -> bytes:
    """What the signature covers: a domain tag, then the canonical JSON of everything but `sig`."""
    return b"vacant-share-record\x00" + canonical({"v": version, "kind": kind, "author": author, "body": body})


def body_id(kind: str, body: dict[str, Any]) -> str:
    """The identity of what a record says, whoever signed it: the same review counts once."""
    return hashlib.sha256(kind.encode() + b"\x00" + canonical(body)).hexdigest()


def blob_of(envelope: Envelope) -> bytes:
    return canonical(to_json(envelope)) + b"\n"


def parse_blob(data: bytes) -> tuple[Envelope, Any]:
    """The envelope and typed body of a record blob; the bytes must be the canonical form (for a
    format 2 manifest, its envelope: see `_framed`)."""
    try:
        raw = json.loads(data)
    except ValueError as error:
        raise RecordError(f"not JSON ({error})") from None
    envelope = parse_typed(Envelope, raw, "envelope")
    body = parse_typed(BODIES[envelope.kind], envelope.body, envelope.kind, envelope.v)
    if not (_framed(envelope, data) if envelope.kind == "manifest" and envelope.v >= 2
            else canonical(raw) + b"\n" == data):  # what was signed is exactly these bytes' content
        raise RecordError("not in canonical form (edited by hand?)")
    return envelope, body


def _framed(envelope: Envelope, data: bytes) -> bool:
    """Whether `data` is the canonical envelope around its body's bytes: a format 2 manifest's body
    (an index, megabytes at a team's scale) is checked by its signature over those bytes as they
    are, not serialised again to compare (which cost more than the rest of reading it). A manifest
    is never counted: its name and signature are all that vouch for it."""
    head = f'{{"author":"{envelope.author}","body":'.encode()
    tail = f',"kind":"{envelope.kind}","sig":"{envelope.sig}","v":{envelope.v}}}\n'.encode()
    return data.startswith(head) and data.endswith(tail) and len(data) > len(head) + len(tail)


def cut_body(envelope: Envelope, data: bytes) -> bytes:
    """The canonical JSON of the body of `data`, a blob `parse_blob` accepted, cut from its bytes
    rather than serialised again: the envelope's keys sort as author, body, kind, sig, v, and none
    of their values needs escaping, so the body sits between a head and a tail of known length."""
    head = len(f'{{"author":"{envelope.author}","body":')
    tail = len(f',"kind":"{envelope.kind}","sig":"{envelope.sig}","v":{envelope.v}}}\n')
    return data[head:len(data) - tail]


def signed_bytes_of(envelope: Envelope, body: bytes) -> bytes:
    """`signed_bytes` of a parsed blob, from its body's canonical bytes (`cut_body`)."""
    return signed_bytes_cut(envelope.author, envelope.kind, envelope.v, body)


def signed_bytes_cut(author: str, kind: str, version: int, body: bytes) -> bytes:
    """`signed_bytes` from the envelope's fields and the body's canonical bytes."""
    return (f'vacant-share-record\x00{{"author":"{author}","body":'.encode() + body
            + f',"kind":"{kind}","v":{version}}}'.encode())


def body_id_of(kind: str, body: bytes) -> str:
    """`body_id` from the body's canonical bytes (`cut_body`)."""
    return hashlib.sha256(kind.encode() + b"\x00" + body).hexdigest()
