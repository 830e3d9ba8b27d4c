"""Manifest indexes (vacant/share/index.py): a team view counted from the authors' indexes is the
view the per-record path gives (every record read and verified alone, no index believed), on
generated histories of real git refs: publications, older manifests without an index, diverged
machines merged by a third party, forged and stray entries, dropped and edited manifests,
strangers. A ref whose manifests index it whole is counted without listing it."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from teamkit import GIT_ENV, git

from vacant.core.keys import create_user_key
from vacant.share import fold, index, team
from vacant.share.gitstore import AUTHORS, GitStore
from vacant.share.publish import add_entries, entry_path, seal
from vacant.share.records import (
    Cell,
    Envelope,
    ManifestRecord,
    ReadCoverage,
    ReviewRecord,
    RunRecord,
    StepEntry,
    blob_of,
    signed_bytes,
    to_json,
)
from vacant.share.signing import Signer, TeamKeys, parse_team_keys
from vacant.share.sync import union_commit
from vacant.share.team import build_view, view_to_json
from vacant.share.teamkey import TEAM_KEYS_FILE


def signer(seed: int) -> Signer:
    key = Ed25519PrivateKey.from_private_bytes(seed.to_bytes(32, "big"))
    return Signer(key, key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw))


PEOPLE = [signer(700 + n) for n in range(3)]
STRANGER = signer(799)
CELLS = [Cell("claude-code", "main", f"model-{m}", "fam") for m in range(2)] + [Cell("codex", 'o"dd\\é', "m", "f")]


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    for name, value in GIT_ENV.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    monkeypatch.setenv("VACANT_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("VACANT_STATE_DIR", str(tmp_path / "state"))
    create_user_key()


def make_repo(base: Path) -> GitStore:
    repo = base / "repo"
    git(base, "init", "-q", "-b", "main", str(repo))
    (repo / TEAM_KEYS_FILE).write_text("".join(p.team_line(f"p{n}") + "\n" for n, p in enumerate(PEOPLE)))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "keys")
    return GitStore(repo)


def records(tag: str, reviews: int, runs: int) -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = [
        ("review", ReviewRecord(f"run-{tag}-{n % 2}", 1 + n, CELLS[n % 3], float(n % 2), float(1 + n % 3),
                                None if n % 2 else f"f{tag}{n}")) for n in range(reviews)]
    for n in range(runs):
        steps = [StepEntry(1, "Edit", 0, "ok", [f"src/{tag}/{n}.py", "shared.py"])]
        out.append(("run", RunRecord(f"run-{tag}-{n}", "claude-code", None, 1.8e9 + n, 10 + n, CELLS[:1], steps, 0,
                                     ReadCoverage("none", "no reads"), [], None, [])))
    return out


def blobs_of(who: Signer, items: list[tuple[str, object]]) -> dict[str, bytes]:
    blobs = {}
    for kind, body in items:
        blob = seal(who, kind, body)
        blobs[entry_path(kind, blob)] = blob
    return blobs


def ref_of(who: Signer) -> str:
    return AUTHORS + who.fingerprint


def rewrite(store: GitStore, who: Signer, change) -> None:
    """Another commit on who's ref whose tree is `change(files)` (not through vacant)."""
    ref = ref_of(who)
    old = store.refs(ref).get(ref)
    files = change({e.path: e.oid for e in store.list_tree(old)} if old else {})
    new = store.commit(store.write_tree(files), [old] if old else [], "by hand")
    git(store.root, "update-ref", ref, new)


def legacy(store: GitStore, who: Signer, items: list[tuple[str, object]]) -> None:
    """A publication as an older vacant made it: a format 1 manifest, naming the records, no index."""
    blobs = blobs_of(who, items)
    data = to_json(ManifestRecord(sorted(p.replace("/", "")[-64:] for p in blobs)), 1)
    signature = who.sign(signed_bytes("manifest", who.fingerprint, data, 1))
    manifest = blob_of(Envelope(1, "manifest", who.fingerprint, data, signature))
    blobs[entry_path("manifest", manifest)] = manifest
    rewrite(store, who, lambda files: {**files, **dict(zip(blobs, store.write_blobs(list(blobs.values()))))})


