"""Test commands behind a wrapper: `make test`, `npm test` / `pnpm test` / `yarn test`, `tox`, `nox`,
`uv run X`, `hatch test`. A check that runs one of them runs the runner the wrapper calls; vacant
reads the wrapper's configuration to know which (vacant.policy.contract.runners then routes that
runner's report as if the check named it).

- `make [-s] test` (or another single target): the target's recipe in `GNUmakefile`, `makefile` or
  `Makefile`, when it is plain: no prerequisites, no make variables or functions (`$`), no line
  whose errors make ignores (`-`), no `.ONESHELL`, `SHELL` or `include` in the file, and the
  target `.PHONY` or no file of its name (else make may decide it is up to date and run nothing).
  and every line a whole shell command (its quotes closed). Such a recipe is what make runs, line
  by line, each as `/bin/sh -c LINE`, stopping at the first failure; a recipe of one line may run
  so in make's place (`in_place`).
- `npm test`, `npm run test`, `pnpm test`, `yarn test`: package.json's `scripts.test`.
- `uv run X ...`: X and its arguments (uv runs it in the project's environment, whose variables it
  inherits).
- `hatch test`: pytest (hatch's test command runs pytest in its test environment).
- `nox [-s NAME]`: the `session.run("PROGRAM", ...)` calls in `noxfile.py` (nox passes the caller's
  environment to them).
- `tox [-e NAME]`: the `commands` of `[testenv]` (or `[testenv:NAME]`) in `tox.ini`. tox passes its
  commands only the variables its `pass_env` names, so a runner's report options that travel in
  the environment (pytest's, unittest's) do not reach it: vacant says so at `contract add`, and
  the check runs whole unless those variables are passed.

Whatever cannot be read soundly (a recipe with variables, a script that is not a string, a
noxfile that builds its command) is `Unwrapped(command=None, why=...)`: the check runs whole as
written, and `vacant contract add` says why in one sentence. Every file is read within
CONFIG_CAP bytes.
"""

from __future__ import annotations

import ast
import configparser
import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

CONFIG_CAP = 1 << 20
MAKEFILES = ("GNUmakefile", "makefile", "Makefile")


@dataclass(frozen=True)
class Unwrapped:
    """What a wrapper at the check's command runs: `command` (None when it cannot be read soundly,
    `why` then says so), and whether that command may run in the wrapper's place."""

    wrapper: str
    command: str | None
    why: str | None = None
    in_place: bool = False
    env_reaches: bool = True  # whether the caller's environment reaches the runner


def _read(path: Path) -> str | None:
    try:
        with open(path, "rb") as handle:
            data = handle.read(CONFIG_CAP + 1)
    except OSError:
        return None
    if len(data) > CONFIG_CAP:
        return None
    return data.decode("utf-8", "replace")


def _words(command: str) -> list[str] | None:
    """The command's words when it is one simple command (no `;`, `&&`, pipes, substitutions)."""
    if re.search(r"[;&|`<>()\n]|\$\(", command):
        return None
    try:
        return shlex.split(command)
    except ValueError:
        return None


def unwrap(command: str, cwd: Path) -> Unwrapped | None:
    """The runner behind a wrapper the whole command is (None: the command is no wrapper)."""
    words = _words(command.strip())
    if not words:
        return None
    head, rest = words[0], words[1:]
    if head == "make":
        return _make(rest, Path(cwd))
    if head in ("npm", "pnpm", "yarn"):
        return _package_script(head, rest, Path(cwd))
    if head == "uv" and rest[:1] == ["run"]:
        return _uv_run(rest[1:])
    if head == "hatch" and rest[:1] == ["test"]:
        return Unwrapped("hatch test", "pytest " + shlex.join(rest[1:]) if rest[1:] else "pytest")
    if head == "nox":
        return _nox(rest, Path(cwd))
    if head == "tox":
        return _tox(rest, Path(cwd))
    return None


# -- make -------------------------------------------------------------------------------------------

_RULE = re.compile(r"^(?P<targets>[^\s:=#][^:=#]*?)\s*:(?![:=])(?P<prereqs>[^=;#]*)(?:;.*)?$")


