"""Fixtures shared by the unit tests: a user of one's own, and a workspace to work in.

A module takes the isolated user with ``pytestmark = pytest.mark.usefixtures("isolated_home")``
and says what its workspace holds by overriding ``ws_files``."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings

from vacant.core.locations import mark_installed

# `pytest tests/unit --hypothesis-profile=slow`: more generated cases (test_differential: 5000 runs)
settings.register_profile("slow", max_examples=5000)

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:  # shared helpers (attribution_runs) importable under any --import-mode
    sys.path.insert(0, _HERE)

# daemons the hook clients start in test workspaces must not outlive the suite by 30 min
os.environ.setdefault("VACANT_DAEMON_IDLE_S", "60")


@pytest.fixture
def isolated_home(request, tmp_path, monkeypatch) -> Path:
    """HOME (with XDG_CONFIG_HOME in it, where the signing key lives) and vacant's data directory
    under tmp_path, and none of the caller's VACANT_STATE_DIR or VACANT_DO; the person's key made
(unless the test is marked `no_key`). Returns HOME."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("VACANT_HOME", str(tmp_path / "data"))
    for name in ("VACANT_STATE_DIR", "VACANT_DO"):
        monkeypatch.delenv(name, raising=False)
    if request.node.get_closest_marker("no_key") is None:
        from vacant.core.keys import create_user_key

        create_user_key()  # the person's `vacant init` made it once (core/keys.py: nothing else may)
    return home


@pytest.fixture
def ws_files() -> dict[str, str | bytes | None]:
    """What ``ws`` holds: relative path -> text, bytes, or None for an (empty) directory."""
    return {}


@pytest.fixture
def ws(tmp_path, ws_files, request) -> Path:
    """The workspace ``tmp_path/ws``, made with ``ws_files`` in it, and vacant installed in it (its
    install record in the state directory, as `vacant init` writes it: hooks record only there)."""
    if "isolated_home" in request.fixturenames:
        request.getfixturevalue("isolated_home")  # the install record goes to the isolated data dir
    root = tmp_path / "ws"
    root.mkdir()
    mark_installed(root)
    for rel, content in ws_files.items():
        path = root / rel
        if content is None:
            path.mkdir(parents=True, exist_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return root


# the hostile corpora's tally (issue 11), the `trust_tally` fixture: in tests/conftest.py, where
# the xdist controller (which loads no conftest below tests/) gathers the workers' counts


@pytest.fixture(autouse=True)
def no_interrupt_carried_over():
    """A test that calls a signal handler by hand stops 'this process' (vacant.core.children):
    the next test starts unstopped."""
    from vacant.core import children

    yield
    children.reset()