def diverge_and_merge(store: GitStore, who: Signer, tag: str) -> None:
    """Two machines of `who` publish from the same commit; someone else merges them (no new manifest)."""
    ref = ref_of(who)
    base = store.refs(ref).get(ref)
    add_entries(store, who, blobs_of(who, records(tag + "x", 2, 1)), "x")
    mine = store.refs(ref)[ref]
    git(store.root, "update-ref", ref, base) if base else git(store.root, "update-ref", "-d", ref)
    add_entries(store, who, blobs_of(who, records(tag + "y", 1, 1)), "y")
    theirs = store.refs(ref)[ref]
    git(store.root, "update-ref", ref, union_commit(store, mine, theirs))


def forge(store: GitStore, who: Signer, tag: str) -> None:
    """A review under who's name with a signature that does not verify, and no manifest."""
    blob = seal(who, "review", ReviewRecord(f"run-{tag}", 9, CELLS[0], 0.0, 5.0, "forged"))
    blob = blob.replace(b'"weight":5.0', b'"weight":6.0')
    rewrite(store, who, lambda files: {**files, entry_path("review", blob): store.write_blobs([blob])[0]})


def drop_manifest(store: GitStore, who: Signer, _tag: str) -> None:
    rewrite(store, who, lambda files: {p: o for p, o in files.items()
                                       if p != min((p for p in files if p.startswith("manifests/")), default="")})


def edit_manifest(store: GitStore, who: Signer, _tag: str) -> None:
    def change(files):
        names = sorted(p for p in files if p.startswith("manifests/"))
        if names:
            data = store.read_blobs([files[names[-1]]])[files[names[-1]]]
            files[names[-1]] = store.write_blobs([data.replace(b'"after":[', b'"after":[ ', 1) + b" "])[0]
        return files
    rewrite(store, who, change)


def stray(store: GitStore, who: Signer, tag: str) -> None:
    rewrite(store, who, lambda files: {**files, f"notes/{tag}.txt": store.write_blobs([b"hello\n"])[0]})


def publish(store: GitStore, who: Signer, tag: str, reviews: int = 2, runs: int = 1) -> None:
    add_entries(store, who, blobs_of(who, records(tag, reviews, runs)), "t")


ACTIONS = {"publish": publish, "legacy": lambda s, w, t: legacy(s, w, records(t, 2, 1)),
           "merge": diverge_and_merge, "forge": forge, "drop": drop_manifest, "edit": edit_manifest, "stray": stray}


@contextlib.contextmanager
def per_record():
    """The oracle's path: no index is believed, every record is read and verified alone."""
    saved = index.whole_ref, index.indexed
    index.whole_ref, index.indexed = (lambda top, manifests, keys=None: None), (lambda body, keys=None: [])
    try:
        yield
    finally:
        index.whole_ref, index.indexed = saved


def normal(view_json: dict) -> dict:
    """A view's JSON with its lists as sets: the order records are met in is not part of the view."""
    return {key: sorted(json.dumps(item, sort_keys=True) for item in value) if isinstance(value, list) else value
            for key, value in view_json.items()}


def fresh_view(store: GitStore, tmp: Path, name: str, keep: bool = True):
    os.environ["VACANT_STATE_DIR"] = str(tmp / name)  # nothing cached: read from the refs
    return build_view(store.root, store, store.refs(AUTHORS), keep=keep)


