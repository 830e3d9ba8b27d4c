"""The contract: `vacant.toml` at the workspace root, validated, and red-first where a check is born.

    task_family = "report"
    pinned = ["data/*.csv"]           # given inputs (globs, `**` recursive)
    deliverables = ["report.md"]      # what the work produces (globs)

    [[guard]]                         # holds now, and must still hold at every Stop
    name = "tests"
    command = "python -m unittest -q"
    timeout = 600

    [[check]]                         # false now, true when the work is done
    name = "totals"
    command = "python -m pytest -q tests/test_report.py"
    timeout = 60

    [stop]                            # the Stop pipeline's limits
    rounds = 3
    budget_s = 300

    [gate]                            # the confirmation gate (docs/GATE.md)
    arms = "arms"                     # where arms live (MODE: READ / MODE: ACT on line 1)
    remove = ["http-write"]           # shipped rules to drop, by name
    [[gate.act]]                      # more ACT rules: a tool-name regex and/or a command regex
    name = "release"
    command = '^make release$'
    why = "the public release"
    [[gate.allow]]                    # exceptions: matching actions are READ
    name = "dry-run"
    command = '--dry-run'

A bad file gets one message naming the file, the line, the key and what is allowed
(`ContractError`); an unknown key is named with the nearest valid one. `[[precondition]]` is the
old name of `[[guard]]` and is still read. `add_check` (vacant/policy/contract/red_first.py) runs the
command before accepting it.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    ValidationError,
    field_validator,
    model_validator,
)

from vacant.core.docgen import GeneratedDoc
from vacant.core.safeio import SMALL_CAP, read_capped
from vacant.policy.contract.contract_lines import line_of, quoted_line, toml_position
from vacant.policy.shipped import RULE_NAMES, arms_problem, regex_problem

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


CONTRACT_FILE = "vacant.toml"
NAME_PATTERN = r"^[a-z0-9][a-z0-9-]*$"
PROBE_CAP_S = 30.0  # an acceptance check's probe: a quick one-liner
DEFAULT_TIMEOUT_S = 300.0  # also a guard's probe cap (a whole suite may take minutes): its `timeout`
MAX_TIMEOUT_S = 86400.0
MAX_ROUNDS = 8  # Claude Code's own cap on Stop-hook continuations
MAX_BUDGET_S = 3600.0

MULTILINE = "make it one line: join with ';', or move the logic into a test file and run that"
GREEN_FIRST = (
    "a check green before the work cannot measure the work: if it must stay green (the project's test "
    "suite, a statement about the current state), add it as a guard with --keep; an acceptance check is "
    "what is false now and true when the work is done"
)
GUARD_TABLES = ("guard", "precondition")  # `precondition`: the old name, still read
CHECK_TABLES = (*GUARD_TABLES, "check")

ALLOWED: dict[str, str] = {
    "task_family": 'a non-empty one-line string, e.g. "general"',
    "pinned": 'a list of glob strings inside the workspace, e.g. ["data/*.csv", "spec/**/*.md"]',
    "deliverables": 'a list of glob strings inside the workspace, e.g. ["report.md", "src/**/*.py"]',
    "check": "an array of tables: [[check]] with name, command and optional timeout",
    "guard": "an array of tables: [[guard]] with name, command and optional timeout: holds now, must hold at every Stop",
    "precondition": "the old name of [[guard]], still read",
    "name": "lowercase letters, digits and '-', starting with a letter or digit (^[a-z0-9][a-z0-9-]*$)",
    "command": "exactly one line of shell (run as `bash -c`)",
    "timeout": f"a number of seconds greater than 0 and at most {MAX_TIMEOUT_S:g} (default {DEFAULT_TIMEOUT_S:g})",
    "probe": "a table {exit_code, seconds, at} written by `vacant contract add`",
    "junit": 'the JUnit XML file the command writes, relative to the workspace, e.g. "reports/junit.xml" '
             "(one finding per failing test; pytest needs none: vacant asks it for one)",
    "network": "true or false (default false): whether the check may reach the network; behind the wall "
               "(docs/TRUST.md) a check without it has a loopback interface only",
    "exit_code": "an integer, or absent when the probe timed out",
    "seconds": "a number of seconds",
    "at": "an ISO 8601 time string",
    "timed_out": "true or false",
    "env": "the name of a missing tool",
    "broken": "why the probe was red for the wrong reason (added with --allow-broken; docs/CONTRACT.md)",
    "background": "true when a guard's probe ran in a process of its own (`vacant contract add --keep`), which may "
                  "finish after the command returned: the guard counts from `at` (docs/CONTRACT.md)",
    "stop": "a table [stop] with rounds and budget_s",
    "rounds": f"an integer from 0 (never block, report only) to {MAX_ROUNDS} (default 3)",
    "budget_s": f"a number of seconds greater than 0 and at most {MAX_BUDGET_S:g} (default 300)",
    "gate": "a table [gate] with arms, defaults, remove, [[gate.act]] and [[gate.allow]]",
    "store": 'a table [store] with exclude, e.g. exclude = ["secrets/**", ".env"]',
    "exclude": 'a list of glob strings inside the workspace whose contents are never stored, e.g. ["secrets/**"]',
    "arms": 'a directory relative to the workspace, without "..", e.g. "arms"',
    "defaults": "true (use the shipped ACT rules) or false (start from none)",
    "remove": "a list of shipped rule names (`vacant gate` lists them)",
    "act": "an array of tables [[gate.act]] with name, tool and/or command (regexes), and why",
    "allow": "an array of tables [[gate.allow]] with name, tool and/or command (regexes)",
    "tool": "a regular expression matched against the whole tool name, e.g. mcp__github__.*",
    "why": "one line: what the action may change",
}


class ContractError(ValueError):
    """vacant.toml is invalid, or a check was refused (one message saying what is allowed).
    `path`, `line` and `key` say where, when known."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None, key: str | None = None) -> None:
        super().__init__(message)
        self.path, self.line, self.key = path, line, key


