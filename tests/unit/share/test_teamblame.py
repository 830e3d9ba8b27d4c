"""`vacant blame --team`: line authorship rebuilt from the shared run records alone (hashes and
edit scripts, no contents) must be the authorship local blame computes from the contents on the
machine that recorded the runs (the independent oracle: vacant.show.blame.blame_file on the
recording workspace's object store), line for line; across clones, bad records explain nothing."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from teamkit import Team, git

from vacant.core.linecarry import apply_hunks, carry, hunks
from vacant.share import signing
from vacant.share.gitstore import GitStore
from vacant.share.publish import add_entries, entry_path, run_records, seal
from vacant.share.records import (
    MAX_VERSION_LINES,
    Envelope,
    RecordError,
    blob_of,
    parse_blob,
    parse_typed,
    signed_bytes,
    to_json,
)
from vacant.share.signing import Signer, parse_team_keys
from vacant.share.teamblame import Source, blame_records
from vacant.show import shapes
from vacant.show.blame import blame_file
from vacant.store.reputation import cell_key
from vacant.store.run import RunView

_SHOW = str(Path(__file__).resolve().parents[1] / "show")
if _SHOW not in sys.path:  # the show tests' in-process recorder (tests/unit/show/recording.py)
    sys.path.insert(0, _SHOW)
from recording import Recording  # noqa: E402

AUTHORS = "refs/vacant/authors/"
KEY = "3f" * 20  # a root commit id: the line hashes' key
TARGET = "src/file.txt"
WORDS = ["", "}", "a", "b", "return x"]  # repeated lines make the diff's alignment a choice


_KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
SIGNER = Signer(_KEY, _KEY.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw))
TEAM = Source("team", SIGNER.fingerprint, "tester")

KINDS = ("insert", "delete", "replace", "move") * 3 + ("big",)  # a version not kept: now and then
op = st.tuples(st.sampled_from(KINDS),
               st.sampled_from(("write", "bash", "sub", "oob", "between", "pair")),
               st.floats(0, 1), st.floats(0, 1), st.integers(1, 4), st.booleans())


class Text:
    """The file's lines, edited by generated operations (fresh lines, or repeated common ones)."""

    def __init__(self, initial: int) -> None:
        self.counter = 0
        self.lines = self.fresh(initial, False)

    def fresh(self, count: int, common: bool) -> list[str]:
        self.counter += count
        return [WORDS[(self.counter + i) % len(WORDS)] if common else f"line {self.counter + i}" for i in range(count)]

    def apply(self, kind: str, a: float, b: float, size: int, common: bool) -> None:
        at = int(a * len(self.lines))
        if kind == "big":  # over the object-store cap set below: a version the store does not keep
            self.lines = self.lines + self.fresh(400, False)
        elif kind == "insert" or not self.lines:
            self.lines[at:at] = self.fresh(size, common)
        elif kind == "delete":
            del self.lines[at:at + size]
        elif kind == "replace":
            self.lines[at:at + size] = self.fresh(size, common)
        else:
            block = self.lines[at:at + size]
            del self.lines[at:at + size]
            to = int(b * len(self.lines))
            self.lines[to:to] = block

    def data(self) -> bytes:
        return "".join(line + "\n" for line in self.lines).encode()


def record(ws: Path, ops: list[tuple], initial: int) -> list[Path]:
    """Runs recorded through the real recorder, editing TARGET as `ops` say."""
    target = ws / TARGET
    target.parent.mkdir(parents=True, exist_ok=True)
    text = Text(initial)
    target.write_bytes(text.data())
    git(ws, "init", "-q")  # committed: the first run's baseline is named by its blob, not listed
    git(ws, "add", TARGET)
    git(ws, "commit", "-q", "-m", "start")
    runs = [Recording(ws, "run-0")]
    for number, (kind, who, a, b, size, common) in enumerate(ops):
        text.apply(kind, a, b, size, common)
        if who == "between":  # edited while no run records
            runs[-1].end()
            target.write_bytes(text.data())
            runs.append(Recording(ws, f"run-{len(runs)}"))
        elif who == "oob":  # another process: the next scan records an out-of-band change set
            target.write_bytes(text.data())
        elif who == "pair":  # two shell steps open at once: the change is a group's (one of them)
            pair(runs[-1], lambda: target.write_bytes(text.data()), number)
        elif who == "bash":
            runs[-1].step("Bash", lambda: target.write_bytes(text.data()), None, tool_input={"command": f"edit {number}"})
        else:
            runs[-1].step("Write", lambda: target.write_bytes(text.data()), [str(target)],
                          "agent-sub" if who == "sub" else None, {"file_path": str(target), "n": number})
    runs[-1].end()
    return [run.run_dir for run in runs]


