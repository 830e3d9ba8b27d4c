"""The quick reader (vacant/share/quickread.py) against `records.parse_blob` as the oracle: on
generated records, on records with hostile values put in (paths with `..`, escapes, non-ASCII,
numbers out of bounds or not in their shortest form, wrong types, unknown and missing keys) and on
bytes edited at random, whatever the quick reader accepts, `parse_blob` accepts, with the same
fields; and what the team view keeps of a record (team.shape_of) is what the slow path keeps."""

from __future__ import annotations

import dataclasses
import json
import math
import re
import string
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vacant.share import quickread, records, team
from vacant.share.records import (
    Cell,
    FindingEntry,
    Hunk,
    LineEdit,
    ManifestRecord,
    PathLines,
    ReadCoverage,
    RecordError,
    ReviewRecord,
    RunRecord,
    StepEntry,
    canonical,
    cut_body,
    parse_blob,
    to_json,
)

AUTHOR = "0123456789abcdef0123456789abcdef"
SIG = "A" * 43 + "-_" + "b" * 41
PLAIN = "".join(c for c in string.printable if c.isprintable() and c not in '"\\')  # the quick reader's strings
NASTY = ["", ".", "..", "a/..", "../a", "a/./b", "/abs", "a//b", "a/", "a\\b", 'a"b', "a\nb", "a\x00b", "\x7f", "é",
         "\U0001f600", "\ud800", "x" * 41, "x" * 129, "x" * 201, "x" * 1001, "-x", ".x", "a b", "\u2028", "0" * 64]
NUMBERS = [0, 1, 2, -1, 0.0, 1.0, 0.5, -0.0, 1e-05, 0.1, 0.30000000000000004, 1000.0, 1000.5, 1e11, 1.5e11,
           1800000280.0, 2**53, 2**53 + 1, 10**15 - 1, 10**15, float("inf"), True, None, "1", [], {}]

plain = st.text(st.sampled_from(PLAIN), min_size=1, max_size=12)
texts = plain | st.sampled_from(NASTY) | st.text(max_size=6)
ids = st.from_regex(records.ID_PATTERN, fullmatch=True) | texts
segments = st.text(st.sampled_from(PLAIN.replace("/", "")), min_size=1, max_size=6)
paths = st.lists(segments, min_size=1, max_size=3).map("/".join) | texts
ints = st.integers(0, 10**16) | st.sampled_from(NUMBERS)
numbers = st.floats(0, 1, allow_nan=False) | st.sampled_from(NUMBERS) | st.floats()
hexes = st.text("0123456789abcdef", min_size=16, max_size=16)


def shapes(texts: Any, ids: Any, paths: Any, ints: Any, numbers: Any, oids: Any, sha: Any, kinds: Any) -> Any:
    """(kind, record) from these leaves: every shape of records.py."""
    cells = st.builds(Cell, texts, texts, texts, texts)
    hunks = st.builds(Hunk, ints, ints, st.lists(hexes, max_size=3))
    edits = st.builds(LineEdit, st.none() | ints, st.lists(ints, max_size=3), st.none() | st.lists(hunks, max_size=2))
    path_lines = st.builds(PathLines, paths, st.none() | st.lists(hexes, max_size=3), oids, st.lists(edits, max_size=2),
                           st.none() | kinds(list(records.OMITTED), ["other"]))
    steps = st.builds(StepEntry, ints, texts, st.none() | ints, st.none() | texts, st.lists(paths, max_size=3))
    findings = st.builds(FindingEntry, ids, kinds(["check", "flag"], ["x"]), texts, texts, st.none() | ints,
                         st.none() | ints, st.none() | paths, st.none() | ints, sha, st.none() | texts)
    runs = st.builds(RunRecord, ids, texts, oids, numbers, ints, st.lists(cells, max_size=2), st.lists(steps, max_size=3),
                     ints, st.builds(ReadCoverage, kinds(["complete", "partial", "none"], ["all"]), texts),
                     st.lists(findings, max_size=2), oids, st.none() | st.lists(path_lines, max_size=3))
    reviews = st.builds(ReviewRecord, ids, ints.filter(lambda n: n != 0), cells, numbers, numbers, st.none() | ids)
    manifests = st.builds(ManifestRecord, st.lists(sha, max_size=3))
    return (st.tuples(st.just("run"), runs) | st.tuples(st.just("review"), reviews)
            | st.tuples(st.just("manifest"), manifests))


