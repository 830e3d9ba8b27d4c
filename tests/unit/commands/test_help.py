"""Every command's help: plain text, no type tags, and `--json` wherever a command prints a result."""

from __future__ import annotations

import functools
import json
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


# Each command's help as `vacant CMD --help` prints it, from one process of its own (no terminal,
# as a hook or script sees it): one interpreter start instead of one per command and test.
HELP_SCRIPT = """
import contextlib, io, json, sys
from vacant.cli import main
out = {}
for command in sys.argv[1:]:
    sys.argv = ["vacant", command, "--help"]
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        try:
            main()
        except SystemExit as done:
            code = done.code
    out[command] = [code, buffer.getvalue()]
print(json.dumps(out))
"""


@functools.cache
def _helps() -> dict[str, tuple[int, str]]:
    proc = subprocess.run([sys.executable, "-c", HELP_SCRIPT, *_commands()], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    return {command: tuple(found) for command, found in json.loads(proc.stdout).items()}


def _help(command: str) -> str:
    code, text = _helps()[command]
    assert code in (0, None), text
    return text


@pytest.mark.slow
def test_the_console_script_prints_help():
    proc = subprocess.run([str(Path(sys.executable).parent / "vacant"), "--help"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert TYPE_TAGS.findall(proc.stdout) == [] and "Usage" in proc.stdout


def _commands() -> list[str]:
    import typer.main

    group = typer.main.get_command(app)
    return sorted(group.commands)


@pytest.mark.slow
@pytest.mark.parametrize("command", _commands())
def test_help_has_no_type_tags(command):
    assert TYPE_TAGS.findall(_help(command)) == []


@pytest.mark.slow
@pytest.mark.parametrize("command", RESULT_COMMANDS)
def test_result_commands_offer_json(command):
    assert "--json" in _help(command)
