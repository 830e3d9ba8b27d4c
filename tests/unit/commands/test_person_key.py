"""Only the person creates the signing key: `vacant init`, or a signing command in a terminal (a
real pty here). Outside one, with no key, the command is refused and no key appears."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.usefixtures("isolated_home"), pytest.mark.no_key, pytest.mark.slow]


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    (ws / "a.py").write_text("x = 1\n")
    return ws


def _vacant(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "vacant", *args], cwd=cwd, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=60)


def _key(tmp_path: Path) -> Path:
    return tmp_path / "home" / ".config" / "vacant" / "key"


def test_init_creates_the_key_once_and_keeps_it(tmp_path):
    ws = _workspace(tmp_path)
    first = _vacant(["init"], ws)
    assert first.returncode == 0, first.stderr
    key = _key(tmp_path)
    assert key.stat().st_mode & 0o777 == 0o600 and len(key.read_bytes()) == 32
    assert str(key) in first.stdout
    before = key.read_bytes()
    again = _vacant(["init"], ws)
    assert again.returncode == 0 and key.read_bytes() == before and str(key) not in again.stdout


@pytest.mark.parametrize("args", [["flag", "a.py:1", "wrong"], ["approve", "ask#1"], ["decline", "ask#1"],
                                  ["unflag", "f-00000000"]])
def test_a_signing_command_outside_a_terminal_never_creates_the_key(tmp_path, args):
    ws = _workspace(tmp_path)
    done = _vacant(args, ws)
    assert done.returncode != 0 and "no vacant key yet" in done.stderr and "nothing was done" in done.stderr
    assert not _key(tmp_path).exists()
    assert not list((ws / ".git").rglob("f-*.json"))


def test_a_signing_command_in_a_terminal_creates_the_key(tmp_path):
    ws = _workspace(tmp_path)
    pid, fd = pty.fork()
    if pid == 0:  # the child: a person's terminal
        os.chdir(ws)
        os.execv(sys.executable, [sys.executable, "-m", "vacant", "flag", "a.py:1", "wrong"])
    output, deadline = b"", time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 1)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            output += chunk
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, output.decode(errors="replace")
    assert len(_key(tmp_path).read_bytes()) == 32
    flags = _vacant(["flags", "--json"], ws)
    assert "wrong" in flags.stdout
