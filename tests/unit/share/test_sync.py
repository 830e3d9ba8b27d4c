"""`vacant sync` between clones of one bare repository: the union exactly once, in any order,
under concurrent pushes, through `git gc` and a fresh clone.

The oracle is independent of vacant's share code: the `review` lines of every recorded run's
events.jsonl, read as plain JSON, and the rows of each person's own reputation table."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from teamkit import BIN, Person, Team, git

from vacant.core.locations import state_dir
from vacant.share import signing, sync
from vacant.share.fold import folded_stats
from vacant.share.gitstore import GitStore


def logged_reviews(*people: Person) -> Counter:
    """(run, seq, score) of every review event in the people's step logs, read without vacant."""
    found: Counter = Counter()
    for person in people:
        for log in sorted((state_dir(person.ws) / "runs").glob("*/events.jsonl")):
            for line in log.read_text().splitlines():
                record = json.loads(line)
                if record["type"] == "review":
                    found[(log.parent.name, record["seq"], float(record["score"]))] += 1
    return found


def table_rows(person: Person) -> int:
    path = person.data / "reputation.sqlite"
    if not path.exists():
        return 0
    with sqlite3.connect(path) as connection:
        return connection.execute("SELECT COUNT(*) FROM reviews").fetchone()[0]


def team_view(team: Team, person: Person):
    team.use(person)
    return folded_stats(person.ws)


def assert_sees_exactly(team: Team, person: Person, expected: Counter) -> None:
    stats, provenance = team_view(team, person)
    assert sum(s.n for s in stats) == sum(expected.values()) == provenance.counted
    good = sum(score for (_, _, score), n in expected.items() for _ in range(n))
    assert abs(sum(s.mean * s.weight for s in stats) - good) < 1e-9
    assert provenance.rejected == 0


def vacant_refs(ws: Path) -> dict[str, str]:
    out = git(ws, "for-each-ref", "--format=%(refname) %(objectname)", "refs/vacant/authors/")
    return dict(line.split(" ") for line in out.splitlines())


def reset_sharing(team: Team, people: list[Person]) -> None:
    """A new empty remote and no shared state, keeping every recorded run and reputation table."""
    shutil.rmtree(team.bare)
    git(team.base, "init", "-q", "--bare", str(team.bare))
    seeded = team.base / "seed"
    git(seeded, "push", "-q", "origin", "HEAD:refs/heads/main")
    for person in people:
        for ref in vacant_refs(person.ws):
            git(person.ws, "update-ref", "-d", ref)
        for ref in git(person.ws, "for-each-ref", "--format=%(refname)", "refs/vacant/").split():
            git(person.ws, "update-ref", "-d", ref)
        shutil.rmtree(state_dir(person.ws) / "share", ignore_errors=True)


def recorded_team(team: Team) -> dict[str, Person]:
    a, b, c = team.person("a"), team.person("b"), team.person("c")
    a2 = team.person("a2", key_of=a)  # a's second machine: the same key, its own clone and table
    team.seed([a, b, c])
    for person in (a, b, c, a2):
        team.clone(person)
    team.record(a, "run-a1", "bad\n")
    team.record(a, "run-a2", "fine\n")
    team.record(b, "run-b1", "fine\n")
    team.record(b, "run-b2", "bad\n")
    team.record(a2, "run-a3", "fine\n")
    return {"a": a, "b": b, "c": c, "a2": a2}


@pytest.mark.slow
def test_the_oracle_is_not_empty(team):
    people = recorded_team(team)
    expected = logged_reviews(people["a"], people["b"], people["a2"])
    assert sorted(score for (_, _, score) in expected) == [0.0, 0.0, 1.0, 1.0, 1.0]
    assert sum(table_rows(p) for p in people.values()) == sum(expected.values())


_RECORDED: dict[int, dict[str, Person]] = {}


@pytest.mark.slow
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(order=st.lists(st.sampled_from(["a", "b", "c", "a2"]), min_size=1, max_size=7))
def test_any_sync_order_gives_the_third_clone_the_union_exactly_once(team, order):
    # the runs are recorded once; each example starts from an empty remote and no shared state
    if id(team) in _RECORDED:
        people = _RECORDED[id(team)]
        reset_sharing(team, list(people.values()))
    else:
        people = _RECORDED[id(team)] = recorded_team(team)
    expected = logged_reviews(people["a"], people["b"], people["a2"])
    for name in order:
        team.sync(people[name])
    for name in ("a", "b", "a2", "c"):  # everyone with runs has synced at least once, then c
        if name not in order or name == "c":
            team.sync(people[name])
    assert_sees_exactly(team, people["c"], expected)
    for name in order:  # syncing again changes no figure anywhere
        team.sync(people[name])
    team.sync(people["c"])
    assert_sees_exactly(team, people["c"], expected)
    # a's own view folds its table and the team's: what both hold counts once
    team.sync(people["a"])
    _, provenance = team_view(team, people["a"])
    assert provenance.counted == sum(expected.values())
    assert provenance.overlap == provenance.local == table_rows(people["a"]) == 2


