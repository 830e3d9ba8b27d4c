"""An unwalled record says so: the report's record problems carry an `unwalled` note (not a
finding: the person chose it) when the round ran with `--no-wall`, when `vacant init` installed the
platform's hooks without the wall, or when the install record is gone; never when it was walled."""

from __future__ import annotations

import json

import pytest

from vacant.attribute import recordaudit
from vacant.core.locations import mark_installed, read_install, run_dir

pytestmark = pytest.mark.usefixtures("isolated_home")


def make_run(ws, rounds=()):
    run = run_dir(ws, "s1")
    run.mkdir(parents=True)
    lines = [{"type": "run_start", "platform": "claude-code", "seq": 0}]
    lines += [{"type": "round", "walled": walled} for walled in rounds]
    (run / "events.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return run


def kinds(run) -> list[str]:
    return [p["kind"] for p in recordaudit.run_problems(run)]


@pytest.mark.parametrize("walls, rounds, unwalled", [
    ({"claude": True}, (), False),
    ({"claude": False}, (), True),
    ({}, (), False),  # installed before the wall existed: nothing is claimed either way
    ({"claude": True}, (True,), False),
    ({"claude": True}, (True, False), True),
    ({"claude": False}, (True,), False),  # `vacant do` walled the rounds itself
])
def test_the_note_follows_what_was_installed_and_how_rounds_ran(ws, walls, rounds, unwalled):
    mark_installed(ws, walls=walls)
    run = make_run(ws, rounds)
    assert ("unwalled" in kinds(run)) is unwalled
    assert "unwalled" in recordaudit.NOTES  # a note, never a finding


def test_a_deleted_install_record_is_unwalled(ws):
    mark_installed(ws, walls={"claude": True})
    run = make_run(ws)
    assert "unwalled" not in kinds(run)
    (run.parent.parent / "install.json").unlink()
    assert read_install(ws) is None and "unwalled" in kinds(run)
