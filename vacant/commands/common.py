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


def refuse_inside_agent(verb: str) -> None:
    """A person-only verb run from inside an agent's tool call (an agent marker is set in the
    environment, see vacant/policy/asks.py AGENT_ENV): refused with exit 3, nothing done."""
    from vacant.core.exitcodes import Exit
    from vacant.policy.asks import agent_env

    name = agent_env()
    if name:
        sys.stderr.write(f"vacant: refused: `vacant {verb}` speaks for the person, and this shell belongs to an "
                         f"agent's tool ({name} is set). Run it from your own terminal; nothing was done.\n")
        raise SystemExit(int(Exit.USER_ERROR))
