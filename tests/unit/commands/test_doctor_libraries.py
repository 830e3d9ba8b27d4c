"""`vacant doctor` names the hook path's libraries when they are not the versions this release was
tested with (vacant/core/tested_with.py, written from the lock the tests install: held to it here)."""

from __future__ import annotations

import re
from importlib.metadata import version
from pathlib import Path

import pytest

from vacant.commands.doctor import libraries_line
from vacant.core.tested_with import TESTED_WITH

REPO = Path(__file__).resolve().parents[3]


def locked(lock: Path) -> dict[str, str]:
    """name -> version of each `name==version` line (the lock's own format, read apart from scripts/lock)."""
    return {match[1].lower(): match[2] for match in re.finditer(r"^([A-Za-z0-9._-]+)==([^\s;\\]+)", lock.read_text(), re.M)}


def test_the_tested_versions_are_the_locks():
    pins = locked(REPO / "locks" / "run.txt")
    assert TESTED_WITH == {name: pins[name] for name in ("watchdog", "xxhash")}
    assert all(locked(REPO / "locks" / "test.txt")[name] == pinned for name, pinned in TESTED_WITH.items())


def test_the_versions_the_suite_runs_with_are_ok():
    assert {name: version(name) for name in TESTED_WITH} == TESTED_WITH  # the suite installs the lock
    line = libraries_line()
    assert line.status == "ok", line
    assert all(f"{name} {pinned}" in line.detail for name, pinned in TESTED_WITH.items())


@pytest.mark.slow
def test_another_watchdog_is_named_with_the_tested_version(monkeypatch):
    """A real other release of watchdog (fetched pinned by hash) first on sys.path."""
    from pinned import pinned_target

    other = "7.1.0" if TESTED_WITH["watchdog"] != "7.1.0" else "7.1.1"
    monkeypatch.syspath_prepend(str(pinned_target(REPO / "fixtures" / "pypi" / f"watchdog-{other}.txt")))
    assert version("watchdog") == other
    line = libraries_line()
    assert line.status == "warn"
    assert f"watchdog {other} is installed, this release was tested with {TESTED_WITH['watchdog']}" in line.detail
    assert "xxhash" not in line.detail  # the one as tested is not named


def test_a_missing_library_fails(monkeypatch):
    import importlib.metadata

    real = importlib.metadata.version

    def without_xxhash(name: str) -> str:
        if name == "xxhash":
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(importlib.metadata, "version", without_xxhash)
    line = libraries_line()
    assert line.status == "fail" and "xxhash not installed" in line.detail


def test_a_key_with_a_second_name_is_refused_everywhere_and_named_by_doctor(isolated_home, tmp_path):
    """A hard link made before the wall went up reads the key where no wall hides it: the key is
    refused (nothing verifies, nothing signs: fail closed) and doctor fails naming it."""
    import os

    from vacant.commands.doctor import key_line
    from vacant.core.keys import KeyFileError, key_path, user_key

    assert key_line().status == "ok"
    user_key()
    os.link(key_path(), tmp_path / "copy")
    with pytest.raises(KeyFileError, match="2 names"):
        user_key()
    line = key_line()
    assert line.status == "fail" and "samefile" in line.detail
    (tmp_path / "copy").unlink()
    assert key_line().status == "ok"