class CheckRefused(ContractError):
    """`vacant contract add` refused a check (green-first acceptance, red precondition, ...)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class Probe(_Strict):
    exit_code: int | None = None
    seconds: float
    at: str
    timed_out: bool = False
    env: str | None = None
    broken: str | None = None
    background: bool = False  # probed in a detached process (it may end after `contract add`): counts from `at`


def _one_line(value: str) -> str:
    value = value.strip()
    if not value:
        raise ValueError("is empty: give one line of shell")
    if "\n" in value or "\r" in value:
        raise ValueError(f"is more than one line: {MULTILINE}")
    return value


class Check(_Strict):
    name: str
    command: str
    timeout: float = DEFAULT_TIMEOUT_S
    probe: Probe | None = None
    junit: str | None = None
    network: bool = False  # behind the wall a check has loopback only, unless its item says so

    @field_validator("junit")
    @classmethod
    def _junit(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if not value.strip() or os.path.isabs(value) or ".." in Path(value).parts:
            raise ValueError(f"{value!r} is not allowed: use {ALLOWED['junit']}")
        return value

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not re.match(NAME_PATTERN, value):
            raise ValueError(f"{value!r} is not allowed: use {ALLOWED['name']}")
        return value

    @field_validator("command")
    @classmethod
    def _command(cls, value: str) -> str:
        return _one_line(value)

    @field_validator("timeout")
    @classmethod
    def _timeout(cls, value: float) -> float:
        if not 0 < value <= MAX_TIMEOUT_S:
            raise ValueError(f"{value:g} is out of range: use {ALLOWED['timeout']}")
        return value


class StopSettings(_Strict):
    rounds: int = 3
    budget_s: float = 300.0

    @field_validator("rounds")
    @classmethod
    def _rounds(cls, value: int) -> int:
        if not 0 <= value <= MAX_ROUNDS:
            raise ValueError(f"{value} is out of range: use {ALLOWED['rounds']}")
        return value

    @field_validator("budget_s")
    @classmethod
    def _budget(cls, value: float) -> float:
        if not 0 < value <= MAX_BUDGET_S:
            raise ValueError(f"{value:g} is out of range: use {ALLOWED['budget_s']}")
        return value


class GateRule(_Strict):
    name: str
    tool: str | None = None
    command: str | None = None
    why: str | None = None

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not re.match(NAME_PATTERN, value):
            raise ValueError(f"{value!r} is not allowed: use {ALLOWED['name']}")
        return value

    @field_validator("tool", "command")
    @classmethod
    def _regex(cls, value: str | None) -> str | None:
        problem = regex_problem(value) if value is not None else None
        if problem:
            raise ValueError(problem)
        return value

    @model_validator(mode="after")
    def _something(self) -> "GateRule":
        if self.tool is None and self.command is None:
            raise ValueError("give a tool (regex of tool names) or a command (regex), or both")
        return self


class GateSettings(_Strict):
    '''The `[gate]` table: shipped ACT rules, minus `remove`, plus `act`; `allow` makes exceptions.'''

    arms: str = "arms"
    defaults: bool = True
    remove: list[str] = []
    act: list[GateRule] = []
    allow: list[GateRule] = []

    @field_validator("arms")
    @classmethod
    def _arms(cls, value: str) -> str:
        problem = arms_problem(value)
        if problem:
            raise ValueError(problem)
        return value

    @field_validator("remove")
    @classmethod
    def _remove(cls, value: list[str]) -> list[str]:
        for name in value:
            if name not in RULE_NAMES:
                raise ValueError(f"no shipped rule is named {name!r}; they are {', '.join(RULE_NAMES)}")
        return value


class StoreSettings(_Strict):
    """The `[store]` table: `exclude` globs whose contents are hashed but never stored
    (vacant/store/exclude.py reads the same table on the hot path)."""

    exclude: list[str] = []

    @field_validator("exclude")
    @classmethod
    def _exclude(cls, value: list[str]) -> list[str]:
        return [_check_glob(glob) for glob in value]


def _check_glob(value: str) -> str:
    if not value.strip():
        raise ValueError("holds an empty glob")
    if os.path.isabs(value) or ".." in Path(value).parts:
        raise ValueError(f"glob {value!r} leaves the workspace: use paths relative to the workspace root, without '..'")
    return value


class Contract(_Strict):
    task_family: str = "general"
    pinned: list[str] = []
    deliverables: list[str] = []
    check: list[Check] = []
    guard: list[Check] = []
    precondition: list[Check] = []
    stop: StopSettings = StopSettings()
    gate: GateSettings = GateSettings()
    store: StoreSettings = StoreSettings()

    @field_validator("task_family")
    @classmethod
    def _family(cls, value: str) -> str:
        return _one_line(value)

    @field_validator("pinned", "deliverables")
    @classmethod
    def _globs(cls, value: list[str]) -> list[str]:
        return [_check_glob(item) for item in value]

    @model_validator(mode="after")
    def _unique_names(self) -> "Contract":
        seen: dict[str, str] = {}
        for table in CHECK_TABLES:
            for item in getattr(self, table):
                if item.name in seen:
                    raise ValueError(
                        f"the name {item.name!r} is used twice ([[{seen[item.name]}]] and [[{table}]]): "
                        "every check and guard needs its own name"
                    )
                seen[item.name] = table
        return self

    @property
    def guards(self) -> list[Check]:
        """Every guard: `[[guard]]` and the old `[[precondition]]`."""
        return [*self.guard, *self.precondition]

    def all_checks(self) -> list[tuple[Check, bool]]:
        """(check, is_guard), guards first: everything the Stop runs."""
        return [(item, True) for item in self.guards] + [(item, False) for item in self.check]

    def is_guard(self, name: str) -> bool:
        return any(item.name == name for item in self.guards)

    def names(self) -> set[str]:
        return {item.name for item, _ in self.all_checks()}


# -- loading, with one clear message --------------------------------------------------------------


def _show(value: Any) -> str:
    text = repr(value)
    text = text if len(text) <= 60 else text[:59] + "…"
    return f"{text} ({type(value).__name__})"


def describe_error(error: dict[str, Any], raw: dict[str, Any]) -> str:
    """One sentence for one pydantic error: where, which key, what was given, what is allowed."""
    loc = list(error["loc"])
    kind = error["type"]
    where, rest = "", loc
    if len(loc) >= 2 and loc[0] in CHECK_TABLES and isinstance(loc[1], int):
        entries = raw.get(loc[0])
        entry = entries[loc[1]] if isinstance(entries, list) and loc[1] < len(entries) else None
        named = entry.get("name") if isinstance(entry, dict) else None
        where = f"[[{loc[0]}]] #{loc[1] + 1}" + (f" ({named!r})" if isinstance(named, str) else "")
        rest = loc[2:]
    elif len(loc) >= 2 and loc[0] == "stop":
        where, rest = "[stop]", loc[1:]
    elif len(loc) >= 3 and loc[0] == "gate" and loc[1] in ("act", "allow") and isinstance(loc[2], int):
        where, rest = f"[[gate.{loc[1]}]] #{loc[2] + 1}", loc[3:]
    elif len(loc) >= 2 and loc[0] == "gate":
        where, rest = "[gate]", loc[1:]
    names = [str(part) for part in rest if not isinstance(part, int)]
    items = [part for part in rest if isinstance(part, int)]
    key = ".".join(names) if names else (str(loc[0]) if loc else "")
    last = names[-1] if names else key
    label = f"key {key!r}" + (f" item #{items[-1] + 1}" if items and names else "")
    prefix = f"{where}: " if where else ""
    if kind == "extra_forbidden":
        allowed = _keys_of(loc[:-1])
        nearest = nearest_key(str(loc[-1]), allowed)
        hint = f" (did you mean {nearest!r}?)" if nearest else ""
        return f"{prefix}unknown key {key!r}{hint}: allowed keys are {', '.join(allowed)}"
    if kind == "missing":
        return f"{prefix}{label} is missing: it must be {ALLOWED.get(last, 'given')}"
    if kind == "value_error":
        message = str(error.get("msg", "")).removeprefix("Value error, ")
        if where and not names:  # a table-level rule (e.g. a [[gate.act]] with neither tool nor command)
            return f"{prefix}{message}"
        return f"{prefix}{label}: {message}" if loc else message
    return f"{prefix}{label} = {_show(error.get('input'))} is not allowed: it must be {ALLOWED.get(last, 'valid')}"


def _keys_of(loc: list[Any]) -> list[str]:
    model: type[BaseModel] = Contract
    for part in loc:
        if isinstance(part, int):
            continue
        if part in CHECK_TABLES:
            model = Check
        elif part == "stop":
            model = StopSettings
        elif part == "gate":
            model = GateSettings
        elif part in ("act", "allow"):
            model = GateRule
        elif part == "probe":
            model = Probe
    return list(model.model_fields)


def nearest_key(given: str, allowed: list[str]) -> str | None:
    """The allowed key `given` is most likely a misspelling of (`comand` → `command`), or None."""
    close = difflib.get_close_matches(given.lower(), allowed, n=1, cutoff=0.6)
    return close[0] if close else None


def _ordered(problems: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Unknown keys first; a missing key that an unknown one next to it misspells is the same
    problem (`comand` given, `command` missing), so it is not counted twice."""
    unknown = [p for p in problems if p["type"] == "extra_forbidden"]
    meant = {(tuple(p["loc"][:-1]), nearest_key(str(p["loc"][-1]), _keys_of(list(p["loc"][:-1])))) for p in unknown}
    rest = [p for p in problems if p["type"] != "extra_forbidden"
            and not (p["type"] == "missing" and (tuple(p["loc"][:-1]), str(p["loc"][-1])) in meant)]
    return unknown + rest


