"""Third-party Python code a test needs, fetched from the registry at test time and pinned by hash.

`pinned_target(requirements)` installs a requirements file whose every line carries `--hash`
(fixtures/pypi/) into a directory of its own, once per checkout (under a file lock, so parallel
workers install it once), with pip's hash-checking mode: a file whose hash is not listed is
refused. A test puts that directory first on a child interpreter's PYTHONPATH. A failed fetch
fails the test; nothing is skipped."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".test-artifacts" / "pinned"


def pinned_target(requirements: Path) -> Path:
    """The directory holding exactly what `requirements` pins (installed on first use)."""
    text = requirements.read_bytes()
    target = CACHE / f"{requirements.stem}-{hashlib.sha256(text).hexdigest()[:12]}"
    done = target / ".installed"
    if done.exists():
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.exists():
            return target
        shutil.rmtree(target, ignore_errors=True)
        env = {**os.environ, "PIP_CONSTRAINT": "", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
        result = subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--only-binary", ":all:",
             "--require-hashes", "--no-compile", "--target", str(target), "-r", str(requirements)],
            capture_output=True, text=True, env=env, timeout=300)
        if result.returncode:
            raise RuntimeError(f"cannot fetch {requirements.name} from the registry:\n{result.stderr[-2000:]}")
        done.write_text(text.decode())
    return target
