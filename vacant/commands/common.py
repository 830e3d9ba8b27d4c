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
    environment, see vacant/policy/gate/asks/answer.py AGENT_ENV): refused with exit 3, nothing done."""
    from vacant.core.exitcodes import Exit
    from vacant.policy.gate.asks.answer import agent_env

    name = agent_env()
    if name:
        sys.stderr.write(f"vacant: refused: `vacant {verb}` speaks for the person, and this shell belongs to an "
                         f"agent's tool ({name} is set). Run it from your own terminal; nothing was done.\n")
        raise SystemExit(int(Exit.USER_ERROR))


def speak_for_person(verb: str) -> None:
    """Before a verb that signs for the person: refused inside an agent's tool call, and the key
    there (created now only in a terminal: an agent's tool commands have none, so a key it could
    plant is never one the person's first answer then trusts; vacant/core/keys.py)."""
    from vacant.core.exitcodes import Exit
    from vacant.core.keys import KeyMissing, person_key

    refuse_inside_agent(verb)
    try:
        person_key(sys.stdin.isatty())
    except KeyMissing as error:
        sys.stderr.write(f"vacant: `vacant {verb}` signs with your key, and {error}; nothing was done.\n")
        raise SystemExit(int(Exit.USER_ERROR)) from None
