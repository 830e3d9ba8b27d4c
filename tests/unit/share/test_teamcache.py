"""The sealed team cache (vacant/share/cache.py, team.py, fold.py): a warm read answers exactly
what a fresh verification answers; a cache of other refs or other trust, an edited, truncated or
foreign cache file, or garbage is rebuilt from the refs, never believed, never a crash; a record
whose signature fails is never counted, cold or warm. Real git repositories, real signatures."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

import pytest

from vacant.core.keys import create_user_key
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from teamkit import GIT_ENV, git

from vacant.share import fold
from vacant.share.gitstore import AUTHORS, GitStore
from vacant.share.publish import add_entries, entry_path, seal
from vacant.share.records import Cell, ReadCoverage, ReviewRecord, RunRecord, StepEntry
from vacant.share.signing import Signer
from vacant.share.team import build_view, read_team, view_to_json
from vacant.share.teamkey import TEAM_KEYS_FILE, view_path
from vacant.store import reputation

CELLS = [Cell("claude-code", "main", f"model-{m}", "family") for m in range(3)]


def signer(seed: int) -> Signer:
    key = Ed25519PrivateKey.from_private_bytes(seed.to_bytes(32, "big"))
    return Signer(key, key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw))


PEOPLE = [signer(500 + n) for n in range(3)]
STRANGER = signer(999)  # never in the team keys


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    for name, value in GIT_ENV.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))  # the cache's HMAC key lives here
    monkeypatch.setenv("VACANT_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("VACANT_STATE_DIR", raising=False)
    create_user_key()  # the person's, as their `vacant init` made it


def make_repo(base: Path, trusted: list[Signer]) -> GitStore:
    repo = base / "repo"
    git(base, "init", "-q", "-b", "main", str(repo))
    write_keys(repo, trusted)
    return GitStore(repo)


def write_keys(repo: Path, trusted: list[Signer]) -> None:
    (repo / TEAM_KEYS_FILE).write_text("".join(p.team_line(f"p{n}") + "\n" for n, p in enumerate(trusted)))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", "team keys")


def review(n: int, cell: int = 0, score: float = 1.0, run: str = "run-1") -> ReviewRecord:
    return ReviewRecord(run, 1 + n, CELLS[cell % 3], score, 1.0, None if score else f"f{n}")


def run_record(run: str, paths: list[str]) -> RunRecord:
    steps = [StepEntry(n, "Edit", 0, "ok", [path]) for n, path in enumerate(paths, start=1)]
    return RunRecord(run, "claude-code", None, 1.8e9, 10, CELLS[:1], steps, 0, ReadCoverage("none", "no reads"), [],
                     None, [])


def publish(store: GitStore, who: Signer, records: list[tuple[str, object]]) -> None:
    blobs = {}
    for kind, body in records:
        blob = seal(who, kind, body)
        blobs[entry_path(kind, blob)] = blob
    add_entries(store, who, blobs, "test")


def forged_commit(store: GitStore, who: Signer, blob: bytes, kind: str = "review") -> None:
    """Put `blob` on who's ref under its own hash name, with no manifest vouching for it."""
    ref = AUTHORS + who.fingerprint
    old = store.refs(ref).get(ref)
    files = {e.path: e.oid for e in store.list_tree(old)} if old else {}
    files[entry_path(kind, blob)] = store.write_blobs([blob])[0]
    new = store.commit(store.write_tree(files), [old] if old else [], "not vacant")
    git(store.root, "update-ref", ref, new)


def bad_signature(who: Signer, body: ReviewRecord) -> bytes:
    """A review signed by `who`, then edited (another seq, still canonical) with the signature kept."""
    return seal(who, "review", body).replace(b'"seq":', b'"seq":9', 1)


@contextmanager
def fresh_state():
    """A state directory nobody has used: everything is read and verified from the refs."""
    with tempfile.TemporaryDirectory() as fresh:
        saved = os.environ.get("VACANT_STATE_DIR")
        os.environ["VACANT_STATE_DIR"] = fresh
        try:
            yield
        finally:
            if saved is None:
                del os.environ["VACANT_STATE_DIR"]
            else:
                os.environ["VACANT_STATE_DIR"] = saved


def oracle(store: GitStore) -> tuple[list, dict]:
    """The uncached answer: a fresh verification and the plain multiset union of the rows."""
    with fresh_state():
        view = build_view(store.root, store, store.refs(AUTHORS))
    local = reputation.review_rows()
    rows, overlap = fold.union_rows(local, [fold.team_row(c) for c in view.reviews.values()])
    return figures(reputation.aggregate(rows)), {"counted": len(rows), "overlap": overlap, "team": len(view.reviews),
                                                  "rejected": len(view.rejected), "view": view_to_json(view)}


