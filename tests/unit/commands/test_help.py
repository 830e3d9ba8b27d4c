"""Every command's help: plain text, no type tags, and `--json` wherever a command prints a result."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from vacant.cli import app

TYPE_TAGS = re.compile(r"<(?:str|int|float|bool|path)>|\b(?:TEXT|INTEGER|FLOAT|BOOLEAN)\b")
# commands that print something a script may want to read
RESULT_COMMANDS = ["init", "uninstall", "doctor", "runs", "log", "verify", "scan", "asks", "ask", "approve", "decline",
                   "gate", "check", "flag", "unflag", "flags", "hints", "replay", "report", "reputation", "route", "do",
                   "blame", "restore", "view"]


def _help(*words: str) -> str:
    proc = subprocess.run([str(Path(sys.executable).parent / "vacant"), *words, "--help"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _commands() -> list[str]:
    import typer.main

    group = typer.main.get_command(app)
    return sorted(group.commands)


@pytest.mark.parametrize("command", _commands())
def test_help_has_no_type_tags(command):
    assert TYPE_TAGS.findall(_help(command)) == []


@pytest.mark.parametrize("command", RESULT_COMMANDS)
def test_result_commands_offer_json(command):
    assert "--json" in _help(command)
