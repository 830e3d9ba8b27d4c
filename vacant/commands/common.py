"""Helpers shared by the commands: the workspace of the current directory, JSON output."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from vacant.core.locations import find_root


def workspace() -> Path:
    return find_root(Path.cwd())


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, sort_keys=False) + "\n")
