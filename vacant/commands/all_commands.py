"""Every command module and the top-level commands it registers, in help order: the registry the
command line is built from.

`vacant CMD …` imports only the module that registers CMD (a full command line imports typer,
pydantic and every subsystem: about half a second before any work, paid by every hook-driven or
scripted call). `vacant`, `vacant --help` and an unknown name build the whole command line. A test
checks this table against what each module's `register` really adds, so it cannot drift.
Adding a command: one module under vacant/commands/ with a `register(app)`, and one line here.
"""

from __future__ import annotations

COMMANDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("init", ("init",)),
    ("uninstall", ("uninstall",)),
    ("doctor", ("doctor",)),
    ("runs", ("runs", "log", "verify")),
    ("scan", ("scan",)),
    ("demo", ("demo",)),
    ("asks", ("asks", "ask")),
    ("answer", ("approve", "decline")),
    ("gate", ("gate",)),
    ("contract", ("contract",)),
    ("check", ("check",)),
    ("flag", ("flag", "unflag", "flags")),
    ("hints", ("hints",)),
    ("replay", ("replay",)),
    ("report", ("report",)),
    ("reputation", ("reputation", "route")),
    ("do", ("do",)),
    ("export", ("export",)),
    ("blame", ("blame",)),
    ("summary", ("summary",)),
    ("restore", ("restore",)),
    ("view", ("view",)),
    ("sync", ("sync",)),
    ("experiment", ("experiment",)),
    ("daemon", ("daemon",)),
)


def modules_for(argv: list[str]) -> list[str]:
    """The command modules `vacant ARGV` needs: the one registering its command, or all of them
    when no command is named (help) or the name is unknown (so click's error lists the real ones)."""
    name = next((arg for arg in argv if not arg.startswith("-")), None)
    owners = [module for module, names in COMMANDS if name in names]
    return owners or [module for module, _ in COMMANDS]
