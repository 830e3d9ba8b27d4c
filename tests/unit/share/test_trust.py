"""What a remote can do to a clone through `vacant sync`: tampered records and unknown keys are
rejected, reported and kept out of every figure; nothing is written outside refs/vacant/."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from teamkit import GIT_ENV, Team, git

from vacant.share import signing
from vacant.share.fold import folded_stats
from vacant.share.gitstore import GitStore
from vacant.share.publish import entry_path, seal
from vacant.share.records import Envelope, ManifestRecord, blob_of, signed_bytes
from vacant.share.team import read_team, run_records

AUTHORS = "refs/vacant/authors/"


def fp_of(team: Team, person) -> str:
    team.use(person)
    return signing.own_signer().fingerprint


def attacker_clone(team: Team):
    """A plain clone holding the remote's vacant refs, for rewriting them with git itself."""
    path = team.base / "attacker"
    git(team.base, "clone", "-q", str(team.bare), str(path))
    git(path, "fetch", "-q", "origin", "+refs/vacant/*:refs/vacant/*")
    return path, GitStore(path)


def rewrite(store: GitStore, ref: str, change) -> str:
    """Commit on top of `ref` a tree `change(files)` returns (files: path -> blob id); force-free locally."""
    old = git(store.root, "rev-parse", ref).strip()
    files = {e.path: e.oid for e in store.list_tree(old)}
    new = store.commit(store.write_tree(change(files)), [old], "not vacant")
    git(store.root, "update-ref", ref, new)
    return new


def reviews_in(store: GitStore, files: dict[str, str]) -> dict[str, bytes]:
    paths = [p for p in files if p.startswith("reviews/")]
    blobs = store.read_blobs([files[p] for p in paths])
    return {p: blobs[files[p]] for p in paths}


def status(team: Team, person) -> tuple[int, dict]:
    proc = team.cli(person, "sync", "--status", "--json")
    return proc.returncode, json.loads(proc.stdout)


@pytest.mark.slow
def test_tampered_records_are_rejected_reported_and_healed(team):
    a, b, c = team.person("a"), team.person("b"), team.person("c")
    team.seed([a, b, c])
    for person in (a, b, c):
        team.clone(person)
    team.record(a, "run-a", "bad\n")
    team.record(b, "run-b", "fine\n")
    team.sync(a), team.sync(b)
    fa, fb = fp_of(team, a), fp_of(team, b)
    path, store = attacker_clone(team)

    def edit_in_place(files):  # b's green review made red, under its old name
        (name, blob), = reviews_in(store, files).items()
        files[name] = store.write_blobs([blob.replace(b'"score":1.0', b'"score":0.0')])[0]
        return files

    def edit_and_rename(files):  # a's red review made green, renamed to its new hash, original gone
        (name, blob), = reviews_in(store, files).items()
        forged = blob.replace(b'"score":0.0', b'"score":1.0')
        del files[name]
        files[entry_path("review", forged)] = store.write_blobs([forged])[0]
        return files

    rewrite(store, AUTHORS + fb, edit_in_place)
    rewrite(store, AUTHORS + fa, edit_and_rename)
    git(path, "push", "-q", "--force", "origin", f"{AUTHORS}{fa}:{AUTHORS}{fa}", f"{AUTHORS}{fb}:{AUTHORS}{fb}")

    team.sync(c)  # c never saw the originals: it holds only the forgeries
    team.use(c)
    stats, provenance = folded_stats(c.ws)
    assert stats == [] and provenance.counted == 0 and provenance.rejected == 2
    code, report = status(team, c)
    reasons = sorted((r["ref"][len(AUTHORS):], r["reason"].split(":")[0]) for r in report["rejected"])
    assert code == 1 and reasons == sorted([(fb, "content does not match its name (edited after it was written)"),
                                            (fa, "bad signature")])
    assert "rejected: 2 record(s)" in team.cli(c, "sync", "--status").stdout

    team.sync(a), team.sync(b), team.sync(c)  # the authors still hold the originals: the union brings them back
    team.use(c)
    stats, provenance = folded_stats(c.ws)
    assert provenance.counted == 2 and sum(s.mean * s.weight for s in stats) == 1.0
    code, report = status(team, c)
    assert [r["reason"].split(":")[0] for r in report["rejected"]] == ["bad signature"]  # the renamed forgery stays out


