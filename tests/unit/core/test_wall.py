"""The wall's paths come from the platform registry, and its TMPDIR rule matches what the kernel
accepts for a unix socket's path (the oracle: binding a real socket there)."""

from __future__ import annotations

import os
import socket
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from vacant.core.wall import SANDBOX_SOCKET_NAME, sandbox_tmpdir_too_long, wall_for
from vacant.platforms.all_platforms import load, names


def test_every_registered_platforms_settings_are_read_only_behind_the_wall(tmp_path, monkeypatch):
    home, root = tmp_path / "home", tmp_path / "ws"
    home.mkdir(), root.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    wall = wall_for(root)
    protected = set(wall.readonly) | set(wall.hidden)
    for name in names():
        platform = load(name)
        for base, rels in ((root, platform.settings_in_workspace), (home, platform.settings_in_home)):
            for rel in rels:
                assert os.path.realpath(base / rel) in protected, (name, rel)


def _bind(path: str) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(path)
        except OSError as error:
            assert "too long" in str(error), error
            return False
    os.unlink(path)
    return True


@settings(max_examples=40, deadline=None)
@given(extra=st.integers(min_value=0, max_value=60))
def test_the_tmpdir_rule_is_the_kernels_socket_path_limit(tmp_path_factory, extra):
    base = tmp_path_factory.mktemp("t")
    tmpdir = base / ("d" * max(1, 107 - len(str(base)) - len(SANDBOX_SOCKET_NAME) - 30 + extra))
    tmpdir.mkdir(exist_ok=True)
    sock = str(tmpdir) + SANDBOX_SOCKET_NAME
    assert sandbox_tmpdir_too_long(str(tmpdir)) is not _bind(sock)


def test_a_walled_claude_run_gets_a_tmpdir_its_sandbox_can_start_in(tmp_path):
    from vacant.platforms.claude import ClaudeDriver

    root = tmp_path / "ws"
    root.mkdir()
    long_tmp = tmp_path / ("x" * 90)
    for tmpdir, walled in ((str(long_tmp), True), (str(long_tmp), False), ("/tmp", True)):
        env = {"TMPDIR": tmpdir}
        driver = ClaudeDriver(["claude", "-p", "task"], root, env, tmp_path / "do")
        driver.wall = wall_for(root) if walled else None
        driver.prepare()
        assert not sandbox_tmpdir_too_long(env["TMPDIR"]) or not walled
        assert env["TMPDIR"] == (tmpdir if not walled or not sandbox_tmpdir_too_long(tmpdir) else "/tmp")


def test_doctor_names_a_tmpdir_too_long_for_claudes_sandbox(tmp_path, monkeypatch):
    from vacant.platforms.claude import Claude, PLATFORM

    root = tmp_path / "ws"
    (root / ".claude").mkdir(parents=True)
    wall = wall_for(root)
    settings = {"sandbox": {"enabled": True, "failIfUnavailable": True, "allowUnsandboxedCommands": False,
                            "filesystem": {"denyRead": list(wall.hidden)}}}
    import json

    (root / ".claude" / "settings.local.json").write_text(json.dumps(settings))
    assert Claude.wall_problem(PLATFORM, root, wall) is None
    monkeypatch.setenv("TMPDIR", str(tmp_path / ("x" * 100)))
    problem = Claude.wall_problem(PLATFORM, root, wall)
    assert problem is not None and "TMPDIR" in problem
    assert Path(os.environ["TMPDIR"]).name in problem