bodies = shapes(texts, ids, paths, ints, numbers, st.sampled_from(["a" * 40, "b" * 64, "A" * 40, "a" * 41]) | st.none(),
                st.sampled_from(["d" * 64, "D" * 64, "d" * 63]), lambda good, bad: st.sampled_from(good + bad))
valid_bodies = shapes(plain, st.from_regex(records.ID_PATTERN, fullmatch=True),
                      st.lists(segments.filter(lambda s: s not in (".", "..")), min_size=1, max_size=3).map("/".join),
                      st.integers(0, 10**14), st.integers(0, 1) | st.floats(0, 1) | st.sampled_from([0.5, 1e-4]),
                      st.sampled_from(["a" * 40, "b" * 64]) | st.none(), st.just("d" * 64),
                      lambda good, bad: st.sampled_from(good))
hostile = st.sampled_from(NUMBERS + NASTY)


def nodes(value: Any, where: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every position in a JSON value (dict keys and list indexes)."""
    found = [where]
    if isinstance(value, dict):
        for key, item in value.items():
            found += nodes(item, (*where, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += nodes(item, (*where, index))
    return found


def replaced(value: Any, where: tuple[Any, ...], new: Any) -> Any:
    if not where:
        return new
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[where[0]] = replaced(value[where[0]], where[1:], new)
    return copy


def removed(value: Any, where: tuple[Any, ...]) -> Any:
    if len(where) == 1:
        copy = dict(value) if isinstance(value, dict) else list(value)
        del copy[where[0]]
        return copy
    return replaced(value, where[:1], removed(value[where[0]], where[1:]))


def at(value: Any, where: tuple[Any, ...]) -> Any:
    return at(value[where[0]], where[1:]) if where else value


def tweaks(value: Any) -> list[Any]:
    """Values near `value` that the shape may refuse: each check's edges."""
    if isinstance(value, str):
        return [value + "/..", "../" + value, ".", "..", value + "/.", "./" + value, "/" + value, value + "/",
                value + "//x", value * 60, value + "x" * 200, value + '"', value + "\\", value + "\x7f", value + "\x00",
                value + "é", value + "\n", "", value.upper(), value + "0", value[:-1], value.replace("/", "\\")]
    if isinstance(value, bool) or value is None:
        return [0, 1, "", [], {}, None, True]
    if isinstance(value, int):
        return [value + 2**53, -1, -value, float(value), True, str(value), 10**15, 2**53, 2**53 + 1, 0, value + 1000]
    if isinstance(value, float):
        return [value + 1000.0, -value - 1.0, int(value) if math.isfinite(value) else 0, str(value), 1e11 + 1, 1e11, value / 3, 1.5, -0.0, 2.0]
    if isinstance(value, list):
        return [[], None, {}, value * 3, value[:1] * 1001]  # 1001: over the smallest limit (cells)
    return [{}, None, [], {**value, "extra": 1}]


def values_put_in(draw: st.DrawFn, body: Any, values: Any, keys: list[str]) -> Any:
    """`body` with none, one or two values put in: wrong types, each check's edges (`tweaks`),
    one of `values`, an unknown top-level key (one of `keys`) or a missing one."""
    for _ in range(draw(st.sampled_from([0, 1, 1, 1, 2]))):
        where = draw(st.sampled_from(nodes(body)))
        how = draw(st.sampled_from(["tweak", "tweak", "tweak", "value", "extra", "drop"]))
        if how == "tweak":
            body = replaced(body, where, draw(st.sampled_from(tweaks(at(body, where)))))
        elif how == "value":
            body = replaced(body, where, draw(values))
        elif how == "extra" and isinstance(body, dict):
            body = {**body, draw(st.sampled_from(keys)): draw(values)}
        elif how == "drop" and where:
            body = removed(body, where)
    return body


@st.composite
def blobs(draw: st.DrawFn) -> bytes:
    kind, record = draw(valid_bodies | bodies)  # mostly valid, so that one hostile value is all that is wrong
    version = draw(st.sampled_from([1, 2, 2, 2, 2, 2, 3]))
    if kind == "run" and record.lines is None and version == 2 and draw(st.booleans()):
        record = dataclasses.replace(record, lines=[])
    body = values_put_in(draw, to_json(record, min(version, 2)), hostile, ["extra", "run", "lines"])
    envelope = {"author": draw(st.sampled_from([AUTHOR] * 8 + [AUTHOR.upper(), AUTHOR[:-1]])), "body": body,
                "kind": draw(st.sampled_from([kind] * 8 + ["run", "review", "other"])), "sig": SIG, "v": version}
    try:
        data = canonical(envelope) + b"\n"
    except (ValueError, TypeError):  # a value json cannot write (nan): no record
        data = json.dumps(envelope, sort_keys=True, separators=(",", ":")).encode() + b"\n"
    for _ in range(draw(st.sampled_from([0, 0, 0, 0, 1, 2]))):  # and the bytes edited: other forms of the same value, or noise
        how = draw(st.sampled_from(["number", "flip", "insert", "delete", "space", "order"]))
        position = draw(st.integers(0, max(0, len(data) - 1)))
        if how == "number":
            data = re.sub(rb":(\d+)(\.\d+)?([,}])", lambda m: b":" + draw(
                st.sampled_from([m[1] + b".0", m[1] + b"0", b"0" + m[1], m[1] + b"e0", m[1] + (m[2] or b"") + b"0",
                                 m[1] + b".5", b"-" + m[1]])) + m[3], data, count=1)
        elif how == "flip":
            data = data[:position] + bytes([draw(st.integers(0, 255))]) + data[position + 1:]
        elif how == "insert":
            data = data[:position] + draw(st.binary(min_size=1, max_size=3)) + data[position:]
        elif how == "delete":
            data = data[:position] + data[position + 1:]
        elif how == "space":
            data = data.replace(b",", b", ", 1)
        else:  # the keys in another order
            try:
                data = json.dumps(json.loads(data), separators=(",", ":")).encode() + b"\n"
            except ValueError:
                pass
    return data


def typed(value: Any) -> Any:
    """A value with its types kept apart (1 and 1.0 and True differ)."""
    if isinstance(value, dict):
        return {key: typed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [typed(item) for item in value]
    return (type(value).__name__, value)


def slow_shape(data: bytes) -> tuple[str, str, int, str, bytes, Any]:
    """What the team view kept of a record before the quick reader: parse_blob and the typed body."""
    envelope, body = parse_blob(data)
    summary = ({"run": body.run, "through_seq": body.through_seq, "lines": bool(body.lines),
                "paths": team._paths(body)} if envelope.kind == "run" else envelope.body)
    return envelope.author, envelope.kind, envelope.v, envelope.sig, cut_body(envelope, data), summary


def outcome(read: Any, data: bytes) -> Any:
    try:
        return typed(list(read(data)))
    except RecordError as error:
        return f"refused: {error}"


@pytest.mark.slow
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=blobs())
def test_whatever_the_quick_reader_accepts_parse_blob_accepts_with_the_same_fields(data):
    quick = quickread.quick_read(data)
    if quick is not None:
        envelope, _ = parse_blob(data)  # raises if the quick reader accepted what the oracle refuses
        assert (quick.author, quick.kind, quick.v, quick.sig) == (envelope.author, envelope.kind, envelope.v,
                                                                 envelope.sig)
        assert quick.body == cut_body(envelope, data)
        assert typed(quick.raw()) == typed(envelope.body)
    assert outcome(team.shape_of, data) == outcome(slow_shape, data)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind_record=valid_bodies, version=st.sampled_from([1, 2]))