def parse_contract(text: str, source: str = CONTRACT_FILE) -> Contract:
    """The contract in `text`; ContractError naming `source`, the line and the key otherwise."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        message, line, column = toml_position(str(error))
        where = f" at line {line}, column {column}" if line else ""
        raise ContractError(f"{source} is not valid TOML{where}{quoted_line(text, line)}: {message}",
                            path=source, line=line) from None
    try:
        return Contract.model_validate(raw)
    except ValidationError as error:
        problems = _ordered(error.errors(include_url=False))
        first = problems[0]
        line = line_of(text, list(first["loc"]))
        more = f" (and {len(problems) - 1} more problem{'s' if len(problems) > 2 else ''})" if len(problems) > 1 else ""
        at = f", line {line}" if line else ""
        key = ".".join(str(part) for part in first["loc"] if not isinstance(part, int)) or None
        raise ContractError(f"{source}{at}: {describe_error(first, raw)}{more}", path=source, line=line,
                            key=key) from None


def rounds_hint(root: Path) -> int:
    """The `[stop] rounds` of a vacant.toml that does not load, read as far as it goes (3 when it
    cannot be read at all): a broken contract still honours `rounds = 0` (report only)."""
    try:
        text = read_capped(contract_path(root), SMALL_CAP).decode("utf-8", errors="replace")
    except OSError:
        return 3
    section = ""
    for line in text.splitlines():
        header = re.match(r"^\s*\[+\s*([\w.-]+)", line)
        if header:
            section = header.group(1)
            continue
        found = re.match(r"^\s*rounds\s*=\s*(\d+)\s*(?:#.*)?$", line)
        if section == "stop" and found and int(found.group(1)) <= MAX_ROUNDS:
            return int(found.group(1))
    return 3


def contract_path(root: Path) -> Path:
    return Path(root) / CONTRACT_FILE


def load_contract(root: Path) -> Contract | None:
    """The workspace's contract, None when it has no vacant.toml; ContractError when it is invalid."""
    path = contract_path(root)
    try:
        data = read_capped(path, SMALL_CAP)  # never a FIFO's or device's content, never unbounded
    except FileNotFoundError:
        return None
    except OSError as error:
        raise ContractError(f"cannot read {path}: {error.strerror}", path=str(path)) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ContractError(f"{path} is not UTF-8 text: save it as UTF-8", path=str(path)) from None
    return parse_contract(text, str(path))


