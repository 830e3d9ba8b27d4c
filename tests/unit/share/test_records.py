"""The typed records: canonical bytes, signatures that catch any edit, ids that are never paths,
and docs/SHARE.md generated from them."""

from __future__ import annotations

import hashlib
import json

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given, settings
from hypothesis import strategies as st

from vacant.share import records
from vacant.share.publish import entry_path, seal
from vacant.share.records import (
    Cell,
    RecordError,
    ReviewRecord,
    blob_of,
    body_id,
    parse_blob,
    parse_typed,
    signed_bytes,
    to_json,
)
from vacant.share.signing import Signer, parse_team_keys

KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
SIGNER = Signer(KEY, KEY.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw))
TEAM = parse_team_keys(SIGNER.team_line("tester") + "\n")

names = st.text(st.characters(min_codepoint=32, max_codepoint=0x2FFF, exclude_characters="\x7f"), min_size=1, max_size=20)
ids = st.from_regex(records.ID_PATTERN, fullmatch=True)
reviews = st.builds(ReviewRecord, run=ids, seq=st.integers(1, 10**9), cell=st.builds(Cell, names, names, names, names),
                    score=st.sampled_from([0.0, 0.5, 1.0]), weight=st.floats(0, 1000, allow_nan=False),
                    finding=st.none() | ids)


def verifies(blob: bytes) -> bool:
    try:
        envelope, _ = parse_blob(blob)
    except RecordError:
        return False
    return TEAM.verify(envelope.author, signed_bytes(envelope.kind, envelope.author, envelope.body, envelope.v),
                       envelope.sig)


@settings(max_examples=60, deadline=None)
@given(review=reviews)
def test_a_sealed_review_round_trips_and_is_deterministic(review):
    blob = seal(SIGNER, "review", review)
    envelope, body = parse_blob(blob)
    assert body == review and envelope.author == SIGNER.fingerprint and verifies(blob)
    assert seal(SIGNER, "review", review) == blob  # same record, same bytes, same name
    assert entry_path("review", blob).replace("/", "")[-64:] == hashlib.sha256(blob).hexdigest()


@settings(max_examples=60, deadline=None)
@given(review=reviews, version=st.sampled_from([1, 2]))
def test_the_body_cut_from_the_bytes_is_what_serialising_it_again_gives(review, version):
    """The reader's shortcut (records.cut_body) against the writer's own functions as the oracle."""
    blob = seal(SIGNER, "review", review)
    blob = blob.replace(b'"v":1}', b'"v":%d}' % version)  # the cut must not depend on the format digit
    envelope, _ = parse_blob(blob)
    cut = records.cut_body(envelope, blob)
    assert cut == records.canonical(envelope.body)
    assert records.signed_bytes_of(envelope, cut) == signed_bytes("review", envelope.author, envelope.body, version)
    assert records.body_id_of("review", cut) == body_id("review", envelope.body)


@settings(max_examples=80, deadline=None)
@given(review=reviews, data=st.data())
def test_any_edit_of_a_signed_record_is_caught(review, data):
    blob = seal(SIGNER, "review", review)
    position = data.draw(st.integers(0, len(blob) - 2))
    replacement = data.draw(st.integers(0, 255).filter(lambda b: b != blob[position]))
    edited = blob[:position] + bytes([replacement]) + blob[position + 1:]
    assert not verifies(edited)


@given(review=reviews)
def test_body_identity_ignores_who_signed(review):
    other = Ed25519PrivateKey.from_private_bytes(bytes(32))
    raw = other.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    mine, theirs = parse_blob(seal(SIGNER, "review", review))[0], parse_blob(seal(Signer(other, raw), "review", review))[0]
    assert mine.author != theirs.author and body_id("review", mine.body) == body_id("review", theirs.body)


@pytest.mark.parametrize("run", ["../x", "a/b", ".hidden", "", "x" * 200, "a\nb", "..", "/etc/passwd", "a\\b"])
def test_ids_that_could_be_paths_are_refused(run):
    body = to_json(ReviewRecord("r", 1, Cell("p", "d", "m", "t"), 1.0, 1.0, None))
    with pytest.raises(RecordError, match=r"review\.run"):
        parse_typed(ReviewRecord, {**body, "run": run}, "review")


@pytest.mark.parametrize("path", ["../x", "/abs", "a/../b", "a//b", "./a", "a\x00b", ""])
def test_changed_paths_stay_relative(path):
    with pytest.raises(RecordError):
        records.PATH.parse(path, "step.changed[0]")


def test_unknown_and_missing_keys_and_wrong_types_are_refused():
    body = to_json(ReviewRecord("r", 1, Cell("p", "d", "m", "t"), 1.0, 1.0, None))
    for broken, what in (({**body, "extra": 1}, "unknown key"), ({k: v for k, v in body.items() if k != "seq"}, "missing"),
                         ({**body, "score": "1"}, "score"), ({**body, "seq": True}, "seq"), ({**body, "score": 2}, "score")):
        with pytest.raises(RecordError, match=what):
            parse_typed(ReviewRecord, broken, "review")


def test_a_non_canonical_blob_is_refused_even_with_a_valid_signature():
    blob = seal(SIGNER, "review", ReviewRecord("r", 1, Cell("p", "d", "m", "t"), 1.0, 1.0, None))
    spaced = json.dumps(json.loads(blob), indent=1).encode()
    with pytest.raises(RecordError, match="canonical"):
        parse_blob(spaced)
    assert blob_of(parse_blob(blob)[0]) == blob


