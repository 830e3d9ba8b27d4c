"""`vacant restore`: every step's before and after state, byte for byte, against snapshots the test
took of the live workspace while the run was recorded; the refusals leave everything untouched."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from recording import Recording, cli

from vacant.show.restore import restore
from vacant.store.states import ReconstructionError

pytestmark = pytest.mark.usefixtures("isolated_home")


def snapshot(root: Path) -> dict[str, tuple]:
    """path -> (kind, bytes or link target, permission bits), .vacant left out."""
    found = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".vacant"]
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                found[rel] = ("l", os.readlink(path), None)
            elif stat.S_ISDIR(info.st_mode):
                found[rel] = ("d", None, None)
            else:
                found[rel] = ("f", path.read_bytes(), stat.S_IMODE(info.st_mode))
    return found


def recorded_run(ws: Path) -> tuple[Recording, dict[int, dict], dict[int, dict]]:
    """A run of tool steps, shell steps and out-of-band edits; snapshots before and after each step."""
    (ws / "keep.txt").write_text("from the start\n")
    run = Recording(ws)
    before, after = {}, {}

    def step(number: int, tool: str, act, scope) -> None:
        before[number] = snapshot(ws)
        run.step(tool, act, scope)
        after[number] = snapshot(ws)

    def shell_makes_files() -> None:
        (ws / "build").mkdir()
        (ws / "build" / "out.bin").write_bytes(bytes(range(256)) * 3)
        (ws / "made_by_shell.sh").write_text("#!/bin/sh\necho made by a shell step\n")
        os.chmod(ws / "made_by_shell.sh", 0o755)
        os.symlink("made_by_shell.sh", ws / "link")

    step(1, "Write", lambda: (ws / "notes.md").write_text("one\n"), [str(ws / "notes.md")])
    step(2, "Bash", shell_makes_files, None)
    step(3, "Edit", lambda: (ws / "notes.md").write_text("one\ntwo\n"), [str(ws / "notes.md")])
    step(4, "Bash", lambda: ((ws / "keep.txt").unlink(), (ws / "build" / "out.bin").write_bytes(b"\0new")), None)
    run.end()
    return run, before, after


def test_every_step_restores_byte_for_byte(ws, tmp_path):
    run, before, after = recorded_run(ws)
    live = snapshot(ws)
    for number in before:
        for when, expected in (("after", after[number]), ("before", before[number])):
            target = tmp_path / f"restored-{number}-{when}"
            result = restore(ws, run.run_dir, number, target, before=when == "before")
            assert snapshot(target) == expected, (number, when)
            assert result.unrestorable == []
    assert snapshot(ws) == live  # the live workspace untouched


def test_a_file_made_by_a_shell_step_is_restored(ws, tmp_path):
    recorded_run(ws)
    proc = cli(["restore", "s1", "--step", "2", "--to", str(tmp_path / "out"), "--json"], ws)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert (data["step"], data["when"], data["unrestorable"]) == (2, "after", [])
    made = tmp_path / "out" / "made_by_shell.sh"
    assert made.read_text() == "#!/bin/sh\necho made by a shell step\n" and os.access(made, os.X_OK)
    assert os.readlink(tmp_path / "out" / "link") == "made_by_shell.sh"
    assert (tmp_path / "out" / "build" / "out.bin").read_bytes() == bytes(range(256)) * 3


@pytest.mark.slow
def test_refusals_touch_nothing(ws, tmp_path):
    run, _, _ = recorded_run(ws)
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "mine.txt").write_text("the person's\n")
    (tmp_path / "a-file").write_text("x")
    live = snapshot(ws)
    for target in (busy, ws, ws / "sub" / "dir", ws / ".vacant" / "x", tmp_path / "a-file"):
        with pytest.raises(ReconstructionError):
            restore(ws, run.run_dir, 2, target)
    assert snapshot(ws) == live and (busy / "mine.txt").read_text() == "the person's\n"
    assert sorted(p.name for p in busy.iterdir()) == ["mine.txt"] and (tmp_path / "a-file").read_text() == "x"
    assert not (ws / "sub").exists()
    proc = cli(["restore", "s1", "--step", "2", "--to", str(busy)], ws)
    assert proc.returncode == 3 and "not empty" in proc.stderr
    proc = cli(["restore", "s1", "--step", "99", "--to", str(tmp_path / "new")], ws)
    assert proc.returncode == 3 and "no step 99" in proc.stderr and not (tmp_path / "new").exists()


def test_blobs_over_the_cap_are_listed_not_restorable(ws, tmp_path, monkeypatch):
    monkeypatch.setenv("VACANT_OBJECT_CAP", "100")
    run = Recording(ws)
    run.bash(lambda: ((ws / "big.bin").write_bytes(b"b" * 5000), (ws / "small.txt").write_text("s\n")))
    run.end()
    proc = cli(["restore", "s1", "--step", "1", "--to", str(tmp_path / "out"), "--json"], ws)
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert data["unrestorable"] == [{"path": "big.bin", "size": 5000}]
    assert (tmp_path / "out" / "small.txt").read_text() == "s\n" and not (tmp_path / "out" / "big.bin").exists()
