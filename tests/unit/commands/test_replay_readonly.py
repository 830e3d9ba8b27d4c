"""`vacant replay` reads a recorded run and writes nothing into it: its step log, saved reports
and Stop state stay byte for byte, and the latest run stays the latest (report, view, blame)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vacant.core.locations import resolve_run

_SHOW = str(Path(__file__).resolve().parents[1] / "show")
if _SHOW not in sys.path:  # the show tests' in-process recorder (tests/unit/show/recording.py)
    sys.path.insert(0, _SHOW)
from recording import Recording, cli  # noqa: E402

pytestmark = pytest.mark.usefixtures("isolated_home")


def snapshot(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def record(ws: Path, session: str, text: str) -> Path:
    recording = Recording(ws, session)
    recording.write("a.txt", text)
    recording.stop()
    recording.end()
    return recording.run_dir


@pytest.mark.slow
def test_replay_leaves_the_run_and_the_latest_alone(ws):
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / "vacant.toml").write_text('[[check]]\nname = "one"\ncommand = "grep -q 1 a.txt"\n')
    older = record(ws, "older", "2\n")  # a finding, so the replay has grading to do
    newer = record(ws, "newer", "1\n")
    for run in (older, newer):  # the detached baseline probes have landed
        deadline = time.monotonic() + 30
        while not (run / "vacuous.json").exists():
            assert time.monotonic() < deadline
            time.sleep(0.02)
    before = snapshot(older)
    # today's contract differs from the recorded one: a replay used to append its checks' records
    (ws / "vacant.toml").write_text('[[check]]\nname = "one"\ncommand = "grep -q 1 a.txt"\n\n'
                                    '[[check]]\nname = "two"\ncommand = "grep -q 2 a.txt"\n')
    replayed = cli(["replay", "older", "--json"], ws)
    assert replayed.returncode in (0, 1), replayed.stderr
    report = json.loads(replayed.stdout)
    assert report["run"] == "older" and [c["name"] for c in report["checks"]] == ["one", "two"]
    assert snapshot(older) == before
    assert resolve_run(ws, None) == newer
    assert "newer" in cli(["report"], ws).stdout.splitlines()[0]
