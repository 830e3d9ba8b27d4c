"""The real test runners the runner tests drive: Debian's Go and cargo (scripts/setup installs
golang-go and cargo when missing; a rustup install works too) and jest and vitest, installed at test time from npm with `npm ci` against fixtures/runners/package-lock.json
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
# a rustup-installed cargo is a proxy that finds its toolchains under the developer's home
RUSTUP_HOME = os.environ.get("RUSTUP_HOME") or str(Path.home() / ".rustup")


def go_env(monkeypatch: pytest.MonkeyPatch) -> str:
    """The real `go` (failing the test when it is missing), with the shared build cache."""
    go = shutil.which("go")
    if go is None:
        pytest.fail("go is missing: scripts/setup installs Debian's golang-go (apt-get install golang-go)")
    monkeypatch.setenv("GOCACHE", GOCACHE)
    monkeypatch.setenv("GOTOOLCHAIN", "local")  # never a toolchain download (Go 1.21 on)
    monkeypatch.setenv("GOPROXY", "off")
    return go


def cargo_env(monkeypatch: pytest.MonkeyPatch) -> str:
    """The real `cargo` (failing the test when it is missing), offline (test crates have no
    dependencies), its toolchains found where rustup keeps them when it is rustup's proxy."""
    cargo = shutil.which("cargo")
    if cargo is None:
        pytest.fail("cargo is missing: scripts/setup installs Debian's cargo (apt-get install cargo)")
    if Path(RUSTUP_HOME).is_dir():
        monkeypatch.setenv("RUSTUP_HOME", RUSTUP_HOME)
    monkeypatch.setenv("CARGO_NET_OFFLINE", "true")
    monkeypatch.setenv("CARGO_TERM_COLOR", "never")
    monkeypatch.delenv("RUST_BACKTRACE", raising=False)
    return cargo


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


def run_planned(command: str, cwd: Path, select: tuple[str, ...] = ()) -> tuple[object, object, str]:
    """A check's command run as vacant plans it (its report routed, `select` alone): the run's
    result, what its runner reported, and the command as it ran."""
    from vacant.policy.contract.checks import run_command
    from vacant.policy.contract.runners import plan_run, read_reports

    plan = plan_run(command, cwd, None, select)
    try:
        result = run_command(plan.command, cwd, 120, cwd, extra_env=plan.environment(os.environ["PATH"]))
        return result, read_reports(plan), plan.command
    finally:
        plan.cleanup()