def figures(stats) -> list:
    return [(s.cell, s.n, pytest.approx(s.weight), pytest.approx(s.mean), pytest.approx(s.low), pytest.approx(s.high))
            for s in stats]


def answer(store: GitStore) -> tuple[list, dict]:
    stats, provenance = fold.folded_stats(store.root)
    view = read_team(store.root, store)
    return figures(stats), {"counted": provenance.counted, "overlap": provenance.overlap, "team": provenance.team,
                            "rejected": provenance.rejected, "view": view_to_json(view)}


def assert_same(store: GitStore) -> None:
    expected = oracle(store)
    assert answer(store) == expected  # cold (or rebuilt) ...
    assert answer(store) == expected  # ... and warm, from the sealed caches


# -- generated: a warm read answers what a fresh verification answers -----------------------------

team_records = st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2), st.sampled_from([0.0, 1.0]),
                                  st.sampled_from(["ok", "bad-signature", "stranger"])), max_size=12)
local_rows = st.lists(st.tuples(st.integers(0, 2), st.sampled_from([0.0, 1.0]), st.integers(0, 3)), max_size=6)


@pytest.mark.slow
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=team_records, local=local_rows, later=team_records)
def test_cached_figures_equal_a_fresh_verification_before_and_after_the_refs_move(tmp_path_factory, monkeypatch,
                                                                                    records, local, later):
    base = tmp_path_factory.mktemp("team")
    monkeypatch.setenv("VACANT_HOME", str(base / "data"))  # this example's own local table
    store = make_repo(base, PEOPLE)
    for cell, score, run in local:  # the local table overlaps the team's rows where they say the same
        reputation.record_review(CELLS[cell].__dict__, score, 1.0, f"run-{run}", None if score else "f0")

    def put(items, offset):
        for n, (who, cell, score, how) in enumerate(items, start=offset):
            body = review(n % 4, cell, score, f"run-{n % 4}")
            if how == "ok":
                publish(store, PEOPLE[who], [("review", body)])
            elif how == "bad-signature":
                forged_commit(store, PEOPLE[who], bad_signature(PEOPLE[who], body))
            else:
                forged_commit(store, STRANGER, seal(STRANGER, "review", body))

    put(records, 0)
    assert_same(store)
    put(later, 100)  # new commits on the refs: every cache keyed by the old tips is rebuilt
    assert_same(store)


# -- the verification rule --------------------------------------------------------------------------

def test_a_record_with_a_bad_signature_is_never_counted_cold_or_warm(tmp_path):
    store = make_repo(tmp_path, PEOPLE[:1])
    publish(store, PEOPLE[0], [("review", review(1, score=0.0))])
    forged_commit(store, PEOPLE[0], bad_signature(PEOPLE[0], review(2, score=0.0)))
    for _ in range(2):  # cold, then warm from the sealed caches
        stats, provenance = fold.folded_stats(store.root)
        assert (provenance.team, provenance.rejected) == (1, 1)
        assert [(s.n, s.mean) for s in stats] == [(1, 0.0)]
    assert [r.reason.split(":")[0] for r in read_team(store.root, store).rejected] == ["bad signature"]