def pair(run: Recording, act, number: int) -> None:
    """Two shell steps open when a third starts: the change its scan sees is theirs, as a group."""
    keys = [f"toolu_pair_{number}_{n}" for n in (1, 2, 3)]
    for key in keys[:2]:
        run.call("tool_pre", tool="Bash", key=key, scope=None, agent_id=None, tool_input={"command": key})
    act()
    run.call("tool_pre", tool="Bash", key=keys[2], scope=None, agent_id=None, tool_input={"command": keys[2]})
    for key in keys:
        run.call("tool_post", tool="Bash", key=key, scope=None, agent_id=None, tool_input={"command": key},
                 outcome="ok", reads=[])


def local_view(author, views: dict[str, RunView]) -> tuple:
    """What both blames must agree on; the cell is read from the step log (the oracle's side)."""
    cell = cell_key(author.actor) if author.origin == "step" and author.actor else None
    return author.origin, author.run, author.step, author.tool, tuple(author.open_steps), cell


def team_view(author) -> tuple:
    cell = tuple(author.actor[k] for k in ("platform", "agent_definition", "model", "task_family")) if author.actor else None
    return author.origin, author.run, author.step, author.tool, tuple(author.open_steps), cell


def touches(run_dir: Path, path: str) -> bool:
    return any(path in {**c["added"], **c["changed"]} or path in c["removed"] for c in RunView.load(run_dir).of_type("change"))


def shared(ws: Path, run_dirs: list[Path]) -> list:
    """Every run as another clone gets it: sealed, signed, and parsed back from the blob's bytes."""
    found = []
    for run_dir in run_dirs:
        record_, _ = run_records(ws, run_dir, KEY, store=GitStore(ws))
        found.append((parse_blob(seal(SIGNER, "run", record_))[1], TEAM))
    return found


def named_blobs(ws: Path, records: list) -> dict[str, bytes]:
    """The committed baselines the records name, as a clone of the repository has them."""
    named = [lines.base_blob for record_, _ in records for lines in record_.lines if lines.base_blob]
    return GitStore(ws).read_blobs(named)


def assert_same(ws: Path, run_dirs: list[Path], records: list, data: bytes) -> None:
    (ws / TARGET).write_bytes(data)
    considered = [d for d in run_dirs if touches(d, TARGET)]
    local = blame_file(ws, TARGET, considered)
    team = blame_records(TARGET, records, data, KEY, named_blobs(ws, records))
    if any(lines.base_blob for record_, _ in records for lines in record_.lines):
        event("a baseline named by its committed blob")
    views = {d.name: RunView.load(d) for d in run_dirs}
    assert [r.record.run for r in team.considered] == [d.name for d in considered]
    assert team.texts == [line.text for line in local.lines]
    assert [team_view(a) for a in team.authors] == [local_view(line.author, views) for line in local.lines]
    assert all(a.source == TEAM for a in team.authors if a.run is not None)
    for origin in {a.origin for a in team.authors}:
        event(f"a line of origin {origin}")


@pytest.mark.slow
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(op, max_size=10), initial=st.integers(0, 6), later=st.lists(op, max_size=4))
def test_records_alone_blame_every_line_as_local_blame_does(tmp_path_factory, monkeypatch, ops, initial, later):
    monkeypatch.setenv("VACANT_OBJECT_CAP", "3000")  # a `big` version is over it: not kept, lines unknown
    ws = tmp_path_factory.mktemp("ws")
    run_dirs = record(ws, ops, initial)
    records = shared(ws, run_dirs)
    assert_same(ws, run_dirs, records, (ws / TARGET).read_bytes())
    text = Text(0)  # further commits on another clone: the file there has moved on
    text.lines = (ws / TARGET).read_text().splitlines()
    text.counter = 10_000
    for kind, _, a, b, size, common in later:
        text.apply(kind if kind != "big" else "insert", a, b, size, common)
    assert_same(ws, run_dirs, records, text.data())


