"""The show tests' helpers (recording.py) made importable, and a recording fixture."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:  # works under any --import-mode
    sys.path.insert(0, _HERE)

from recording import Recording  # noqa: E402


@pytest.fixture
def recording(isolated_home, ws) -> Recording:
    return Recording(ws)
