"""Team keys without conflicts: one `.vacant-team-keys/<name>.pub` per person (the older single
file still read), and one count of rejected records everywhere: `sync --status` (grouped by
cause), `reputation` and `blame --team` agree."""

from __future__ import annotations

import json

import pytest
from teamkit import Team, git

from vacant.share import signing
from vacant.share.fold import folded_stats
from vacant.share.gitstore import GitStore
from vacant.share.team import team_keys


@pytest.mark.parametrize("per_person", [True, False])
def test_both_layouts_trust_the_same_keys(team: Team, per_person):
    a, b = team.person("a"), team.person("b")
    team.seed([a, b], per_person=per_person)
    team.clone(a)
    keys = team_keys(GitStore(a.ws))
    oracle = set()
    for person in (a, b):
        team.use(person)
        oracle.add(signing.own_signer().fingerprint)
    assert set(keys.keys) == oracle and keys.problems == []
    assert {key.name for key in keys.keys.values()} == {"a", "b"}


def test_two_people_adding_their_keys_at_once_never_conflict(team: Team):
    a, b = team.person("a"), team.person("b")
    team.seed([a], per_person=True)
    team.clone(a)
    team.clone(b)
    for person in (a, b):  # both add a key in parallel, from the same base commit
        (person.ws / signing.TEAM_KEYS_FILE / f"{person.name}-laptop.pub").write_text(team.key_line(person) + "\n")
        git(person.ws, "add", "-A")
        git(person.ws, "commit", "-q", "-m", f"trust {person.name}'s laptop")
    git(a.ws, "push", "-q", "origin", "HEAD:main")
    git(b.ws, "pull", "-q", "--no-rebase", "origin", "main")  # a merge, not a conflict
    git(b.ws, "push", "-q", "origin", "HEAD:main")
    assert sorted(key.name for key in team_keys(GitStore(b.ws)).keys.values()) == ["a", "b"]  # a's twice: one key


def test_a_bad_key_file_is_named_by_its_path(team: Team):
    a = team.person("a")
    team.seed([a], per_person=True)
    team.clone(a)
    (a.ws / signing.TEAM_KEYS_FILE / "zed.pub").write_text("ed25519 not-a-key zed\n")
    (a.ws / signing.TEAM_KEYS_FILE / "README").write_text("one .pub file per person\n")  # not a key file
    git(a.ws, "add", "-A")
    git(a.ws, "commit", "-q", "-m", "a bad key")
    keys = team_keys(GitStore(a.ws))
    assert len(keys.keys) == 1 and keys.problems == [".vacant-team-keys/zed.pub:1: not `ed25519 <base64 public key> <name>`"]


@pytest.mark.slow
def test_one_rejected_count_everywhere_grouped_by_cause(team: Team):
    a, m1, m2 = team.person("a"), team.person("m1"), team.person("m2")
    team.seed([a], per_person=True)
    for person in (a, m1, m2):
        team.clone(person)
    team.record(m1, "run-m1a", "fine\n")
    team.record(m1, "run-m1b", "bad\n")
    team.record(m2, "run-m2", "fine\n")
    team.sync(m1)
    team.sync(m2)
    team.sync(a)
    proc = team.cli(a, "sync", "--status", "--json")
    status = json.loads(proc.stdout)
    total = len(status["rejected"])
    assert proc.returncode == 1 and total > 2  # several records per untrusted person (runs, reviews, manifests)
    causes = status["rejected_by_cause"]
    assert sum(c["records"] for c in causes) == total and len(causes) == 2  # one cause per unknown key
    team.use(a)
    assert folded_stats(a.ws)[1].rejected == total
    shown = team.cli(a, "sync", "--status").stdout
    assert f"rejected: {total} record(s)" in shown and len([line for line in shown.splitlines() if " × " in line]) == 2
    assert f"{total} shared record(s) rejected" in team.cli(a, "reputation").stdout