@settings(max_examples=200, deadline=None)
@given(old=st.lists(st.sampled_from(WORDS + ["c", "d"]), max_size=12), new=st.lists(st.sampled_from(WORDS + ["c", "d"]), max_size=12))
@pytest.mark.slow
def test_an_edit_script_rebuilds_the_new_version_and_a_bad_one_is_refused(old, new):
    script = hunks(old, new)
    assert apply_hunks(old, script) == new
    assert carry(old, list(range(len(old))), new, -1) == carry(old, list(range(len(old))), apply_hunks(old, script), -1)
    if script:
        first = script[0]
        assert apply_hunks(old, [first._replace(end=len(old) + 1)]) is None  # past the end
        assert apply_hunks(old, [first._replace(start=first.end + 1)]) is None  # backwards
        if first.end > first.start:
            assert apply_hunks(old, [first, first]) is None  # overlapping


def test_format_1_run_records_still_verify_and_are_blamed_file_level(tmp_path, monkeypatch):
    """A run record as format 1 wrote it (no line data) is read, and its steps are listed
    file-level; the lines after it are `unknown`, never guessed."""
    ws = tmp_path / "ws"
    run_dirs = record(ws, [("insert", "write", 0.5, 0, 2, False)], 3)
    modern, _ = run_records(ws, run_dirs[0], KEY)
    data = to_json(modern, 1)
    assert "lines" not in data and "line_key" not in data
    old = parse_typed(type(modern), data, "run", 1)
    blob = seal_format_1(old)
    envelope, parsed = parse_blob(blob)
    assert envelope.v == 1 and parsed.lines is None
    keys = parse_team_keys(SIGNER.team_line("tester") + "\n")
    assert keys.verify(envelope.author, signed_bytes("run", envelope.author, envelope.body, envelope.v), envelope.sig)
    assert not keys.verify(envelope.author, signed_bytes("run", envelope.author, envelope.body, 2), envelope.sig)
    team = blame_records(TARGET, [(parsed, TEAM)], (ws / TARGET).read_bytes(), KEY)
    assert [(r.record.run, r.why) for r in team.considered] == [("run-0", "format-1 record (no line data)")]
    assert {a.origin for a in team.authors} == {"unknown"}
    assert [(s["run"], s["step"], s["tool"]) for s in team.file_level()] == [("run-0", 1, "Write")]
    assert list(team.file_level()[0]) == ["origin", "run", "step", "tool", "actor", "open_steps", "source", "key",
                                          "key_name", "why"]  # as VIEW_JSON.md's `file_level` says
    try:  # a format 1 record with format 2 keys is not format 1
        parse_typed(type(modern), to_json(modern, 2), "run", 1)
        raise AssertionError("accepted")
    except RecordError as error:
        assert "unknown key(s) line_key, lines" in str(error)


def seal_format_1(body) -> bytes:
    """A run record sealed the way format 1 did (before line data)."""
    data = to_json(body, 1)
    return blob_of(Envelope(1, "run", SIGNER.fingerprint, data, SIGNER.sign(signed_bytes("run", SIGNER.fingerprint, data, 1))))


def test_a_clone_without_the_named_baseline_blob_blames_the_run_file_level(tmp_path):
    ws = tmp_path / "ws"
    run_dirs = record(ws, [("insert", "write", 0.5, 0, 2, False)], 3)
    records = shared(ws, run_dirs)
    assert [bool(lines.base_blob) for lines in records[0][0].lines] == [True]
    team = blame_records(TARGET, records, (ws / TARGET).read_bytes(), KEY, {})
    assert [r.why.split(",")[0] for r in team.considered] == ["its baseline"]
    assert {a.origin for a in team.authors} == {"unknown"}
    with_blob = blame_records(TARGET, records, (ws / TARGET).read_bytes(), KEY, named_blobs(ws, records))
    assert [a.origin for a in with_blob.authors] == ["baseline", "step", "step", "baseline", "baseline"]