history = st.lists(st.tuples(st.sampled_from(sorted(ACTIONS)), st.integers(0, 2)), min_size=1, max_size=7)
DAMAGE_THEN_PUBLISH = [[(action, 0), ("publish", 0)] for action in sorted(ACTIONS)]


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=history)
@example(steps=DAMAGE_THEN_PUBLISH[0])  # each way a ref can go wrong, then its author publishes on it
@example(steps=DAMAGE_THEN_PUBLISH[1])
@example(steps=DAMAGE_THEN_PUBLISH[2])
@example(steps=DAMAGE_THEN_PUBLISH[3])
@example(steps=DAMAGE_THEN_PUBLISH[4])
@example(steps=DAMAGE_THEN_PUBLISH[5])
@example(steps=DAMAGE_THEN_PUBLISH[6])
def test_a_view_from_the_indexes_is_the_per_record_view(tmp_path_factory, steps):
    tmp = tmp_path_factory.mktemp("h")
    store = make_repo(tmp)
    people = [PEOPLE[0], PEOPLE[1], STRANGER]
    for number, (action, who) in enumerate(steps):
        ACTIONS[action](store, people[who], f"s{number}")
    oracle = _oracle(store, tmp)
    assert normal(view_to_json(fresh_view(store, tmp, "indexed"))) == normal(view_to_json(oracle))
    assert summary_of(fresh_view(store, tmp, "light", keep=False)) == summary_of(oracle)  # the figures' own build


def summary_of(view) -> dict:
    summary = fold.summarize(view).to_json()
    return {**summary, "authors": sorted(json.dumps(a, sort_keys=True) for a in summary["authors"])}


def _oracle(store: GitStore, tmp: Path):
    with per_record():
        return fresh_view(store, tmp, "oracle")


def test_a_ref_its_manifests_index_whole_is_never_listed(tmp_path, monkeypatch):
    """Publications, an older vacant's, a third party's merge of two machines: each author's next
    publication indexes what its chain lacked, and then no ref is listed and no record read."""
    store = make_repo(tmp_path)
    legacy(store, PEOPLE[0], records("old", 3, 1))
    publish(store, PEOPLE[0], "a")
    diverge_and_merge(store, PEOPLE[1], "m")
    publish(store, PEOPLE[1], "b")
    publish(store, PEOPLE[2], "c", reviews=0, runs=2)
    publish(store, PEOPLE[2], "d", reviews=3, runs=0)
    expected = normal(view_to_json(_oracle(store, tmp_path)))
    read: list[str] = []
    real = GitStore.stream_blobs

    def only_manifests(self, oids):  # `read_blobs` too reads through it
        for oid, data in real(self, oids):
            read.append(json.loads(data)["kind"])
            yield oid, data

    monkeypatch.setattr(GitStore, "list_tree", lambda *a: pytest.fail("a ref was listed"))
    monkeypatch.setattr(GitStore, "stream_blobs", only_manifests)
    view = fresh_view(store, tmp_path, "fast")
    assert normal(view_to_json(view)) == expected and len(view.reviews) == 3 + 2 + 2 + 1 + 2 + 3
    assert set(read) == {"manifest"}


def test_a_third_partys_merge_is_listed_and_counted_from_the_indexes(tmp_path, monkeypatch):
    """No manifest claims a union nobody signed: the ref is listed, but no record is read."""
    store = make_repo(tmp_path)
    diverge_and_merge(store, PEOPLE[0], "m")
    expected = normal(view_to_json(_oracle(store, tmp_path)))
    listed = []
    real = GitStore.list_tree
    monkeypatch.setattr(GitStore, "list_tree", lambda self, commit: listed.append(commit) or real(self, commit))
    monkeypatch.setattr(team, "_verify", lambda *a, **k: pytest.fail("a record was verified alone"))
    assert normal(view_to_json(fresh_view(store, tmp_path, "fast"))) == expected
    assert len(listed) == 1



# -- manifests checked with their signatures on a second thread (team.check_manifests) --------------

DAMAGE = ("intact", "foreign signature", "edited", "garbage")


