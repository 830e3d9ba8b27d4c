"""The gate's policy: which actions are ACT (the shipped rules, policy/shipped.py, plus `[gate]` in
`vacant.toml`), the fixed refusal sentences, and the validator of the `[gate]` table (its value checks,
in policy/shipped.py, are the contract schema's too). Stdlib only (hot path); `tomllib` is imported
only when `vacant.toml` has a `[gate]` table that is not in the parse cache.
"""

from __future__ import annotations

from vacant.core import leanjson as json  # not `import json`: 13 ms CPU of each hook call (vacant/hook/lean.py)
from pathlib import Path

from vacant.core.leanstd import namedtuple
from vacant.core.atomic import atomic_write
from vacant.core.locations import state_dir
from vacant.core.safeio import SMALL_CAP, read_capped
from vacant.policy.shipped import (CODE_RULES, DEFAULT_ARMS, DEFAULT_RULES, NAME_PATTERN, RULE_NAMES, Rule,
                                   arms_problem, regex_problem)

CONTRACT_FILE = "vacant.toml"
MODE_REFUSAL = "Refusing to write {path} — it must include a `MODE: READ` or `MODE: ACT` line"
MODE_HINT = ("; put it first (after a `#!` line, if any), in the script's comment syntax, e.g. `# MODE: READ`. "
             "Nothing was written.")
ANSWER_REFUSAL = (
    "Refused: `vacant approve` and `vacant decline` are the person's answer and must be typed by the person in "
    "their own shell. An agent running them would be answering its own question, so nothing was approved or "
    "declined and nothing has been done. Tell the person what you want to do and let them answer."
)
PERSON_REFUSAL = (
    "Refused: `vacant {verb}` speaks for the person (it files or withdraws their finding, or removes vacant's "
    "hooks) and must be typed by the person in their own shell. Nothing has been done. Tell the person what you "
    "want and why, and let them decide."
)
TOO_LONG = (
    "Not run: this command line is more than vacant reads (at most {limit} characters, read within {budget:g} s; "
    "this one has {size}), so vacant cannot tell whether it acts beyond the work. Nothing has been done. Split "
    "the work into shorter commands, or write the long text to a file first."
)
MAX_COMMAND_CHARS = 256 * 1024
SCAN_BUDGET_S = 2.0  # the shell reader's time for one command line (then the call is refused)
KEY_REFUSAL = (
    "Refused: {path} is the person's signing key (it signs their answers); an agent may not read or change it. "
    "Nothing has been done."
)
WALL_REFUSAL = (
    "Refused: {path} is behind vacant's wall ({base}: vacant's own key, records, daemon, hook settings or "
    "install); an agent's tools may not {verb} it, in any scope. Nothing has been done."
)
CONFIG_REFUSAL = (
    "Not run: vacant cannot read the [gate] policy in vacant.toml ({error}), so it cannot tell whether this action "
    "acts beyond the work. Nothing has been done. Ask the person to fix vacant.toml (`vacant gate` shows what is wrong)."
)
FAILED = (
    "Not run: vacant could not decide whether this action may run ({error}), so it was stopped. Nothing has been "
    "done. This is vacant's own error, not yours: tell the person (details in errors.log in vacant's state directory; `vacant doctor` names it)."
)
MAX_DEPTH = 8

Policy = namedtuple("Policy", "act allow arms removed error")
Hit = namedtuple("Hit", "rule why")
# kind: pass | act | refuse. For act, `action` is an Action; for refuse, `message` says why.
Verdict = namedtuple("Verdict", "kind action message")
# kind: command | arm | tool; command: the normal form; receipts: what the person is shown
Action = namedtuple("Action", "kind tool command cwd hits receipts fingerprint")

PASS = Verdict("pass", None, "")



_DEFAULT_POLICY = Policy(DEFAULT_RULES, (), DEFAULT_ARMS, frozenset(), None)


# -- reading [gate] (cached: the hot path rarely pays for a TOML parse) ---------------------------