def test_a_valid_record_of_printable_ascii_is_read_quickly(kind_record, version):
    """The speed claim: a record the oracle accepts whose strings need no escape (and whose
    numbers json writes without an exponent) takes the quick path; the slow path is for the odd one."""
    kind, record = kind_record
    if kind == "run" and record.lines is None:
        record = dataclasses.replace(record, lines=[])  # null is format 1's absence: format 2 has a list
    data = canonical({"author": AUTHOR, "body": to_json(record, version), "kind": kind, "sig": SIG, "v": version}) + b"\n"
    parse_blob(data)  # valid, by construction
    if not re.search(rb"[0-9]e", data) and (kind, version) not in SLOW_SHAPES:
        assert quickread.quick_read(data) is not None


# a format 2 manifest holds lists of numbers (an index's scores and weights), which a regex cannot
# check inside a list: it has a reader of its own (vacant/share/quickindex.py, test_quickindex.py)
SLOW_SHAPES = {("manifest", 2)}


@pytest.mark.parametrize("kind,version", [(k, v) for k in records.KINDS for v in records.FORMATS])
def test_every_record_shape_but_an_index_has_a_quick_form(kind, version):
    assert (quickread.shape(kind, version) is None) == ((kind, version) in SLOW_SHAPES)


SAMPLES = [
    ("run", RunRecord("run-1", "claude-code", "a" * 40, 1800000280.0, 40,
                      [Cell("claude-code", "main", "model-0", "family-1"), Cell("codex", "sub/x", "m", "t")],
                      [StepEntry(1, "Edit", 0, "ok", ["src/a.py", "b"]), StepEntry(2, "oob", None, None, [])], 12,
                      ReadCoverage("partial", "1 shell step"),
                      [FindingEntry("f-1", "check", "tests", "provable", 1, 2, "src/a.py", 3, "c" * 64, "file")],
                      "b" * 40, [PathLines("src/a.py", None, "d" * 40, [LineEdit(1, [], [Hunk(0, 1, ["0" * 16])])], None),
                                 PathLines("b", ["1" * 16], None, [LineEdit(None, [1, 2], None)], "binary")])),
    ("review", ReviewRecord("run-1", 7, Cell("claude-code", "main", "model-0", "family-1"), 0.5, 1.0, "f-1")),
    ("manifest", ManifestRecord(["d" * 64, "e" * 64])),
]