@pytest.mark.slow
def test_concurrent_pushes_converge(team):
    people = recorded_team(team)
    expected = logged_reviews(people["a"], people["b"], people["a2"])
    for round_number in range(2):
        procs = [subprocess.Popen([str(BIN / "vacant"), "sync", "--json"],
                                  cwd=people[name].ws, env={**os.environ, **people[name].env()},
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for name in ("a", "a2", "b")]
        results = [proc.communicate(timeout=300) for proc in procs]
        assert all(proc.returncode == 0 for proc in procs), [err for _, err in results]
    team.sync(people["c"])
    assert_sees_exactly(team, people["c"], expected)
    for name in ("a", "a2", "b"):
        team.sync(people[name])
    refs = [vacant_refs(people[name].ws) for name in ("a", "a2", "b", "c")]
    assert all(r == refs[0] for r in refs) and len(refs[0]) == 2  # one ref per key, the same everywhere


@pytest.mark.slow
def test_a_rejected_push_is_merged_and_retried_never_forced(team, monkeypatch):
    """a2 fetches, then a (same key) pushes first: a2's push is rejected, a2 merges and retries."""
    people = recorded_team(team)
    a, a2 = people["a"], people["a2"]
    team.use(a)
    signer = signing.own_signer()
    real_push = GitStore.push
    interleaved = []

    def push_after_someone_else(self, remote, updates):
        if self.root == a2.ws and not interleaved:
            interleaved.append(sync.sync(a.ws, "origin", signer=signer))
        return real_push(self, remote, updates)

    monkeypatch.setattr(GitStore, "push", push_after_someone_else)
    result = sync.sync(a2.ws, "origin", signer=signer)
    assert interleaved and interleaved[0].pushed == [signer.fingerprint]
    assert result.attempts == 2 and result.merged == [signer.fingerprint] and result.pushed == [signer.fingerprint]
    remote = git(team.bare, "rev-parse", f"refs/vacant/authors/{signer.fingerprint}").strip()
    parents = git(team.bare, "rev-list", "--parents", "-n", "1", remote).split()[1:]
    assert interleaved[0].author == signer.fingerprint and len(parents) == 2  # a merge on top of a's push
    assert git(team.bare, "merge-base", "--is-ancestor",
               git(a.ws, "rev-parse", f"refs/vacant/authors/{signer.fingerprint}").strip(), remote) == ""
    team.sync(people["c"])
    assert_sees_exactly(team, people["c"], logged_reviews(a, a2))


@pytest.mark.slow
def test_a_lost_ref_is_published_again_and_merged_with_the_remote(team):
    people = recorded_team(team)
    a = people["a"]
    team.sync(a)
    (ref,) = vacant_refs(a.ws)
    git(a.ws, "update-ref", "-d", ref)  # published.json still says every run went out
    result = team.sync(a)
    assert result.published_runs == 2  # the same records again: same bytes, same names
    tree = git(a.ws, "ls-tree", "-r", "--name-only", ref).split()
    assert tree and tree == git(team.bare, "ls-tree", "-r", "--name-only", ref).split()
    team.sync(people["c"])
    assert_sees_exactly(team, people["c"], logged_reviews(a))


@pytest.mark.slow
def test_git_gc_and_a_fresh_clone_keep_everything(team):
    people = recorded_team(team)
    expected = logged_reviews(people["a"], people["b"], people["a2"])
    for name in ("a", "b", "a2", "c"):
        team.sync(people[name])
    git(team.bare, "gc", "-q", "--prune=now")
    git(people["c"].ws, "gc", "-q", "--prune=now")
    shutil.rmtree(state_dir(people["c"].ws) / "share")  # no verification cache: every record re-read
    assert_sees_exactly(team, people["c"], expected)
    d = team.person("d")
    team.clone(d)
    assert vacant_refs(d.ws) == {}  # a plain clone does not carry vacant's refs; sync does
    result = team.sync(d)
    assert result.published_runs == 0 and result.remote_authors == 2
    assert_sees_exactly(team, d, expected)
    assert vacant_refs(d.ws) == vacant_refs(people["c"].ws)


@pytest.mark.slow
def test_sync_never_touches_the_working_tree_the_index_or_branches(team):
    people = recorded_team(team)
    a = people["a"]
    (a.ws / "README").write_text("edited, not staged\n")
    (a.ws / "staged.txt").write_text("staged\n")
    git(a.ws, "add", "staged.txt")
    before = (git(a.ws, "status", "--porcelain"), (a.ws / ".git" / "index").read_bytes(),
              git(a.ws, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads", "refs/tags", "refs/remotes"),
              (a.ws / ".git" / "HEAD").read_text())
    team.sync(a)
    team.sync(people["b"])
    team.sync(a)
    after = (git(a.ws, "status", "--porcelain"), (a.ws / ".git" / "index").read_bytes(),
             git(a.ws, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads", "refs/tags", "refs/remotes"),
             (a.ws / ".git" / "HEAD").read_text())
    assert after == before
    assert git(team.bare, "for-each-ref", "--format=%(refname)", "refs/heads").split() == ["refs/heads/main"]