def damaged(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "edited":  # one payload byte changed, the header (and its MAC) kept
        header, _, payload = data.partition(b"\n")
        target = payload.rfind(b"1")
        path.write_bytes(header + b"\n" + payload[:target] + b"2" + payload[target + 1:])
    elif how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif how == "garbage":
        path.write_bytes(os.urandom(300))
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "resealed-elsewhere":  # a cache sealed under another person's key
        path.write_bytes(data.split(b" ", 2)[0] + b" 1 " + b"0" * 64 + b"\n" + data.partition(b"\n")[2])


def share_dir(root: Path) -> Path:
    return view_path(root, fold.KINDS).parent.parent


CACHE_FILES = {  # each cache, and the caches above it that must be gone for it to be read at all
    "reputation": (lambda root: fold.summary_path(root), []),
    "view": (lambda root: view_path(root, fold.KINDS), []),
    "snapshot": (lambda root: sorted((share_dir(root) / "authors").iterdir())[0], ["reputation", "view"]),
    "verified-blobs": (lambda root: sorted((share_dir(root) / "verified").iterdir())[0],
                       ["reputation", "view", "snapshot"]),
}


@pytest.mark.slow
@pytest.mark.parametrize("which", sorted(CACHE_FILES))
@pytest.mark.parametrize("how", ["edited", "truncated", "garbage", "empty", "resealed-elsewhere"])
def test_a_damaged_cache_file_is_rebuilt_never_believed(tmp_path, which, how):
    store = make_repo(tmp_path, PEOPLE[:2])
    publish(store, PEOPLE[0], [("review", review(n, n % 3, float(n % 2))) for n in range(11)])
    publish(store, PEOPLE[1], [("run", run_record("run-9", ["a.py", "b.py"])), ("review", review(1, 1, 0.0))])
    # a signed record no manifest indexes: this ref is listed and that record verified alone, so it
    # has a snapshot and a verdict by blob id (a ref its manifests index whole needs neither)
    forged_commit(store, PEOPLE[1], seal(PEOPLE[1], "review", review(5, 2, 1.0)))
    expected = oracle(store)
    assert answer(store) == expected
    locate, above = CACHE_FILES[which]
    for name in above:
        if name == "snapshot":
            for snapshot in (share_dir(store.root) / "authors").iterdir():
                snapshot.unlink()
        else:
            CACHE_FILES[name][0](store.root).unlink()
    path = locate(store.root)
    before = path.read_bytes()
    damaged(path, how)
    assert answer(store) == expected
    assert path.read_bytes() == before  # rebuilt and sealed again (a believed file would have stayed damaged)
    assert answer(store) == expected


def test_an_edited_cache_cannot_add_a_review(tmp_path):
    """The edit an attacker wants: a cached figure moved. The sums are in the payload in the clear;
    the MAC is over the payload, so the edited file is ignored and the figures stay the refs'."""
    store = make_repo(tmp_path, PEOPLE[:1])
    publish(store, PEOPLE[0], [("review", review(1, score=0.0))])
    assert [(s.n, s.mean) for s in fold.folded_stats(store.root)[0]] == [(1, 0.0)]
    path = fold.summary_path(store.root)
    header, _, payload = path.read_bytes().partition(b"\n")
    forged = payload.replace(b'"team":1', b'"team":5').replace(b",1,1.0,0.0]", b",5,5.0,5.0]")
    assert forged != payload
    path.write_bytes(header + b"\n" + forged)
    stats, provenance = fold.folded_stats(store.root)
    assert [(s.n, s.mean) for s in stats] == [(1, 0.0)] and provenance.team == 1


def test_a_rewritten_ref_and_a_change_of_trust_rebuild_the_cache(tmp_path):
    store = make_repo(tmp_path, PEOPLE[:2])
    publish(store, PEOPLE[0], [("review", review(1, score=1.0))])
    first = store.refs(AUTHORS)[AUTHORS + PEOPLE[0].fingerprint]
    publish(store, PEOPLE[0], [("review", review(2, score=0.0))])
    publish(store, PEOPLE[1], [("review", review(3, cell=1))])
    assert fold.folded_stats(store.root)[1].team == 3
    git(store.root, "update-ref", AUTHORS + PEOPLE[0].fingerprint, first)  # rewritten: the red review gone
    assert_same(store)
    assert fold.folded_stats(store.root)[1].team == 2
    write_keys(store.root, PEOPLE[:1])  # a commit drops p1's key: its review stops counting at once
    assert_same(store)
    assert fold.folded_stats(store.root)[1].team == 1
    assert fold.folded_stats(store.root)[1].rejected == 2  # p1's review and the manifest vouching for it
    git(store.root, "update-ref", "-d", AUTHORS + PEOPLE[1].fingerprint)
    assert fold.folded_stats(store.root)[1].rejected == 0


def test_the_warm_path_reads_no_record_and_verifies_no_signature(tmp_path, monkeypatch):
    """What makes it warm: with the refs unchanged, neither a blob nor a signature is looked at."""
    store = make_repo(tmp_path, PEOPLE[:1])
    publish(store, PEOPLE[0], [("review", review(n)) for n in range(5)] + [("run", run_record("run-1", ["a.py"]))])
    cold = fold.folded_stats(store.root)
    with fresh_state():
        expected = view_to_json(build_view(store.root, store, store.refs(AUTHORS)))
    assert view_to_json(read_team(store.root, store)) == expected  # read once: the view is sealed
    from vacant.share import gitstore, signing, team

    def refuse(*args, **kwargs):
        raise AssertionError("the warm path read a record")

    monkeypatch.setattr(gitstore.GitStore, "stream_blobs", refuse)  # `read_blobs` too reads through it
    monkeypatch.setattr(signing.TeamKeys, "verify", refuse)
    monkeypatch.setattr(team, "build_view", refuse)  # the view itself comes from its sealed cache
    assert fold.folded_stats(store.root) == cold
    assert view_to_json(read_team(store.root, store)) == expected


@pytest.mark.slow
def test_the_cli_answers_the_same_warm_and_without_a_repository(tmp_path):
    """`vacant reputation` answered before the command line is imported says what the full
    command line says (the same bytes), and anything else falls through to it."""
    store = make_repo(tmp_path, PEOPLE[:1])
    publish(store, PEOPLE[0], [("review", review(n, n % 3, float(n % 2))) for n in range(7)])
    vacant = [str(Path(sys.executable).parent / "vacant")]
    full = [sys.executable, "-c", "import sys; from vacant.cli import main; sys.argv[0] = 'vacant'; main()"]
    said = {}
    for args in (["reputation", "--json"], ["reputation"], ["reputation", "--local"], ["reputation", "--json", "--json"],
                 ["reputation", "--bogus"]):
        quick = subprocess.run(vacant + args, cwd=store.root, capture_output=True, text=True, timeout=120)
        slow = subprocess.run(full + args, cwd=store.root, capture_output=True, text=True, timeout=120)
        assert (quick.returncode, quick.stdout, quick.stderr) == (slow.returncode, slow.stdout, slow.stderr)
        said[" ".join(args)] = quick
    assert '"team": 7' in said["reputation --json"].stdout and said["reputation --bogus"].returncode == 2
    outside = subprocess.run(vacant + ["reputation"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert outside.returncode == 0 and "not in a git repository" in outside.stdout


def test_after_a_sync_the_first_reputation_of_a_fresh_clone_reads_no_record(tmp_path, monkeypatch):
    """`vacant sync` verifies what it fetched: the clone's first figures come from the sealed cache."""
    from vacant.share import gitstore, signing
    from vacant.share.sync import sync

    store = make_repo(tmp_path, PEOPLE[:2])
    publish(store, PEOPLE[0], [("review", review(n, n % 3, float(n % 2))) for n in range(6)])
    publish(store, PEOPLE[1], [("review", review(9, 1, 0.0))])
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(store.root, "push", "-q", str(bare), "main", f"{AUTHORS}*:{AUTHORS}*")
    git(tmp_path, "clone", "-q", "-b", "main", str(bare), str(tmp_path / "clone"))
    clone = GitStore(tmp_path / "clone")
    sync(clone.root, "origin", signer=STRANGER)  # a clone of someone whose key is not (yet) trusted: nothing to push

    def refuse(*args, **kwargs):
        raise AssertionError("read a record after the sync had verified them")

    with monkeypatch.context() as refusing:
        refusing.setattr(gitstore.GitStore, "stream_blobs", refuse)  # `read_blobs` too reads through it
        refusing.setattr(signing.TeamKeys, "verify", refuse)
        stats, provenance = fold.folded_stats(clone.root)
    assert (provenance.team, provenance.rejected) == (7, 0)
    assert answer(clone) == oracle(clone)


def test_an_interrupt_stops_a_reputation_answered_before_the_command_line(tmp_path):
    """SIGINT while the quick answer waits on git: exit 130, the command line's sentence, the git
    child killed, within a second (a slow git: a real script on PATH that sleeps, then runs git)."""
    import shutil
    import signal
    import time

    store = make_repo(tmp_path, PEOPLE[:1])
    slow = tmp_path / "slow-bin"
    slow.mkdir()
    marker = tmp_path / "git-started"
    (slow / "git").write_text(f"#!/bin/sh\ntouch {marker}\nsleep 30\nexec {shutil.which('git')} \"$@\"\n")
    (slow / "git").chmod(0o755)
    env = {**os.environ, "PATH": f"{slow}:{os.environ['PATH']}"}
    proc = subprocess.Popen([str(Path(sys.executable).parent / "vacant"), "reputation", "--json"], cwd=store.root,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert time.monotonic() < deadline and proc.poll() is None, "git was never started"
        time.sleep(0.02)
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert time.monotonic() - sent < 2.0
    assert proc.returncode == 130 and out == ""
    assert err.startswith("vacant: stopped by SIGINT;") and "Traceback" not in err