@pytest.mark.slow
def test_an_unknown_key_counts_only_once_a_commit_trusts_it(team):
    a, c, mallory = team.person("a"), team.person("c"), team.person("mallory")
    team.seed([a, c])
    for person in (a, c, mallory):
        team.clone(person)
    team.record(mallory, "run-m", "fine\n")
    team.sync(mallory)
    team.sync(c)
    team.use(c)
    assert folded_stats(c.ws)[1].counted == 0
    code, report = status(team, c)
    fm = fp_of(team, mallory)
    assert code == 1 and {r["reason"] for r in report["rejected"]} == {f"unknown key {fm} (not in .vacant-team-keys at HEAD)"}
    assert [x["trusted"] for x in report["authors"] if x["author"] == fm] == [False]
    keys = c.ws / signing.TEAM_KEYS_FILE
    keys.write_text(keys.read_text() + team.key_line(mallory) + "\n")
    team.use(c)
    assert folded_stats(c.ws)[1].counted == 0  # an uncommitted edit grants nothing
    git(c.ws, "commit", "-q", "-am", "trust mallory")
    assert folded_stats(c.ws)[1].counted == 1
    assert status(team, c)[1]["rejected"] == []


@pytest.mark.slow
def test_a_remote_cannot_make_vacant_write_outside_its_refs(team):
    a, c = team.person("a"), team.person("c")
    team.seed([a, c])
    team.clone(a), team.clone(c)
    team.record(a, "run-a", "fine\n")
    team.sync(a)
    fa = fp_of(team, a)
    path, store = attacker_clone(team)
    team.use(a)
    signer = signing.own_signer()
    body = {"run": "../../../.git/hooks/pre-commit", "seq": 1, "score": 1.0, "weight": 1.0, "finding": None,
            "cell": {"platform": "p", "agent_definition": "d", "model": "m", "task_family": "t"}}
    sneaky = blob_of(Envelope(1, "review", fa, body, signer.sign(signed_bytes("review", fa, body, 1))))

    def plant(files):
        files[entry_path("review", sneaky)] = store.write_blobs([sneaky])[0]
        files["notes.txt"] = store.write_blobs([b"not a record\n"])[0]
        return files

    rewrite(store, AUTHORS + fa, plant)
    some = git(path, "rev-parse", "HEAD").strip()
    for ref in (f"{AUTHORS}not-a-key", f"{AUTHORS}{'e' * 32}x/deeper", "refs/vacant/elsewhere", "refs/heads/evil"):
        git(path, "update-ref", ref, some)
    git(path, "push", "-q", "--force", "origin", "refs/vacant/*:refs/vacant/*", "refs/heads/evil:refs/heads/evil")
    outside = ["refs/heads", "refs/tags", "refs/remotes", "refs/notes"]
    before = git(c.ws, "for-each-ref", "--format=%(refname) %(objectname)", *outside)
    team.sync(c)
    assert git(c.ws, "for-each-ref", "--format=%(refname) %(objectname)", *outside) == before
    written = git(c.ws, "for-each-ref", "--format=%(refname)", "refs/").split()
    assert all(r.startswith(("refs/vacant/authors/", "refs/vacant/remotes/origin/authors/"))
               or r in before for r in written)
    code, report = status(team, c)
    reasons = sorted(r["reason"].split(":")[0] for r in report["rejected"])
    assert code == 1 and reasons == ["malformed", "unexpected entry"]
    assert sorted(report["ignored_refs"]) == [f"{AUTHORS}{'e' * 32}x/deeper", f"{AUTHORS}not-a-key"]
    assert git(team.bare, "for-each-ref", "--format=%(refname)", "refs/vacant/elsewhere").strip()  # there, unread
    team.use(c)
    assert folded_stats(c.ws)[1].counted == 1  # a's real review, nothing else