def test_team_keys_file_problems_are_said():
    keys = parse_team_keys("# team\ned25519 notbase64 bob\nssh-rsa AAAA carol\n" + SIGNER.team_line("t"))
    assert list(keys.keys) == [SIGNER.fingerprint] and len(keys.problems) == 2


# -- the bulk checks: a whole list at once gives what checking each item gives -------------------

BULK_CHECKS = {"ident": records.IDENT, "sha256": records.SHA256, "object-id": records.OBJECT_ID,
               "line-hash": records.LINE_HASH,
               "seq": records._integer(1), "count": records._integer(0), "score": records._number(0, 1),
               "weight": records._number(0, 1000), "finding": records._optional(records.IDENT),
               "count-or-null": records._optional(records._integer(0)), "boolean": records.BOOLEAN}
near_values = st.one_of(
    ids, st.from_regex(r"[0-9a-f]{64}", fullmatch=True), st.from_regex(r"[0-9a-f]{40}", fullmatch=True),
    st.from_regex(r"[0-9a-fA-F]{16}", fullmatch=True), st.from_regex(r"[0-9a-f]{63,65}\n?", fullmatch=True),
    st.from_regex(r"[0-9a-fA-F]{64}|[0-9a-f]{38}[0-9a-f \t\n\x0b]{2}|[0-9a-f]{31}[ \x0c][0-9a-f]{32}|[0-9a-f]{39}é",
                  fullmatch=True),  # upper case, whitespace bytes.fromhex skips, not ASCII
    ids.map(lambda v: v + "\n"), ids.map(lambda v: "\n" + v), st.tuples(ids, ids).map("\n".join),
    st.text(max_size=8), st.just(""),
    st.integers(-3, 2**53 + 2), st.floats(-1, 1001), st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(), st.none(), st.lists(st.integers(), max_size=2))


def item_by_item(check: records.Check, values: list) -> list | None:
    try:
        return [check.parse(value, "x") for value in values]
    except RecordError:
        return None


@settings(max_examples=400, deadline=None)
@given(name=st.sampled_from(sorted(BULK_CHECKS)), values=st.lists(near_values, max_size=6))
def test_a_bulk_check_accepts_exactly_the_lists_each_item_passes(name, values):
    check = BULK_CHECKS[name]
    expected = item_by_item(check, values)
    got = check.bulk(values)
    assert got == expected and [type(v) for v in got or ()] == [type(v) for v in expected or ()]


HEX_CHECKS = {"sha256": (records.SHA256, 64), "object-id": (records.OBJECT_ID, 40), "line-hash": (records.LINE_HASH, 16)}


@settings(max_examples=300, deadline=None)
@given(name=st.sampled_from(sorted(HEX_CHECKS)), data=st.data(),
       ids=st.lists(st.binary(min_size=32, max_size=32), min_size=1, max_size=5),
       damage=st.sampled_from(" \t\n\x0b\x0c\rABCDEFgé0\x00"))
def test_a_bulk_hex_check_refuses_any_character_off(name, data, ids, damage):
    """Valid ids but for one or two characters (white space `bytes.fromhex` skips, two of them
    keeping its pairs whole; an upper-case digit, a letter past f, not ASCII, or a digit: still
    valid), at any places: the bulk check gives what checking each id gives."""
    check, width = HEX_CHECKS[name]
    values = [raw.hex()[:width] for raw in ids]
    for _ in range(data.draw(st.integers(1, 2))):
        item = data.draw(st.integers(0, len(values) - 1))
        at = data.draw(st.integers(0, width - 1))
        values[item] = values[item][:at] + damage + values[item][at + 1:]
    expected = item_by_item(check, values)
    assert check.bulk(values) == expected and (expected is None) == (damage != "0")


def test_a_format_2_manifest_is_checked_by_its_frame_and_signature_not_reserialised():
    """An index is megabytes: its body's bytes are taken as signed, but the envelope around them is
    canonical or the blob is refused, and any edit of the body breaks the signature."""
    body = to_json(records.ManifestRecord([], [], None, None, True, [], [], None, None), 2)
    spaced = json.dumps(body, sort_keys=True).encode()  # ", " and ": ": not canonical, still the same value
    signature = SIGNER.sign(records.signed_bytes_cut(SIGNER.fingerprint, "manifest", 2, spaced))
    frame = b'{"author":"%s","body":%s,"kind":"manifest","sig":"%s","v":2}\n'
    data = frame % (SIGNER.fingerprint.encode(), spaced, signature.encode())
    envelope, parsed = parse_blob(data)
    assert parsed.whole is True and records.cut_body(envelope, data) == spaced
    assert TEAM.verify(SIGNER.fingerprint, records.signed_bytes_of(envelope, spaced), signature)
    edited = spaced.replace(b"true", b"false")
    assert not TEAM.verify(SIGNER.fingerprint, records.signed_bytes_cut(SIGNER.fingerprint, "manifest", 2, edited),
                           signature)
    with pytest.raises(RecordError, match="canonical"):
        parse_blob(data.replace(b'{"author":', b'{ "author":', 1))
    with pytest.raises(RecordError, match="canonical"):
        parse_blob(data[:-1] + b" \n")
    v1 = frame.replace(b'"v":2', b'"v":1') % (SIGNER.fingerprint.encode(), json.dumps({"records": []}).encode(),
                                               signature.encode())
    with pytest.raises(RecordError, match="canonical"):  # any other record: canonical whole, as before
        parse_blob(v1.replace(b'{"records": []}', b'{"records": [] }'))