def table_problems(table: object) -> list[str]:
    """Every problem of a raw `[gate]` table (the pydantic model in contract.py says the same)."""
    if not isinstance(table, dict):
        return ["[gate] must be a table"]
    problems: list[str] = []
    allowed = {"arms", "defaults", "remove", "act", "allow"}
    for key in table:
        if key not in allowed:
            problems.append(f"[gate]: unknown key {key!r}: allowed keys are {', '.join(sorted(allowed))}")
    if "arms" in table and arms_problem(table["arms"]):
        problems.append(f"[gate] arms {arms_problem(table['arms'])}")
    if "defaults" in table and not isinstance(table["defaults"], bool):
        problems.append("[gate] defaults must be true or false")
    remove = table.get("remove", [])
    if not isinstance(remove, list) or not all(isinstance(name, str) for name in remove):
        problems.append("[gate] remove must be a list of rule names")
    else:
        for name in remove:
            if name not in RULE_NAMES:
                problems.append(f"[gate] remove: no rule named {name!r}; the shipped rules are {', '.join(RULE_NAMES)}")
    for kind in ("act", "allow"):
        rules = table.get(kind, [])
        if not isinstance(rules, list):
            problems.append(f"[gate] {kind} must be an array of tables: [[gate.{kind}]]")
            continue
        for index, rule in enumerate(rules):
            where = f"[[gate.{kind}]] #{index + 1}"
            if not isinstance(rule, dict):
                problems.append(f"{where} must be a table")
                continue
            for key in rule:
                if key not in ("name", "tool", "command", "why"):
                    problems.append(f"{where}: unknown key {key!r}: allowed keys are name, tool, command, why")
            name = rule.get("name")
            if not isinstance(name, str) or not NAME_PATTERN.match(name):
                problems.append(f"{where}: name must be lowercase letters, digits and '-' (^[a-z0-9][a-z0-9-]*$)")
            if "tool" not in rule and "command" not in rule:
                problems.append(f"{where}: give a tool (regex of tool names) or a command (regex), or both")
            for key in ("tool", "command"):
                if key in rule and regex_problem(rule[key]):
                    problems.append(f"{where}: {key} {regex_problem(rule[key])}")
            if "why" in rule and not isinstance(rule["why"], str):
                problems.append(f"{where}: why must be a string (what the action may change)")
    return problems


def policy_from_table(table: dict) -> Policy:
    problems = table_problems(table)
    if problems:
        return _DEFAULT_POLICY._replace(error=problems[0])
    removed = frozenset(table.get("remove", []))
    act = [rule for rule in DEFAULT_RULES if rule.name not in removed] if table.get("defaults", True) else []
    if not table.get("defaults", True):
        removed = removed | set(CODE_RULES)

    import re

    def build(raw: dict, default_why: str) -> Rule:
        return Rule(raw["name"], re.compile(raw["tool"]) if raw.get("tool") else None,
                    re.compile(raw["command"]) if raw.get("command") else None, raw.get("why") or default_why)

    act += [build(raw, f"whatever the rule {raw['name']!r} in vacant.toml guards") for raw in table.get("act", [])]
    allow = [build(raw, "") for raw in table.get("allow", [])]
    return Policy(tuple(act), tuple(allow), table.get("arms", DEFAULT_ARMS), removed, None)


def parse_gate_table(data: bytes) -> tuple[dict | None, str | None]:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    try:
        raw = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        return None, f"vacant.toml is not valid TOML: {error}"
    table = raw.get("gate", {})
    return (table if isinstance(table, dict) else {"_": table}), None


def load_policy(root: Path, state: Path | None = None) -> Policy:
    """The policy of this workspace: the defaults, changed by `[gate]` (error set when unreadable).
    `state`: the workspace's state directory when the caller has just found it (else found here)."""
    try:
        data = read_capped(Path(root) / CONTRACT_FILE, SMALL_CAP)
    except FileNotFoundError:
        return _DEFAULT_POLICY
    except OSError as error:
        return _DEFAULT_POLICY._replace(error=f"cannot read {CONTRACT_FILE}: {error.strerror}")
    if b"gate" not in data:  # what the pattern below needs in any match: most contracts need no `re`
        return _DEFAULT_POLICY
    import re

    if not re.search(rb"^\s*\[\s*\[?\s*gate\b|^\s*gate\s*[.=]", data, re.MULTILINE):
        return _DEFAULT_POLICY
    import xxhash

    key = xxhash.xxh3_128_hexdigest(data)
    cache = (state_dir(root) if state is None else Path(state)) / "gate-policy.json"
    try:
        cached = json.loads(cache.read_bytes())
        if cached.get("key") == key:
            if cached.get("error"):
                return _DEFAULT_POLICY._replace(error=cached["error"])
            return policy_from_table(cached["table"])
    except (OSError, ValueError, AttributeError, KeyError):
        pass
    table, error = parse_gate_table(data)
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(cache, json.dumps({"key": key, "table": table, "error": error}))
    except (OSError, TypeError, ValueError):
        pass  # the cache is an optimisation only
    if error:
        return _DEFAULT_POLICY._replace(error=error)
    return policy_from_table(table)
