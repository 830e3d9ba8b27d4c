"""`vacant blame FILE` counts the team's synced records whenever the repository holds some, as
`vacant summary` does: a clone after `vacant sync` names the agents' lines without a flag, and
`--local` keeps to this machine's runs. Through git, the real hook and the CLI, with `--team`'s
answer as the oracle for the default and a clone that never synced as the oracle for `--local`."""

from __future__ import annotations

import json

import pytest
from teamkit import Team, git


def blame(team: Team, person, *args: str) -> dict:
    proc = team.cli(person, "blame", "out.txt", "--json", *args)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def authors(shown: dict) -> list[tuple]:
    return [(row["text"], row["origin"], row["run"], row["step"]) for row in shown["lines"]]


@pytest.mark.slow
def test_blame_names_synced_runs_without_a_flag_and_local_keeps_to_this_machine(team):
    a, c = team.person("a"), team.person("c")
    team.seed([a, c])
    team.clone(a)
    team.clone(c)
    team.run_writes(a, "run-a", [("out.txt", "alpha\nbeta\n"), ("out.txt", "alpha\nBETA\ngamma\n")])
    git(a.ws, "add", "-A")
    git(a.ws, "commit", "-q", "-m", "a's work")
    git(a.ws, "push", "-q", "origin", "HEAD:main")
    team.sync(a)

    git(c.ws, "pull", "-q", "origin", "main")
    unsynced = blame(team, c)  # no author ref here yet: this machine's runs, of which there are none
    assert {row["origin"] for row in unsynced["lines"]} == {"outside"} and unsynced["runs"] == []
    team.sync(c)
    plain, flagged = blame(team, c), blame(team, c, "--team")
    assert plain == flagged
    assert authors(plain) == [("alpha", "step", "run-a", 1), ("BETA", "step", "run-a", 2), ("gamma", "step", "run-a", 2)]
    assert blame(team, c, "--local") == unsynced  # the synced records left out: as before the sync

    text = team.cli(c, "blame", "out.txt").stdout  # the text says whose key signed the run
    assert "run-a step 2 Write main/unknown [a]" in text
    refused = team.cli(c, "blame", "out.txt", "--team", "--local")
    assert refused.returncode != 0 and "--team or --local" in refused.stderr

    # the recording machine: its own run is read from here, with or without its published record
    mine, local = blame(team, a), blame(team, a, "--local")
    assert authors(mine) == authors(local) == authors(plain)
    # one spelling for a model nobody reported, local or synced (vacant/core/cells.py)
    assert "run-a step 2 Write main/unknown" in team.cli(a, "blame", "out.txt", "--local").stdout
    assert "vacant-cell claude-code/main/unknown/share" in team.cli(a, "blame", "out.txt", "--local", "--porcelain").stdout
