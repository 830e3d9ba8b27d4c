"""The shared records: a compact run record and one review record per review, as typed records
with one canonical JSON form each. The single source of docs/SHARE.md
(`python -m vacant.gendocs --write`; a test fails when the doc drifts).

Contract:
- A record holds ids, names, paths, levels, counts and hashes only: never a transcript, a tool
  input or output, file contents, a check's message or an offending line. Those stay in the step
  log and the reports, on the machine that recorded them.
- `parse_*` accept exactly the documented shape (unknown keys, wrong types, ids that look like
  paths are errors), so a record from the remote can never name a place to write.
- Canonical JSON (sorted keys, no spaces, ASCII) is what is hashed and signed: a record's bytes
  decide its name, so the same record always has the same name, wherever and however often made.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable
from dataclasses import MISSING, asdict, dataclass, field, fields, is_dataclass
from typing import Any

from vacant.core.docgen import GeneratedDoc

FORMAT = 1
KINDS = ("run", "review", "manifest")


class RecordError(ValueError):
    """A record that is not exactly the documented shape (the message says which key and why)."""


# -- field checkers: each parses one JSON value and describes itself for the doc ---------------

ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$"  # no '/', no leading '.', so never path-like
_ID = re.compile(ID_PATTERN)
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_HEX_OID = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True)
class Check:
    describe: str
    parse: Callable[[Any, str], Any]


def _text(limit: int) -> Check:
    def parse(value: Any, where: str) -> str:
        if not isinstance(value, str) or not value or len(value) > limit or _CONTROL.search(value):
            raise RecordError(f"{where}: expected a one-line string of 1..{limit} characters")
        return value
    return Check(f"string (1..{limit}, one line)", parse)


def _pattern(regex: re.Pattern[str], describe: str) -> Check:
    def parse(value: Any, where: str) -> str:
        if not isinstance(value, str) or not regex.match(value):
            raise RecordError(f"{where}: expected {describe}, got {str(value)[:80]!r}")
        return value
    return Check(describe, parse)


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
    return Check(f"integer >= {low}", parse)


def _number(low: float, high: float) -> Check:
    def parse(value: Any, where: str) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                or not low <= value <= high:
            raise RecordError(f"{where}: expected a number in [{low}, {high}]")
        return float(value)
    return Check(f"number in [{low:g}, {high:g}]", parse)


def _optional(inner: Check) -> Check:
    return Check(f"{inner.describe} or null", lambda v, w: None if v is None else inner.parse(v, w))


def _list(inner: Check, limit: int) -> Check:
    def parse(value: Any, where: str) -> list[Any]:
        if not isinstance(value, list) or len(value) > limit:
            raise RecordError(f"{where}: expected a list of at most {limit}")
        return [inner.parse(item, f"{where}[{n}]") for n, item in enumerate(value)]
    return Check(f"list (<= {limit}) of {inner.describe}", parse)


def _nested(cls: type) -> Check:
    return Check(f"`{cls.__name__}`", lambda v, w: parse_typed(cls, v, w))


def _one_of(*allowed: str) -> Check:
    def parse(value: Any, where: str) -> str:
        if value not in allowed:
            raise RecordError(f"{where}: expected one of {', '.join(allowed)}")
        return value
    return Check("one of " + ", ".join(f"`{a}`" for a in allowed), parse)


IDENT = _pattern(_ID, f"an id matching `{ID_PATTERN}`")
SHA256 = _pattern(_HEX64, "64 hex digits (sha256)")
GIT_OID = _pattern(_HEX_OID, "a git commit id (40 or 64 hex digits)")
PATH = Check("relative path (no `..`, no leading `/`)", _relpath)


def spec(check: Check, doc: str) -> Any:
    return field(metadata={"check": check, "doc": doc})


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
class ManifestRecord:
    """The names of the records one publication added, vouched for by one signature: a reader
    verifies one signature per publication, not one per record (a record it lists needs only its
    hash checked; any other record is verified on its own)."""
    records: list[str] = spec(_list(SHA256, 1_000_000), "the sha256 names of the records added, sorted")


@dataclass(frozen=True)
class Envelope:
    """What a record blob holds: the body, who signed it, and the signature."""
    v: int = spec(_integer(1), f"format version ({FORMAT})")
    kind: str = spec(_one_of(*KINDS), "which body this is")
    author: str = spec(_pattern(re.compile(r"^[0-9a-f]{32}$"), "32 hex digits"),
                       "the signer's key fingerprint (sha256 of the raw public key, first 32 hex digits)")
    body: dict = spec(Check("`RunRecord`, `ReviewRecord` or `ManifestRecord`", lambda v, w: v), "the record")
    sig: str = spec(_pattern(re.compile(r"^[A-Za-z0-9_-]{86}$"), "86 base64url characters"),
                    "Ed25519 signature (base64url, no padding) over the signed bytes described above")


BODIES: dict[str, type] = {"run": RunRecord, "review": ReviewRecord, "manifest": ManifestRecord}


def parse_typed(cls: type, value: Any, where: str = "record") -> Any:
    """Build `cls` from JSON, checking every key; nothing undocumented gets through."""
    if not isinstance(value, dict):
        raise RecordError(f"{where}: expected an object")
    names = [f.name for f in fields(cls)]
    extra = sorted(set(value) - set(names))
    if extra:
        raise RecordError(f"{where}: unknown key(s) {', '.join(extra)}")
    missing = [n for n in names if n not in value]
    if missing:
        raise RecordError(f"{where}: missing key(s) {', '.join(missing)}")
    return cls(**{f.name: f.metadata["check"].parse(value[f.name], f"{where}.{f.name}") for f in fields(cls)})


def to_json(record: Any) -> dict[str, Any]:
    return asdict(record) if is_dataclass(record) and not isinstance(record, type) else dict(record)


def canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode()


def signed_bytes(kind: str, author: str, body: dict[str, Any]) -> bytes:
    """What the signature covers: a domain tag, then the canonical JSON of everything but `sig`."""
    return b"vacant-share-record\x00" + canonical({"v": FORMAT, "kind": kind, "author": author, "body": body})


def body_id(kind: str, body: dict[str, Any]) -> str:
    """The identity of what a record says, whoever signed it: the same review counts once."""
    return hashlib.sha256(kind.encode() + b"\x00" + canonical(body)).hexdigest()


def blob_of(envelope: Envelope) -> bytes:
    return canonical(to_json(envelope)) + b"\n"


def parse_blob(data: bytes) -> tuple[Envelope, Any]:
    """The envelope and typed body of a record blob; the bytes must be the canonical form."""
    try:
        raw = json.loads(data)
    except ValueError as error:
        raise RecordError(f"not JSON ({error})") from None
    envelope = parse_typed(Envelope, raw, "envelope")
    if envelope.v != FORMAT:
        raise RecordError(f"envelope.v: format {envelope.v} is not {FORMAT}")
    body = parse_typed(BODIES[envelope.kind], envelope.body, envelope.kind)
    if canonical(raw) + b"\n" != data:  # what was signed is exactly these bytes' content
        raise RecordError("not in canonical form (edited by hand?)")
    return envelope, body


# -- the generated doc ----------------------------------------------------------------------------

DOC_HEAD = """Each record is one git blob: the canonical JSON (sorted keys, no spaces, ASCII) of an `Envelope`
plus a newline. Its name in the tree is the sha256 of those bytes, so a record's name says what it
holds. Each author's records live on their own ref, `refs/vacant/authors/<fingerprint>`, a chain
of commits whose tree is `runs/`, `reviews/` and `manifests/`, each `<2 hex>/<62 hex>`. Merging two
versions of a ref is the union of their entries; the figures count each review once by the
sha256 of its kind and canonical body, whoever signed it and however often it was merged.