# -- the reference table in docs/CONTRACT.md, generated from the models above ---------------------

RULE_ALLOWED = {"command": "a regular expression searched in the command line (its normal form)"}
_TABLES = (("top level", "Contract"), ("[[check]], [[guard]]", "Check"), ("probe", "Probe"),
           ("[stop]", "StopSettings"), ("[gate]", "GateSettings"), ("[[gate.act]], [[gate.allow]]", "GateRule"))


def _default(field: Any) -> str:
    if field.is_required():
        return "required"
    value = field.get_default(call_default_factory=True)
    if isinstance(value, BaseModel):
        return "its defaults"
    return "none" if value is None else f"`{json.dumps(value)}`"


def render_fields() -> str:
    """Every key `vacant.toml` accepts, table by table, with what is allowed (the same words a
    bad file's error message uses) and its default. Any other key is an error."""
    lines = ["| table | key | allowed | default |", "|---|---|---|---|"]
    for table, model_name in _TABLES:
        model = globals()[model_name]
        for key, field in model.model_fields.items():
            allowed = RULE_ALLOWED.get(key, ALLOWED[key]) if model is GateRule else ALLOWED[key]
            lines.append(f"| {table} | `{key}` | {allowed} | {_default(field)} |")
    return "\n".join(lines) + "\n"


DOC = GeneratedDoc("CONTRACT.md", render_fields, ("vacant/policy/contract/contract.py",), region=True)