def _blob(who: int, tag: str, manifest: bool, how: str) -> bytes:
    """A record or manifest blob of `who` (3: a stranger to the team keys), made wrong in one way:
    signed by someone else, its bytes edited after signing, or cut short."""
    signer = (PEOPLE + [STRANGER])[who]
    items = records(tag, 2, 1)
    if manifest:
        rows = [index.Row(kind, f"{n:064x}", f"{n:040x}", team.shape_of(seal(signer, kind, body))[5])
                for n, (kind, body) in enumerate(items)]
        blob = seal(signer, "manifest", index.manifest_body(rows, [], None))
    else:
        blob = seal(signer, *items[0])
    if how == "foreign signature":
        envelope = json.loads(blob)
        sig = STRANGER.sign(signed_bytes(envelope["kind"], envelope["author"], envelope["body"], envelope["v"]))
        return blob_of(Envelope(envelope["v"], envelope["kind"], envelope["author"], envelope["body"], sig))
    if how == "edited":
        return blob.replace(b'"run-', b'"RUN-', 1)
    return blob[: len(blob) // 2] if how == "garbage" else blob


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.booleans(), st.sampled_from(DAMAGE)), max_size=8))
def test_manifests_checked_on_a_second_thread_are_checked_as_one_blob_alone(items):
    """The oracle: `check_blob` of each blob in turn, its signature verified before it returns."""
    keys = team_keys_of(PEOPLE)
    blobs = {f"{n:040x}": _blob(who, f"t{n}", manifest, how) for n, (who, manifest, how) in enumerate(items)}
    expected = {}
    for oid, data in blobs.items():
        sha = hashlib.sha256(data).hexdigest()
        expected[oid] = (sha, team.check_blob(keys, data, {}, oid, None, sha))
    assert team.check_manifests(keys, blobs.items()) == expected


def test_a_signature_check_that_raises_raises_on_the_callers_thread(monkeypatch):
    def broken(self, author, message, signature):
        raise RuntimeError("no crypto today")
    monkeypatch.setattr(TeamKeys, "verify", broken)
    with pytest.raises(RuntimeError, match="no crypto today"):
        team.check_manifests(team_keys_of(PEOPLE), [("0" * 40, _blob(0, "x", True, "intact"))])


def test_a_manifest_whose_signature_fails_is_rejected_and_vouches_for_nothing(tmp_path):
    """Its name and shape right, its signature someone else's: rejected as such; the records it
    indexes count only by their own signatures."""
    store = make_repo(tmp_path)
    publish(store, PEOPLE[0], "a")

    def resign(files):
        path = next(p for p in files if p.startswith("manifests/"))
        data = store.read_blobs([files[path]])[files[path]]
        envelope = json.loads(data)
        sig = STRANGER.sign(signed_bytes("manifest", envelope["author"], envelope["body"], envelope["v"]))
        forged = blob_of(Envelope(envelope["v"], "manifest", envelope["author"], envelope["body"], sig))
        return {**{p: o for p, o in files.items() if p != path}, entry_path("manifest", forged): store.write_blobs([forged])[0]}
    rewrite(store, PEOPLE[0], resign)
    view = fresh_view(store, tmp_path, "resigned")
    assert [r.reason for r in view.rejected] == [f"bad signature: edited after signing, or not signed by {PEOPLE[0].fingerprint}"]
    assert len(view.reviews) == 2 and len(view.runs) == 1  # each verified alone


def team_keys_of(people: list[Signer]) -> TeamKeys:
    return parse_team_keys("".join(p.team_line(f"p{n}") + "\n" for n, p in enumerate(people)))


# -- the figures' own reading of an index (`keys`): what each review says, no run made --------------

cells = st.sampled_from(CELLS).map(to_json)
review_rows = st.builds(lambda n, cell, score, weight, finding: index.Row(
    "review", f"{n:064x}", f"{n:040x}", {"cell": cell, "run": f"r{n % 3}", "seq": 1 + n % 4, "score": score,
                                         "weight": weight, "finding": finding}),
    st.integers(0, 10**6), cells, st.sampled_from([0.0, 1.0, 0.5]), st.sampled_from([1.0, 2.5]),
    st.none() | st.just("f1"))
run_rows = st.builds(lambda n, paths: index.Row(
    "run", f"{n:064x}", f"{n:040x}", {"run": f"r{n}", "through_seq": n, "lines": False, "paths": paths}),
    st.integers(0, 10**6), st.none() | st.lists(st.sampled_from(["a.py", "b/c.py", "d"]), unique=True).map(sorted))
BREAKS = ("none", "short column", "path past the list", "cell past the list", "count off")