The signature is Ed25519 over `b"vacant-share-record\\x00"` followed by the canonical JSON of
`{"v", "kind", "author", "body"}`. Trusted keys are listed in `.vacant-team-keys` at the
repository root, read from the committed `HEAD` version. A record is rejected (left out of every
figure, listed by `vacant sync --status`) when its name is not the hash of its bytes, its bytes
are not canonical, its shape is not the one below, it sits under another author's ref, its author
is not a trusted key, or its signature does not verify.
"""


def render_doc() -> str:
    lines = ["# Shared records (`vacant sync`)", "", DOC.header(), "", DOC_HEAD]
    for cls in (Envelope, RunRecord, ReviewRecord, ManifestRecord, Cell, StepEntry, FindingEntry, ReadCoverage):
        lines += [f"## `{cls.__name__}`", ""]
        if cls.__doc__ and not cls.__doc__.startswith(cls.__name__ + "("):
            lines += [cls.__doc__.strip(), ""]
        lines += ["| key | type | meaning |", "|---|---|---|"]
        for f in fields(cls):
            assert f.default is MISSING
            lines.append(f"| `{f.name}` | {f.metadata['check'].describe} | {f.metadata['doc']} |")
        lines.append("")
    return "\n".join(lines)


DOC = GeneratedDoc("SHARE.md", render_doc, ("vacant/share/records.py",))
