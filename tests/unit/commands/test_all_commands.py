"""The command registry (vacant/commands/all_commands.py): it names exactly what each module
registers, and `vacant CMD` imports the module of CMD and nothing another command needs."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest
import typer

from vacant.commands.all_commands import COMMANDS, modules_for


def registered_names(module: str) -> tuple[str, ...]:
    """What `register` adds to a scratch command line: the oracle the table is checked against."""
    scratch = typer.Typer()
    scratch.callback()(lambda: None)
    importlib.import_module(f"vacant.commands.{module}").register(scratch)
    return tuple([c.name for c in scratch.registered_commands] + [g.name for g in scratch.registered_groups])


@pytest.mark.parametrize("module,names", COMMANDS, ids=[module for module, _ in COMMANDS])
def test_the_table_names_what_the_module_registers(module: str, names: tuple[str, ...]) -> None:
    assert registered_names(module) == names


def test_every_command_module_is_in_the_table() -> None:
    from pathlib import Path

    import vacant.commands

    with_register = {path.stem for path in Path(vacant.commands.__file__).parent.glob("*.py")
                     if "\ndef register(" in path.read_text()}
    assert with_register == {module for module, _ in COMMANDS}


def test_no_command_is_registered_twice() -> None:
    names = [name for _, owned in COMMANDS for name in owned]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("argv,want", [
    (["flags", "--json"], ["flag"]), (["--help"], None), ([], None), (["nosuch"], None),
    (["contract", "add", "x"], ["contract"]), (["route", "--json"], ["reputation"]),
])
def test_modules_for_names_the_owner_or_everything(argv: list[str], want: list[str] | None) -> None:
    assert modules_for(argv) == (want or [module for module, _ in COMMANDS])


PROBE = """
import contextlib, io, json, sys
command, owner = sys.argv[1], sys.argv[2]
table = {module for module, _ in __import__("vacant.commands.all_commands", fromlist=["COMMANDS"]).COMMANDS}
if owner != "-":  # the oracle: what importing the owner alone pulls in
    __import__(f"vacant.commands.{owner}")
else:
    sys.argv = ["vacant", command, "--help"]
    from vacant.cli import main
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            main()
        except SystemExit:
            pass
print(json.dumps(sorted(m for m in table if f"vacant.commands.{m}" in sys.modules)))
"""


def loaded(command: str, owner: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", PROBE, command, owner], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


@pytest.mark.slow
@pytest.mark.parametrize("command,owner", [("flags", "flag"), ("runs", "runs"), ("route", "reputation"),
                                           ("blame", "blame")])
def test_a_command_imports_its_own_module_only(command: str, owner: str) -> None:
    assert loaded(command, "-") == loaded(command, owner)
    assert owner in loaded(command, "-")


def test_every_command_runs_with_the_platforms_facts_registered() -> None:
    """Exports name a model's provider and the wall guards every platform's settings from the facts
    the registry registers (core/platform_facts): the command line loads it, whichever command runs."""
    probe = ("import sys; from vacant.cli import main; from vacant.core import platform_facts as f; "
             "print(f.provider('claude-code'), len(f.settings_paths()[0]) > 0)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["anthropic", "True"]
