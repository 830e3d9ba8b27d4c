"""The index reader (vacant/share/quickindex.py) against `records.parse_blob` as the oracle: on
generated format 2 manifests, on manifests with hostile values put in (ids of the wrong width or
case, mixed widths, escapes, non-ASCII, numbers out of bounds or in other forms, wrong types,
unknown, missing and duplicated keys, lists over their limit) and on bytes edited at random,
whatever the reader accepts, `parse_blob` accepts, with the same fields and body; and what the
team view keeps of a manifest (team.shape_of) is what the slow path keeps."""

from __future__ import annotations

import json
import re
import string
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from test_quickread import AUTHOR, NASTY, NUMBERS, SIG, at, outcome, slow_shape, typed, values_put_in

from vacant.share import index, quickindex, team
from vacant.share.records import (
    Cell,
    ManifestRecord,
    ReviewIndex,
    RunIndex,
    canonical,
    cut_body,
    parse_blob,
    to_json,
)

HEX = "0123456789abcdef"
hex64 = st.text(HEX, min_size=64, max_size=64)
hex40 = st.text(HEX, min_size=40, max_size=40)
PLAIN = "".join(c for c in string.printable if c.isprintable() and c not in '"\\')
plain = st.text(st.sampled_from(PLAIN), min_size=1, max_size=10)
BAD_IDS = ["A" * 64, "a" * 63, "a" * 65, "g" * 64, "a" * 39, "a" * 41, "", " " + "a" * 63, "a" * 63 + "\n", "é" * 64,
           "a" * 62 + '",', "a" * 62 + "],"]


def manifests(ids: Any, oids: Any, idents: Any, ints: Any, numbers: Any, texts: Any, paths: Any, size: int) -> Any:
    """A format 2 manifest body (`ManifestRecord`) from these leaves, its index columns of any lengths."""
    def column(leaf: Any) -> Any:  # any list, or a few values repeated as a team's scores and cells are
        return st.lists(leaf, max_size=size) | st.tuples(st.lists(leaf, min_size=1, max_size=3),
                                                         st.integers(2, 40)).map(lambda few: few[0] * few[1])
    runs = st.builds(RunIndex, column(ids), oids, column(idents), column(ints), column(st.booleans()),
                     column(st.none() | ints), column(ints))
    reviews = st.builds(ReviewIndex, column(ids), oids, column(idents), column(ints), column(ints), column(numbers),
                        column(numbers), column(st.none() | idents))
    cells = st.builds(Cell, texts, texts, texts, texts)
    return st.builds(ManifestRecord, st.lists(ids, max_size=2), st.none() | st.lists(ids, max_size=2),
                     st.none() | hex40, st.none() | hex40, st.none() | st.booleans(),
                     st.none() | st.lists(cells, max_size=3), st.none() | st.lists(paths, max_size=3),
                     st.none() | runs, st.none() | reviews)


def one_width(size: int) -> Any:
    """A column of git object ids as a repository has them: all 40 hex digits or all 64."""
    return st.lists(hex40, max_size=size) | st.lists(hex64, max_size=size)


ident = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,12}", fullmatch=True)
segments = st.text(st.sampled_from(PLAIN.replace("/", "")), min_size=1, max_size=6).filter(lambda s: s not in (".", ".."))
valid_manifests = manifests(hex64, one_width(6), ident, st.integers(1, 10**14),
                            st.sampled_from([0, 1, 0.0, 1.0, 0.5, 0.25, 1e-4, 0.1, 1e-7]) | st.floats(0, 1),
                            plain, st.lists(segments, min_size=1, max_size=3).map("/".join), 6)
hostile_ids = hex64 | st.sampled_from(BAD_IDS) | st.text(max_size=4)
mixed = st.lists(hex40 | hex64 | st.sampled_from(BAD_IDS), max_size=4)
any_manifests = manifests(hostile_ids, one_width(4) | mixed, ident | st.sampled_from(NASTY),
                          st.integers(-1, 2**54) | st.sampled_from(NUMBERS),
                          st.floats() | st.sampled_from(NUMBERS), plain | st.sampled_from(NASTY),
                          plain | st.sampled_from(NASTY), 4)


def blob(body: Any, version: int = 2, kind: str = "manifest", author: str = AUTHOR) -> bytes:
    envelope = {"author": author, "body": body, "kind": kind, "sig": SIG, "v": version}
    try:
        return canonical(envelope) + b"\n"
    except ValueError:  # nan or inf: json writes them only when asked
        return json.dumps(envelope, sort_keys=True, separators=(",", ":")).encode() + b"\n"