def _make(args: list[str], cwd: Path) -> Unwrapped:
    quiet = {"-s", "--silent", "--quiet"}
    targets = [arg for arg in args if arg not in quiet]
    wrapper = shlex.join(["make", *args])
    if len(targets) != 1 or targets[0].startswith("-") or "=" in targets[0]:
        return Unwrapped(wrapper, None, "make is given other options or targets than one target name")
    target = targets[0]
    makefile = next((cwd / name for name in MAKEFILES if (cwd / name).is_file()), None)
    text = _read(makefile) if makefile else None
    if text is None:
        return Unwrapped(wrapper, None, "no Makefile vacant could read")
    recipe = make_recipe(text, target)
    if isinstance(recipe, str):
        return Unwrapped(wrapper, None, recipe)
    if not _phony(text, target) and (cwd / target).exists():
        return Unwrapped(wrapper, None, f"`{target}` is not .PHONY and a file of that name exists")
    # make runs each line as `/bin/sh -c LINE`, stopping at the first failure: one line may run so
    # in make's place; several stay make's (a line that is no whole command fails alone there)
    return Unwrapped(wrapper, "\n".join(recipe), in_place=len(recipe) == 1)


def _phony(text: str, target: str) -> bool:
    return any(target in line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith(".PHONY:"))


def make_recipe(text: str, target: str) -> list[str] | str:
    """The recipe lines of `target` (make's `@` dropped), or why it is not plain (module docstring)."""
    if re.search(r"^\s*(?:\.ONESHELL\s*:|SHELL\s*[:?+]?=|\.SHELLFLAGS|-?include\s)", text, re.MULTILINE):
        return "the Makefile changes how recipes run (.ONESHELL, SHELL or an include)"
    lines = text.replace("\\\n", " ").splitlines()
    found: list[str] | None = None
    at = 0
    while at < len(lines):
        rule = _RULE.match(lines[at])
        at += 1
        if not rule or target not in rule.group("targets").split():
            continue
        if found is not None:
            return f"`{target}` is defined more than once"
        if rule.group("prereqs").strip():
            return f"`{target}` has prerequisites ({rule.group('prereqs').strip()[:60]}) make would build first"
        found = []
        while at < len(lines) and (lines[at].startswith("\t") or not lines[at].strip()):
            line = lines[at].strip()
            at += 1
            if line and not line.startswith("#"):
                found.append(line)
    if not found:
        return f"no recipe for `{target}`"
    plain = [line.lstrip("@+") for line in found]
    if any(line.startswith("-") or line.lstrip("@+-") != line.lstrip("@+") for line in found):
        return f"`{target}`'s recipe ignores a line's errors (-)"
    if any("$" in line for line in plain):
        return f"`{target}`'s recipe uses make variables or functions ($)"
    if not all(_complete(line) for line in plain):
        return f"`{target}`'s recipe has a line that is no whole shell command (an open quote)"
    return plain


def _complete(line: str) -> bool:
    """Whether a recipe line closes its quotes (make runs each line alone; joined, an open quote
    would swallow the next)."""
    try:
        shlex.split(line)
    except ValueError:
        return False
    return not line.endswith("\\")


# -- npm / pnpm / yarn ------------------------------------------------------------------------------


def _package_script(tool: str, args: list[str], cwd: Path) -> Unwrapped | None:
    if args[:1] == ["test"] or args[:1] == ["t"] and tool == "npm":
        extra = args[1:]
    elif args[:2] in (["run", "test"], ["run-script", "test"]):
        extra = args[2:]
    else:
        return None
    wrapper = f"{tool} test"
    text = _read(cwd / "package.json")
    try:
        manifest = json.loads(text) if text is not None else None
    except (ValueError, RecursionError):
        manifest = None
    scripts = manifest.get("scripts") if isinstance(manifest, dict) else None
    script = scripts.get("test") if isinstance(scripts, dict) else None
    if not isinstance(script, str):
        return Unwrapped(wrapper, None, "package.json has no `test` script vacant could read")
    passed = extra[1:] if extra[:1] == ["--"] else extra
    return Unwrapped(wrapper, script + (" " + shlex.join(passed) if passed else ""))


# -- uv run -----------------------------------------------------------------------------------------

# uv run's options that take a value (the rest are flags)
_UV_VALUED = {"--with", "--with-requirements", "--with-editable", "--python", "-p", "--package", "--extra",
              "--group", "--env-file", "--directory", "--project", "--index", "--index-url", "--default-index",
              "--extra-index-url", "--find-links", "-f", "--config-file", "--cache-dir", "--only-group", "--no-group"}