def test_a_run_record_holds_no_contents_and_names_its_commit(team):
    a = team.person("a")
    team.seed([a])
    team.clone(a)
    head = git(a.ws, "rev-parse", "HEAD").strip()
    team.record(a, "run-a", "fine but SECRET-CONTENT-4711\n")
    team.sync(a)
    store = GitStore(a.ws)
    files = {e.path: e.oid for e in store.list_tree(f"{AUTHORS}{fp_of(team, a)}")}
    blobs = store.read_blobs(list(files.values()))
    runs = [json.loads(blobs[o]) for p, o in files.items() if p.startswith("runs/")]
    assert len(runs) == 1 and runs[0]["body"]["commit"] == head
    assert [s["changed"] for s in runs[0]["body"]["steps"]] == [["out.txt"]]
    team.use(a)
    (shown,) = run_records(store, read_team(a.ws, store))
    assert shown.run == "run-a" and shown.commit == head and shown.cells[0].task_family == "share"
    text = b"".join(blobs.values())
    assert b"SECRET-CONTENT" not in text and b"tool_input" not in text and b"content" not in text


@pytest.mark.slow
def test_cli_key_json_and_status_without_a_sync(team):
    a = team.person("a")
    team.seed([])
    team.clone(a)
    out = json.loads(team.cli(a, "sync", "--key", "--name", "ann", "--json").stdout)
    assert out["line"].startswith("ed25519 ") and out["line"].endswith(" ann") and len(out["fingerprint"]) == 32
    code, report = status(team, a)
    assert code == 0 and report["own_key"] == out["fingerprint"] and not report["own_key_trusted"]
    assert report["last_sync"] is None
    proc = team.cli(a, "sync", "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["pushed"] == []  # no runs: nothing to push
    assert json.loads(proc.stdout)["trusted"] is False
    assert "warning: your key is not in .vacant-team-keys" in team.cli(a, "sync").stdout
    outside = subprocess.run(["git", "init", "-q", str(team.base / "plain")], env={**os.environ, **GIT_ENV})
    assert outside.returncode == 0
    proc = team.cli(a, "sync", "--status", cwd=team.base)
    assert proc.returncode == 3 and "not a git repository" in proc.stderr


@pytest.mark.slow
def test_a_manifest_vouches_only_for_its_own_authors_records(team):
    """a (trusted) lists a forged 'b' record in a's own manifest: neither a's ref nor, later, b's
    ref counts it; the verification cache never carries a's word over to b."""
    a, b, c = team.person("a"), team.person("b"), team.person("c")
    team.seed([a, b, c])
    for person in (a, b, c):
        team.clone(person)
    team.record(a, "run-a", "fine\n")
    team.record(b, "run-b", "fine\n")
    team.sync(a), team.sync(b)
    fa, fb = fp_of(team, a), fp_of(team, b)
    team.use(a)
    signer = signing.own_signer()
    body = {"run": "run-b", "seq": 99, "score": 0.0, "weight": 1000.0, "finding": "forged",
            "cell": {"platform": "claude-code", "agent_definition": "main", "model": "unknown", "task_family": "share"}}
    forged = blob_of(Envelope(1, "review", fb, body, "A" * 86))
    name = entry_path("review", forged)
    vouch = seal(signer, "manifest", ManifestRecord([name.replace("/", "")[-64:]]))
    path, store = attacker_clone(team)

    def plant(files):
        files[name] = store.write_blobs([forged])[0]
        files[entry_path("manifest", vouch)] = store.write_blobs([vouch])[0]
        return files

    rewrite(store, AUTHORS + fa, plant)
    git(path, "push", "-q", "--force", "origin", f"{AUTHORS}{fa}:{AUTHORS}{fa}")
    team.sync(c)
    team.use(c)
    assert folded_stats(c.ws)[1].counted == 2  # a's and b's real reviews only
    rewrite(store, AUTHORS + fb, lambda files: {**files, name: store.write_blobs([forged])[0]})
    git(path, "push", "-q", "--force", "origin", f"{AUTHORS}{fb}:{AUTHORS}{fb}")
    team.sync(c)
    team.use(c)
    stats, provenance = folded_stats(c.ws)
    assert provenance.counted == 2 and stats[0].mean == 1.0
    reasons = {(r["ref"][len(AUTHORS):], r["reason"].split(":")[0].split(",")[0]) for r in status(team, c)[1]["rejected"]}
    assert reasons == {(fa, "bad signature"), (fb, "bad signature")}  # a's manifest stood in for nobody