def test_a_record_keyed_by_another_root_commit_explains_no_line(tmp_path):
    ws = tmp_path / "ws"
    run_dirs = record(ws, [("insert", "write", 0.5, 0, 2, False)], 3)
    records = shared(ws, run_dirs)
    team = blame_records(TARGET, records, (ws / TARGET).read_bytes(), "ab" * 20)
    assert [r.why for r in team.considered] == ["line hashes keyed by another root commit"]
    assert {a.origin for a in team.authors} == {"unknown"}


def test_an_edit_script_that_does_not_fit_makes_the_run_file_level(tmp_path):
    ws = tmp_path / "ws"
    run_dirs = record(ws, [("insert", "write", 0.5, 0, 2, False)], 3)
    ((rec, source),) = shared(ws, run_dirs)
    (lines,) = rec.lines
    bad_hunk = replace(lines.edits[0].hunks[0], start=50, end=60)
    broken = replace(rec, lines=[replace(lines, edits=[replace(lines.edits[0], hunks=[bad_hunk])])])
    team = blame_records(TARGET, [(broken, source)], (ws / TARGET).read_bytes(), KEY, named_blobs(ws, [(rec, source)]))
    assert [r.why for r in team.considered] == ["an edit script that does not fit its version"]
    assert {a.origin for a in team.authors} == {"unknown"}
    # a version past what any writer records (its hunks within the record's limits): refused, not built
    many = [replace(bad_hunk, start=0, end=0, lines=["0" * 16] * MAX_VERSION_LINES)] * 2
    huge = replace(rec, lines=[replace(lines, edits=[replace(lines.edits[0], hunks=many)])])
    team = blame_records(TARGET, [(huge, source)], (ws / TARGET).read_bytes(), KEY, named_blobs(ws, [(rec, source)]))
    assert [r.why for r in team.considered] == ["an edit script that does not fit its version"]


# -- across clones, through git and the real hook -------------------------------------------------

def commit_push(ws: Path, message: str) -> None:
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", message)
    git(ws, "push", "-q", "origin", "HEAD:main")