def _uv_run(args: list[str]) -> Unwrapped:
    at = 0
    while at < len(args) and args[at].startswith("-"):
        if args[at] == "--":
            at += 1
            break
        at += 2 if args[at] in _UV_VALUED else 1
    if at >= len(args):
        return Unwrapped("uv run", None, "uv run is given no program")
    return Unwrapped("uv run", shlex.join(args[at:]))


# -- nox --------------------------------------------------------------------------------------------


def _nox(args: list[str], cwd: Path) -> Unwrapped:
    wanted = _option_values(args, ("-s", "--session", "--sessions"))
    text = _read(cwd / "noxfile.py")
    if text is None:
        return Unwrapped("nox", None, "no noxfile.py vacant could read")
    commands = nox_commands(text, wanted)
    if isinstance(commands, str):
        return Unwrapped("nox", None, commands)
    return Unwrapped("nox", "\n".join(commands))


def _option_values(args: list[str], names: tuple[str, ...]) -> list[str]:
    values = []
    for at, arg in enumerate(args):
        if arg in names and at + 1 < len(args):
            values += args[at + 1].split(",")
        elif any(arg.startswith(name + "=") for name in names):
            values += arg.split("=", 1)[1].split(",")
    return values


def nox_commands(text: str, wanted: list[str]) -> list[str] | str:
    """The `session.run(...)` commands of the sessions nox would run (every session when none is
    named), each of literal strings; or why they cannot be read."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return "noxfile.py does not parse"
    commands: list[str] = []
    for function in tree.body:
        if not isinstance(function, ast.FunctionDef) or not any(_is_session(d) for d in function.decorator_list):
            continue
        if wanted and function.name not in wanted:
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "run":
                words = [arg.value for arg in node.args if isinstance(arg, ast.Constant) and isinstance(arg.value, str)]
                if len(words) != len(node.args) or not words:
                    return f"session {function.name!r} builds a command vacant cannot read"
                commands.append(shlex.join(words))
    return commands or "no session.run(...) in the sessions nox would run"


def _is_session(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return isinstance(target, ast.Attribute) and target.attr == "session"


# -- tox --------------------------------------------------------------------------------------------


def _tox(args: list[str], cwd: Path) -> Unwrapped:
    envs = _option_values(args, ("-e", "--env"))
    text = _read(cwd / "tox.ini")
    if text is None:
        return Unwrapped("tox", None, "no tox.ini vacant could read")
    commands = tox_commands(text, envs[0] if len(envs) == 1 else None)
    if isinstance(commands, str):
        return Unwrapped("tox", None, commands)
    return Unwrapped("tox", "\n".join(commands), env_reaches=False)


def tox_commands(text: str, env: str | None) -> list[str] | str:
    """The `commands` of `[testenv:ENV]` (or `[testenv]`) in tox.ini, `{posargs}` dropped; or why
    they cannot be read (another substitution)."""
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return "tox.ini does not parse"
    section = f"testenv:{env}" if env and parser.has_section(f"testenv:{env}") else "testenv"
    if not parser.has_option(section, "commands"):
        return f"tox.ini's [{section}] has no commands"
    lines = [line.strip().replace("{posargs}", "").strip() for line in parser.get(section, "commands").splitlines()]
    lines = [line for line in lines if line and not line.startswith("#")]
    if any("{" in line for line in lines):
        return f"tox.ini's [{section}] commands use substitutions vacant does not resolve"
    return lines


def wrapper_note(command: str, cwd: Path) -> str | None:
    """One sentence for `contract add` when the command is a wrapper whose runner vacant cannot
    read per test (None when it is no wrapper, or one it reads)."""
    found = unwrap(command, cwd)
    if found is None:
        return None
    if found.command is None:
        return (f"`{found.wrapper}` runs whole, one finding for the check, unless it runs pytest (which vacant "
                f"reaches through the environment): vacant cannot tell which test runner it calls ({found.why}); "
                "name the runner's command in the check for a finding per test")
    if not found.env_reaches and re.search(r"\b(?:pytest|py\.test|unittest)\b", found.command):
        return (f"`{found.wrapper}` passes its commands only the variables its pass_env names, so pytest's or "
                "unittest's report options do not reach them: add `PYTEST_ADDOPTS`, `PYTHONPATH` and `VACANT_*` "
                "to pass_env for a finding per test, else the check is read from its output")
    return None