def every_tweak() -> list[tuple[str, int, bytes]]:
    """Each sample with one value at any position set to each value near it (and as it is), or
    one of its numbers written in another form of the same or a near value."""
    found = []
    for kind, record in SAMPLES:
        for version in (1, 2):
            body = to_json(record, version)
            cases = [body] + [replaced(body, where, new) for where in nodes(body)[1:] for new in tweaks(at(body, where))]
            cases += [removed(body, where) for where in nodes(body)[1:]]
            for case in cases:
                try:
                    found.append((kind, version, canonical({"author": AUTHOR, "body": case, "kind": kind, "sig": SIG,
                                                             "v": version}) + b"\n"))
                except ValueError:
                    continue
            data = canonical({"author": AUTHOR, "body": body, "kind": kind, "sig": SIG, "v": version}) + b"\n"
            for number in re.finditer(rb"(?<=[:\[,])[0-9]+(\.[0-9]+)?(?=[,\]}])", data):
                text = number.group(0)
                for other in (text + b"0", text + b".0", b"0" + text, text + b"e0", b"-" + text, text + b".50",
                              text.replace(b".0", b"")):
                    if other != text:
                        found.append((kind, version, data[:number.start()] + other + data[number.end():]))
    return found


@pytest.mark.slow
def test_one_value_changed_anywhere_is_read_as_parse_blob_reads_it():
    """Every position of every shape, set to each value at a check's edge: what the quick reader
    accepts, parse_blob accepts the same; and an unchanged sample is read quickly."""
    quick = 0
    for kind, version, data in every_tweak():
        assert outcome(team.shape_of, data) == outcome(slow_shape, data), data
        found = quickread.quick_read(data)
        if found is not None:
            assert typed(found.raw()) == typed(parse_blob(data)[0].body), data
            quick += 1
    assert quick >= 2 * len(SAMPLES)  # at least the samples as they are, in both formats
