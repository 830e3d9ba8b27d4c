"""Where the unit tests put their files (tests/conftest.py): on tmpfs, except a test that may run a
walled process, whose files stay on disk where the wall can see them; a walled process started
from a tmpfs test is refused, in this process and in a child, naming the marker."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

WALL = ["bwrap", "--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--"]


def filesystem(path: Path) -> str:
    return subprocess.run(["stat", "-f", "-c", "%T", str(path)], capture_output=True, text=True, check=True).stdout.strip()


@pytest.mark.disk_tmp
def test_a_test_marked_disk_tmp_keeps_its_files_where_the_wall_sees_them(tmp_path):
    assert filesystem(tmp_path) != "tmpfs"
    assert filesystem(Path(os.environ.get("TMPDIR") or "/tmp")) != "tmpfs"
    (tmp_path / "note.txt").write_text("seen behind the wall\n")
    walled = subprocess.run([*WALL, "cat", str(tmp_path / "note.txt")], capture_output=True, text=True, timeout=60)
    assert walled.stdout == "seen behind the wall\n", walled.stderr


def test_a_unit_test_keeps_its_files_on_tmpfs(tmp_path):
    assert filesystem(tmp_path) == "tmpfs"
    assert filesystem(Path(os.environ["TMPDIR"])) == "tmpfs"


def test_a_walled_process_from_a_tmpfs_test_is_refused_here_and_in_a_child(tmp_path):
    with pytest.raises(RuntimeError, match="disk_tmp"):
        subprocess.run([*WALL, "true"], timeout=60)
    child = subprocess.run(["sh", "-c", " ".join([*WALL, "true"])], capture_output=True, text=True, timeout=60)
    assert child.returncode == 126 and "disk_tmp" in child.stderr
    mark = Path(os.environ["TMPDIR"]).parent / "walled"  # the child's refusal, which the teardown would raise
    assert mark.read_text().strip().startswith(os.environ["PYTEST_CURRENT_TEST"].split(" ")[0])
    mark.unlink()