@st.composite
def manifest_blobs(draw: st.DrawFn) -> bytes:
    body = values_put_in(draw, to_json(draw(valid_manifests | any_manifests), 2),
                         st.sampled_from(NUMBERS + NASTY + BAD_IDS), ["extra", "runs", "whole"])
    data = blob(body, draw(st.sampled_from([2, 2, 2, 2, 1, 3])), draw(st.sampled_from(["manifest"] * 6 + ["run"])),
                draw(st.sampled_from([AUTHOR] * 6 + [AUTHOR.upper()])))
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 2]))):  # the bytes edited: other forms of the same value, or noise
        data = edited(draw, data)
    return data


def edited(draw: st.DrawFn, data: bytes) -> bytes:
    how = draw(st.sampled_from(["number", "flip", "structure", "insert", "delete", "space", "duplicate", "escape",
                                "order"]))
    position = draw(st.integers(0, max(0, len(data) - 1)))
    if how == "number":  # 1.0 as 1.00, 1e0, 01, …: json's value may be the same, or nothing
        return re.sub(rb"(?<=[\[,:])(\d+)(\.\d+)?(?=[,\]}])", lambda m: draw(st.sampled_from(
            [m[1] + b".0", m[1] + b"0", b"0" + m[1], m[1] + b"e0", m[1] + (m[2] or b"") + b"0", m[1] + b"E1",
             b"-" + m[1], m[1] + b".", b"" + (m[2] or b"")])), data, count=draw(st.integers(1, 3)))
    if how == "flip":
        return data[:position] + bytes([draw(st.integers(0, 255))]) + data[position + 1:]
    if how == "structure":  # one of JSON's own characters for another
        found = [n for n, char in enumerate(data) if char in b'{}[],:"']
        where = draw(st.sampled_from(found))
        return data[:where] + draw(st.sampled_from([b"{", b"}", b"[", b"]", b",", b":", b'"', b""])) + data[where + 1:]
    if how == "insert":
        noise = draw(st.binary(min_size=1, max_size=3) | st.sampled_from([b",", b'"', b"]", b"[", b" "]))
        return data[:position] + noise + data[position:]
    if how == "delete":
        return data[:position] + data[position + 1:]
    if how == "space":
        return data.replace(draw(st.sampled_from([b",", b":", b"[", b"]"])), draw(st.sampled_from([b", ", b" :", b"[ "])), 1)
    if how == "duplicate":  # a key twice: json keeps the last
        found = list(re.finditer(rb'[{,]("[a-z_]+":)', data))
        if found:
            key = draw(st.sampled_from(found))
            return data[:key.start(1)] + key[1] + b"0," + data[key.start(1):]
        return data
    if how == "escape":  # a character of a string written as an escape: the same value, json says
        found = list(re.finditer(rb'(?<=")[0-9a-z]', data))
        if found:
            char = draw(st.sampled_from(found))
            return data[:char.start()] + b"\\u%04x" % char[0][0] + data[char.end():]
        return data
    try:  # the keys in another order
        return json.dumps(json.loads(data), separators=(",", ":")).encode() + b"\n"
    except ValueError:
        return data


def check_against_oracle(data: bytes) -> quickindex.Index | None:
    found = quickindex.read_index(data)
    if found is not None:
        envelope, _ = parse_blob(data)  # raises if the reader accepted what the oracle refuses
        assert (found.author, found.kind, found.v, found.sig) == (envelope.author, envelope.kind, envelope.v,
                                                                 envelope.sig)
        assert found.body == cut_body(envelope, data)
        assert typed(found.raw()) == typed(envelope.body)
        for name, value in columns(found.values):
            assert len(value) == len(list(value)) == len(at(envelope.body, name)), name
            assert [value[n] for n in range(len(value))] == at(envelope.body, name)
    assert outcome(team.shape_of, data) == outcome(slow_shape, data)
    return found


