"""Where the browser tests leave their screenshots: $VACANT_TEST_ARTIFACTS, else .test-artifacts/
at the repository root (ignored by git)."""

from __future__ import annotations

import os
from pathlib import Path


def artifacts_dir() -> Path:
    directory = Path(os.environ.get("VACANT_TEST_ARTIFACTS") or Path(__file__).resolve().parents[2] / ".test-artifacts")
    directory.mkdir(parents=True, exist_ok=True)
    return directory