def _broken(body: dict, how: str, where: int) -> dict:
    """An index's lists made inconsistent in one way (a signed manifest may say anything)."""
    runs, reviews = body["runs"], body["reviews"]
    if how == "short column":
        table = (runs, reviews)[where % 2]
        column = sorted(k for k in table if k != "paths")[where % 6]
        table[column] = table[column][:-1]
    elif how == "path past the list" and runs["paths"]:
        runs["paths"][where % len(runs["paths"])] = len(body["paths"])
    elif how == "cell past the list" and reviews["cell"]:
        reviews["cell"][where % len(reviews["cell"])] = len(body["cells"])
    elif how == "count off" and any(n is not None for n in runs["path_counts"]):
        at = next(n for n, c in enumerate(runs["path_counts"]) if c is not None)
        runs["path_counts"][at] += 1
    return body


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(review_rows | run_rows, max_size=12, unique_by=lambda r: r.name),
       how=st.sampled_from(BREAKS), where=st.integers(0, 100))
def test_an_index_read_for_the_figures_is_its_reviews_keys_and_breaks_as_the_rows_do(rows, how, where):
    """The oracle: the rows `indexed` makes of the same body, each review's `team.review_key`."""
    body = _broken(index.manifest_body(rows, [], None), how, where)
    full = index.indexed(json.loads(json.dumps(body)))
    keys: list[tuple] = []
    light = index.indexed(body, keys)
    if full is None:
        assert light is None
    else:
        assert light == [] and keys == [team.review_key(row.body) for row in full if row.kind == "review"]


@pytest.mark.parametrize("object_format", ["sha1", "sha256"])
def test_a_ref_its_indexes_cover_is_counted_from_them_in_either_object_format(tmp_path, monkeypatch, object_format):
    """The trees' ids are read at the width of the refs' own ids (no git call asks the format)."""
    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", "-b", "main", f"--object-format={object_format}", str(repo))
    (repo / TEAM_KEYS_FILE).write_text("".join(p.team_line(f"p{n}") + "\n" for n, p in enumerate(PEOPLE)))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "keys")
    store = GitStore(repo)
    publish(store, PEOPLE[0], "a")
    publish(store, PEOPLE[1], "b")
    expected = normal(view_to_json(_oracle(store, tmp_path)))
    monkeypatch.setattr(GitStore, "list_tree", lambda *a: pytest.fail("a ref was listed"))
    assert normal(view_to_json(fresh_view(store, tmp_path, "fast"))) == expected


def test_the_figures_list_the_refs_once_when_they_build(tmp_path, monkeypatch):
    """The view is built from the refs its key was made of: one `for-each-ref`, not one per step."""
    store = make_repo(tmp_path)
    publish(store, PEOPLE[0], "a")
    listed = []
    real = GitStore.refs
    monkeypatch.setattr(GitStore, "refs", lambda self, prefix: listed.append(prefix) or real(self, prefix))
    summary = fold.team_summary(store.root, store)
    assert summary.team == 2 and listed == [AUTHORS]


@settings(max_examples=100, deadline=None)
@given(snaps=st.lists(st.tuples(st.sampled_from(["a" * 32, "b" * 32]),
                                st.lists(st.sampled_from([("r1", 1, ("p", "m", "o", "t"), 1.0, 1.0, None),
                                                          ("r1", 2, ("p", "m", "o", "t"), 0.0, 1.0, "f"),
                                                          ("r2", 1, ("q", "m", "o", "t"), 1.0, 2.0, None)]), max_size=6)),
                      max_size=5))
def test_reviews_counted_by_what_they_say_count_once_for_whoever_said_it_first(snaps):
    """The oracle: each key in turn, counted for its author when no one's was counted before (keys
    repeat within one author's indexes too, after a merge)."""
    view = team.TeamView(TeamKeys({}, []))
    reviews: dict = {}
    per_author: dict = {}
    for author, keys in snaps:
        team._apply_snapshot(view, author, {"keys": keys, "counted": [], "rejected": []}, AUTHORS)
        for key in keys:
            if key not in reviews:
                reviews[key] = author
                per_author[author] = per_author.get(author, 0) + 1
    assert [(key, counted.author) for key, counted in view.reviews.items()] == list(reviews.items())
    assert view.per_author == per_author
