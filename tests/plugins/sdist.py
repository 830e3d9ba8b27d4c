"""A real third-party project's own test suite for the e2e tests: a PyPI sdist fetched by pip at
test time, verified by sha256, cached for the session (none of its code is in this repository).
Missing network or a changed archive fails the test that asked, never skips it."""

from __future__ import annotations

import fcntl
import hashlib
import subprocess
import sys
import tarfile
from pathlib import Path

MORE_ITERTOOLS = ("more-itertools", "10.5.0", "5482bfef7849c25dc3c6dd53a6173ae4795da2a41a80faea6700d9f5846c5da6")
# a src/ layout (src/cachetools), the usual shape of a modern library, installed editable by its tests
CACHETOOLS = ("cachetools", "8.0.3", "79245d0d90464e29355f13658cd769e57d98ed06242d3c6fbd71796ca0938ef9")
SUITE = f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {sys.executable} -m pytest -q -p no:cacheprovider tests"


def fetch_sdist(cache: Path, name: str, version: str, sha256: str) -> Path:
    """The unpacked sdist under `cache`, downloaded once by pip and checked against `sha256` (under a
    lock: parallel test workers share one download)."""
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _fetch(cache, name, version, sha256)


def _fetch(cache: Path, name: str, version: str, sha256: str) -> Path:
    archive = cache / f"{name}-{version}.tar.gz"
    if not archive.exists():
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
                        f"{name}=={version}", "-d", str(cache)], check=True)
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    assert digest == sha256, f"{archive}: sha256 {digest}, expected {sha256}"
    tree = cache / f"{name}-{version}"
    if not tree.exists():
        with tarfile.open(archive) as tar:
            tar.extractall(cache, filter="data")
    return tree