def team_lines(team: Team, person) -> dict:
    proc = team.cli(person, "blame", "out.txt", "--team", "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def documented(shown: dict) -> list[str]:
    found = []
    for key, inner in shown.items():
        found.append(key)
        if key in ("runs", "lines"):
            found += [f"{key}[].{name}" for name in inner[0]]
    return found


def who(shown: dict) -> list[tuple]:
    return [(row["text"], row["origin"], row["run"], row["step"], row["source"], row["key_name"]) for row in shown["lines"]]


@pytest.mark.slow
def test_a_fresh_clone_names_each_line_of_steps_run_on_other_machines(team):
    a, b, c, x = team.person("a"), team.person("b"), team.person("c"), team.person("x")
    team.seed([a, b, c])  # x's key is not trusted
    for person in (a, b, c, x):
        team.clone(person)
    team.run_writes(a, "run-a", [("out.txt", "alpha\nbeta\ngamma\n"), ("out.txt", "alpha\nBETA\ngamma\ndelta\n")])
    commit_push(a.ws, "a's work")
    team.sync(a)
    git(b.ws, "pull", "-q", "origin", "main")
    team.run_writes(b, "run-b", [("out.txt", "from b\nalpha\nBETA\ngamma\ndelta\n")])
    commit_push(b.ws, "b's work")
    team.sync(b)
    git(x.ws, "pull", "-q", "origin", "main")  # x claims every line: emptied, then written back
    team.run_writes(x, "run-x", [("out.txt", ""), ("out.txt", "from b\nalpha\nBETA\ngamma\ndelta\n")])
    team.sync(x)

    git(c.ws, "pull", "-q", "origin", "main")
    team.sync(c)
    (c.ws / "out.txt").write_text("from b\nalpha\nBETA\ngamma\ndelta\nc's own\n")  # not in any run
    shown = team_lines(team, c)
    assert who(shown) == [
        ("from b", "step", "run-b", 1, "team", "b"),
        ("alpha", "step", "run-a", 1, "team", "a"),
        ("BETA", "step", "run-a", 2, "team", "a"),
        ("gamma", "step", "run-a", 1, "team", "a"),
        ("delta", "step", "run-a", 2, "team", "a"),
        ("c's own", "outside", None, None, None, None)]
    assert [r["run"] for r in shown["runs"]] == ["run-a", "run-b"] and shown["rejected"] >= 1  # run-x: unknown key
    assert shown["lines"][0]["actor"]["platform"] == "claude-code" and shown["file_level"] == []
    assert documented(shown) == shapes.fields("blame --team")  # docs/VIEW_JSON.md says exactly this
    text = team.cli(c, "blame", "out.txt", "--team").stdout
    own = next(line for line in text.splitlines() if line.endswith("c's own"))
    assert "run-a step 2 Write main/unknown [a]" in text and "Not Committed Yet" in own and "run-" not in own

    # a's run record edited on the remote (b's line claimed by a): rejected, so it explains nothing
    store = GitStore(team.base / "attacker")
    git(team.base, "clone", "-q", str(team.bare), str(store.root))
    git(store.root, "fetch", "-q", "origin", "+refs/vacant/*:refs/vacant/*")
    team.use(a)
    fa = signing.own_signer().fingerprint
    old = git(store.root, "rev-parse", AUTHORS + fa).strip()
    files = {e.path: e.oid for e in store.list_tree(old)}
    (name,) = [p for p in files if p.startswith("runs/")]
    blob = store.read_blobs([files[name]])[files[name]]
    forged = blob.replace(b'"n":2,', b'"n":7,')  # any edit after signing
    assert forged != blob
    del files[name]
    files[entry_path("run", forged)] = store.write_blobs([forged])[0]
    new = store.commit(store.write_tree(files), [old], "not vacant")
    git(store.root, "push", "-q", "--force", "origin", f"{new}:{AUTHORS}{fa}")
    d = team.person("d")
    team.clone(d)
    team.sync(d)
    (d.ws / "out.txt").write_text("from b\nalpha\nBETA\ngamma\ndelta\n")
    fresh = team_lines(team, d)
    assert [r["run"] for r in fresh["runs"]] == ["run-b"] and fresh["rejected"] >= 2
    assert [(row["origin"], row["run"]) for row in fresh["lines"]] == [("step", "run-b")] + [("baseline", None)] * 4


@pytest.mark.slow
def test_a_format_1_record_on_the_remote_verifies_and_is_blamed_file_level(team):
    """As a vacant from before line data published it: read, verified, counted, shown file-level."""
    a, c = team.person("a"), team.person("c")
    team.seed([a, c])
    for person in (a, c):
        team.clone(person)
    run_dir = team.run_writes(a, "run-old", [("out.txt", "one\ntwo\n")])
    commit_push(a.ws, "a's work")
    team.use(a)
    signer = signing.own_signer()
    record_, reviews = run_records(a.ws, run_dir, None)
    old = to_json(record_, 1)
    blob = blob_of(Envelope(1, "run", signer.fingerprint, old, signer.sign(signed_bytes("run", signer.fingerprint, old, 1))))
    blobs = {entry_path("run", blob): blob}
    for review in reviews:
        sealed = seal(signer, "review", review)
        blobs[entry_path("review", sealed)] = sealed
    add_entries(GitStore(a.ws), signer, blobs, "vacant 0.x: records")
    git(a.ws, "push", "-q", "origin", f"{AUTHORS}{signer.fingerprint}")

    git(c.ws, "pull", "-q", "origin", "main")
    team.sync(c)
    shown = team_lines(team, c)
    assert shown["rejected"] == 0
    assert [(r["run"], r["line_data"], r["why"]) for r in shown["runs"]] == [
        ("run-old", False, "format-1 record (no line data)")]
    assert [(s["run"], s["step"], s["tool"], s["key_name"], s["why"]) for s in shown["file_level"]] == [
        ("run-old", 1, "Write", "a", "format-1 record (no line data)")]
    assert [(row["text"], row["origin"]) for row in shown["lines"]] == [("one", "unknown"), ("two", "unknown")]
    status = json.loads(team.cli(c, "sync", "--status", "--json").stdout)
    assert status["runs_counted"] == 1 and status["reviews_counted"] == len(reviews) == 1


@pytest.mark.slow
def test_runs_side_by_side_on_two_machines_keep_their_lines_through_the_merge(team):
    """a and b both start from the same commit; a rewrites the first line and deletes the third,
    b rewrites the last; b merges a's commit. Walked one after the other, b's baseline lacks a's
    work: a's line must still be a's, and lines a's run did not write stay baseline."""
    a, b, c = team.person("a"), team.person("b"), team.person("c")
    team.seed([a, b, c])
    for person in (a, b, c):
        team.clone(person)
    (a.ws / "out.txt").write_text("".join(f"line {n}\n" for n in range(1, 9)))
    commit_push(a.ws, "the file")
    git(b.ws, "pull", "-q", "origin", "main")
    team.run_writes(a, "run-a", [("out.txt", "by a\nline 2\nline 4\nline 5\nline 6\nline 7\nline 8\n")])
    commit_push(a.ws, "a's work")
    team.run_writes(b, "run-b", [("out.txt", "line 1\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\nby b\n")])
    git(b.ws, "commit", "-q", "-am", "b's work")
    git(b.ws, "pull", "-q", "--no-rebase", "origin", "main")  # a merge: both sides' lines
    git(b.ws, "push", "-q", "origin", "HEAD:main")
    team.sync(a), team.sync(b)
    git(c.ws, "pull", "-q", "origin", "main")
    team.sync(c)
    shown = team_lines(team, c)
    assert [(row["text"], row["origin"], row["run"]) for row in shown["lines"]] == [
        ("by a", "step", "run-a"), ("line 2", "baseline", None), ("line 4", "baseline", None),
        ("line 5", "baseline", None), ("line 6", "baseline", None), ("line 7", "baseline", None),
        ("by b", "step", "run-b")]


@pytest.mark.slow
def test_a_run_whose_work_was_never_committed_takes_no_line_from_the_baseline(team):
    """a's run rewrites and deletes lines but a never commits it; b's later run starts from the
    commit: lines a's run removed are still the baseline's, not `outside`."""
    a, b, c = team.person("a"), team.person("b"), team.person("c")
    team.seed([a, b, c])
    for person in (a, b, c):
        team.clone(person)
    (a.ws / "out.txt").write_text("line 1\nline 2\nline 3\nline 4\n")
    commit_push(a.ws, "the file")
    team.run_writes(a, "run-a", [("out.txt", "by a\nline 2\nline 4\n")])  # left uncommitted
    team.sync(a)
    git(b.ws, "pull", "-q", "origin", "main")
    team.run_writes(b, "run-b", [("out.txt", "line 1\nline 2\nline 3\nby b\n")])
    commit_push(b.ws, "b's work")
    team.sync(b)
    git(c.ws, "pull", "-q", "origin", "main")
    team.sync(c)
    shown = team_lines(team, c)
    assert [r["run"] for r in shown["runs"]] == ["run-a", "run-b"]
    assert [(row["text"], row["origin"], row["run"]) for row in shown["lines"]] == [
        ("line 1", "baseline", None), ("line 2", "baseline", None), ("line 3", "baseline", None),
        ("by b", "step", "run-b")]


@pytest.mark.slow
def test_the_path_index_reads_only_the_records_that_changed_the_file(team):
    from vacant.share.team import read_team
    from vacant.share.team import run_records as team_records
    from vacant.share.teamblame import team_runs

    a, c = team.person("a"), team.person("c")
    team.seed([a, c])
    for person in (a, c):
        team.clone(person)
    writes = {"run-1": "out.txt", "run-2": "other.txt", "run-3": "out.txt", "run-4": "third.txt"}
    for number, (session, rel) in enumerate(writes.items()):
        team.run_writes(a, session, [(rel, f"line {number}\n")])
    commit_push(a.ws, "a's work")
    team.sync(a)
    git(c.ws, "pull", "-q", "origin", "main")
    team.sync(c)
    team.use(c)
    store = GitStore(c.ws)
    view = read_team(c.ws, store, kinds=("run",))
    asked: list[str] = []
    real = store.read_blobs
    store.read_blobs = lambda oids: (asked.extend(oids), real(oids))[1]  # type: ignore[method-assign]
    read = team_records(store, view, "out.txt")
    assert sorted(record.run for record in read) == ["run-1", "run-3"] and len(asked) == 2
    current = (c.ws / "out.txt").read_bytes()
    indexed = team_runs(c.ws, store, [], only="out.txt").blame("out.txt", current)
    everything = team_runs(c.ws, store, []).blame("out.txt", current)
    assert [(x.origin, x.run, x.step) for x in indexed.authors] == [(x.origin, x.run, x.step) for x in everything.authors]
    assert [x.run for x in indexed.authors] == ["run-3"]
