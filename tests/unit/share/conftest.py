"""The `team` fixture (tests/unit/share/teamkit.py holds the helpers)."""

from __future__ import annotations

import os
import sys

import pytest

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:  # works under any --import-mode
    sys.path.insert(0, _HERE)

from teamkit import Team  # noqa: E402 - importable only after the path insert above


@pytest.fixture
def team(tmp_path, monkeypatch) -> Team:
    return Team(tmp_path, monkeypatch)
