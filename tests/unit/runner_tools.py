"""The real test runners the runner tests drive: Debian's Go (scripts/setup installs golang-go)
and jest and vitest, installed at test time from npm with `npm ci` against fixtures/runners/package-lock.json
(exact versions, integrity hashes; node_modules is never committed). A missing toolchain fails
the test that needs it, never skips it."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

import pytest

RUNNERS = Path(__file__).resolve().parents[2] / "fixtures" / "runners"
JEST = RUNNERS / "node_modules" / ".bin" / "jest"
VITEST = RUNNERS / "node_modules" / ".bin" / "vitest"
STAMP = RUNNERS / "node_modules" / ".vacant-installed"
# the developer's own Go build cache, as `go` finds it before a test isolates HOME: content-addressed
# and safe to share, so the standard library is compiled once, not in every test's fresh HOME
_REAL_HOME_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "go-build"
GOCACHE = os.environ.get("GOCACHE") or str(_REAL_HOME_CACHE)


def go_env(monkeypatch: pytest.MonkeyPatch) -> str:
    """The real `go` (failing the test when it is missing), with the shared build cache."""
    go = shutil.which("go")
    if go is None:
        pytest.fail("go is missing: scripts/setup installs Debian's golang-go (apt-get install golang-go)")
    monkeypatch.setenv("GOCACHE", GOCACHE)
    monkeypatch.setenv("GOTOOLCHAIN", "local")  # never a toolchain download (Go 1.21 on)
    monkeypatch.setenv("GOPROXY", "off")
    return go


def jest_modules() -> Path:
    """fixtures/runners/node_modules with the pinned jest and vitest in it, installed once (`npm ci`) and
    again when the lock changes; a lock file keeps parallel workers to one install."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail("npm is missing: jest is installed from npm at test time")
    lock = RUNNERS / "package-lock.json"
    with open(RUNNERS / ".install.lock", "w") as guard:
        fcntl.flock(guard, fcntl.LOCK_EX)
        if not JEST.exists() or not VITEST.exists() or not STAMP.exists() or STAMP.stat().st_mtime < lock.stat().st_mtime:
            done = subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=RUNNERS,
                                  capture_output=True, text=True, timeout=600)
            if done.returncode != 0:
                pytest.fail(f"npm ci of the pinned jest and vitest failed: {done.stderr[-2000:]}")
            STAMP.touch()
    return RUNNERS / "node_modules"