def columns(values: dict[str, Any], where: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    found = []
    for name, value in values.items():
        if isinstance(value, dict):
            found += columns(value, (*where, name))
        elif isinstance(value, quickindex.HexColumn):
            found.append(((*where, name), value))
    return found


@pytest.mark.slow
@settings(max_examples=700, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=manifest_blobs())
def test_whatever_the_index_reader_accepts_parse_blob_accepts_with_the_same_body(data):
    found = check_against_oracle(data)
    event("read quickly" if found is not None else "left to parse_blob")


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(record=valid_manifests, kind=st.sampled_from(["runs", "reviews", None]))
def test_a_valid_index_of_printable_ascii_is_read_quickly(record, kind):
    """The speed claim: a manifest the oracle accepts, its strings needing no escape and its ids of
    one width per list, takes the quick path (and the oracle agrees)."""
    body = to_json(record, 2)
    if kind is not None and body[kind] is not None:
        body = {**body, kind: {**body[kind], "oid": []}}  # and an empty column
    assert check_against_oracle(blob(body)) is not None


CELL = {"platform": "p", "agent_definition": "main", "model": "m", "task_family": "t"}
ROWS = [index.Row("run", "a" * 64, "b" * 40, {"run": "r-1", "through_seq": 3, "lines": True, "paths": ["x/y", "z"]}),
        index.Row("review", "c" * 64, "d" * 40, {"cell": CELL, "finding": None, "run": "r-1", "score": 1.0, "seq": 4,
                                                 "weight": 0.5}),
        index.Row("review", "e" * 64, "f" * 40, {"cell": CELL, "finding": "f-1", "run": "r-1", "score": 1e-05, "seq": 5,
                                                 "weight": 1000})]
SAMPLE = blob(index.manifest_body(ROWS, ["9" * 64], {"runs": "1" * 40, "reviews": "2" * 40}))


def test_an_index_as_vacant_writes_it_is_read_quickly_with_its_rows():
    found = check_against_oracle(SAMPLE)
    assert found is not None
    assert sorted(index.indexed(found.values), key=lambda row: row.name) == ROWS


EDITS = [b"{", b"}", b"[", b"]", b",", b":", b'"', b" ", b"0", b"1", b"9", b"a", b"A", b".", b"e", b"-", b"n", b"\\",
         b"\x00", b"\n", "\u00e9".encode()]


@pytest.mark.slow
def test_one_byte_changed_anywhere_is_read_as_parse_blob_reads_it():
    """Every position of a manifest as vacant writes it, each byte replaced by each of JSON's own
    characters (and others), deleted, or one put before it: what the reader accepts, parse_blob
    accepts the same."""
    quick = 0
    for position in range(len(SAMPLE)):
        head, tail = SAMPLE[:position], SAMPLE[position + 1:]
        for data in [head + new + tail for new in EDITS] + [head + tail] + [head + new + SAMPLE[position:] for new in EDITS]:
            quick += check_against_oracle(data) is not None
    assert quick >= len(SAMPLE)  # the edits that keep the same value (a hex digit for another, say) read quickly


@pytest.mark.parametrize("count,accepted", [(10_000, True), (10_001, False)])
def test_a_list_of_ids_over_its_limit_is_refused_as_the_oracle_refuses_it(count, accepted):
    """`after` holds at most 10,000 names: one more and `parse_blob` refuses the manifest."""
    body = to_json(ManifestRecord([], ["%064x" % n for n in range(count)]), 2)
    data = blob(body)
    assert (check_against_oracle(data) is not None) == accepted
    assert outcome(team.shape_of, data) == outcome(slow_shape, data)
    assert isinstance(outcome(team.shape_of, data), list) == accepted


@pytest.mark.slow
@pytest.mark.parametrize("count,accepted", [(1_000_000, True), (1_000_001, False)])
def test_a_list_of_repeated_numbers_over_its_limit_is_refused_as_the_oracle_refuses_it(count, accepted):
    """An index's `cell` holds at most 1,000,000 (`MAX_INDEX`): one more and `parse_blob` refuses it."""
    reviews = ReviewIndex([], [], [], [], [0] * count, [], [], [])
    data = blob(to_json(ManifestRecord([], [], None, None, None, [], [], None, reviews), 2))
    assert (check_against_oracle(data) is not None) == accepted


@pytest.mark.parametrize("oids,quick", [(["a" * 40, "b" * 64], False), (["A" * 40], False), (["a" * 40] * 3, True),
                                        (["a" * 64, "b" * 64], True), ([], True)])
def test_ids_of_mixed_widths_are_left_to_the_oracle(oids, quick):
    """Two widths in one list are valid ids but not read quickly; upper case is no id at all."""
    body = to_json(ManifestRecord([], [], None, None, None, [], [], RunIndex([], oids, [], [], [], [], []), None), 2)
    assert (check_against_oracle(blob(body)) is not None) == quick
