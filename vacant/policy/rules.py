"""The gate's policy: which actions are ACT (the shipped rules plus `[gate]` in `vacant.toml`),
the fixed refusal sentences, and the one validator of the `[gate]` table (the contract's schema
uses it too). Stdlib only (hot path); `tomllib` is imported only when `vacant.toml` has a `[gate]`
table that is not in the parse cache.
"""

from __future__ import annotations

import json
import os
import re
from collections import namedtuple
from pathlib import Path

from vacant.core.atomic import atomic_write
from vacant.core.locations import state_dir

CONTRACT_FILE = "vacant.toml"
DEFAULT_ARMS = "arms"
MODE_REFUSAL = "Refusing to write {path} — it must include a `MODE: READ` or `MODE: ACT` line"
MODE_HINT = ("; put it first (after a `#!` line, if any), in the script's comment syntax, e.g. `# MODE: READ`. "
             "Nothing was written.")
ANSWER_REFUSAL = (
    "Refused: `vacant approve` and `vacant decline` are the person's answer and must be typed by the person in "
    "their own shell. An agent running them would be answering its own question, so nothing was approved or "
    "declined and nothing has been done. Tell the person what you want to do and let them answer."
)
KEY_REFUSAL = (
    "Refused: {path} is the person's signing key (it signs their answers); an agent may not read or change it. "
    "Nothing has been done."
)
CONFIG_REFUSAL = (
    "Not run: vacant cannot read the [gate] policy in vacant.toml ({error}), so it cannot tell whether this action "
    "acts beyond the work. Nothing has been done. Ask the person to fix vacant.toml (`vacant gate` shows what is wrong)."
)
FAILED = (
    "Not run: vacant could not decide whether this action may run ({error}), so it was stopped. Nothing has been "
    "done. This is vacant's own error, not yours: tell the person (details in .vacant/errors.log)."
)
NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9-]*$")
MAX_DEPTH = 8

Rule = namedtuple("Rule", "name tool command why")  # tool/command: compiled regex or None
Policy = namedtuple("Policy", "act allow arms removed error")
Hit = namedtuple("Hit", "rule why")
# kind: pass | act | refuse. For act, `action` is an Action; for refuse, `message` says why.
Verdict = namedtuple("Verdict", "kind action message")
# kind: command | arm | tool; command: the normal form; receipts: what the person is shown
Action = namedtuple("Action", "kind tool command cwd hits receipts fingerprint")

PASS = Verdict("pass", None, "")


def _rx(pattern: str) -> "re.Pattern[str]":
    return re.compile(pattern)


# -- the shipped policy ---------------------------------------------------------------------------

_OPTS = r"(?:\s+(?:-C|-c|--git-dir|--work-tree|--namespace)\s+\S+|\s+-\S*)*"
DEFAULT_RULES = (
    Rule("git-push", None, _rx(r"^git" + _OPTS + r"\s+push(?:\s|$)"),
         "a remote git repository (commits, branches or tags pushed where others see them)"),
    Rule("package-publish", None, _rx(
        r"^(?:(?:npm|pnpm|yarn|bun)(?:\s+\S+)*?\s+publish|twine\s+upload|python[0-9.]*\s+-m\s+twine\s+upload"
        r"|cargo\s+publish|(?:poetry|flit|uv|hatch|pdm)\s+publish|gem\s+push|docker\s+(?:image\s+)?push"
        r"|podman\s+push|gh\s+release\s+(?:create|upload))(?:\s|$)"),
         "a package registry (a release others can install)"),
    Rule("deploy", None, _rx(
        r"^(?:kubectl(?:\s+\S+)*?\s+(?:apply|create|delete|replace|patch|scale|rollout|set|edit|annotate|label"
        r"|drain|cordon|expose|autoscale)|terraform(?:\s+-\S+)*\s+(?:apply|destroy|import)"
        r"|tofu(?:\s+-\S+)*\s+(?:apply|destroy)|helm(?:\s+\S+)*?\s+(?:install|upgrade|uninstall|rollback|delete)"
        r"|pulumi(?:\s+\S+)*?\s+(?:up|destroy|update)|(?:serverless|sls|fly|flyctl|netlify|firebase|eb|cdk"
        r"|railway|wrangler)\s+(?:\S+\s+)*?(?:deploy|publish|up)|vercel(?:\s|$)|ansible-playbook"
        r"|docker\s+(?:stack|service)\s+(?:deploy|update|rm|create)|gcloud(?:\s+\S+)*?\s+(?:deploy|create|delete|update)"
        r"|aws(?:\s+\S+)*?\s+(?:deploy|create-\S+|delete-\S+|put-\S+|update-\S+|cp|sync|rm|mv)"
        r"|az(?:\s+\S+)*?\s+(?:create|delete|update|deploy))(?:\s|$)"),
         "deployed infrastructure or services (a cluster, a cloud account, a live site)"),
    Rule("http-write", None, _rx(
        r"^(?:curl\s(?:.*\s)?(?:-[a-zA-Z]*X\s*'?(?:POST|PUT|PATCH|DELETE)\b|--request[\s=]'?(?:POST|PUT|PATCH|DELETE)\b"
        r"|-[a-zA-Z]*[dFT](?:\s|$|\S)|--data\S*|--form\S*|--json|--upload-file)"
        r"|wget\s(?:.*\s)?--(?:post-data|post-file|body-data|body-file|method)"
        r"|https?\s+(?:\S+\s+)*?(?:POST|PUT|PATCH|DELETE)\s|xh\s+(?:post|put|patch|delete)\s)"),
         "a remote service (an HTTP request that writes: POST, PUT, PATCH, DELETE or a request body)"),
)
# Rules implemented in code (not a regex); removable by name like the others.
CODE_RULES = {
    "delete-outside-workspace": "files outside the workspace (deleted)",
    "gate-self": "vacant's own hooks, gate policy or records (which decide what needs a person's answer)",
}
RULE_NAMES = tuple(rule.name for rule in DEFAULT_RULES) + tuple(CODE_RULES)

_DEFAULT_POLICY = Policy(DEFAULT_RULES, (), DEFAULT_ARMS, frozenset(), None)


# -- reading [gate] (cached: the hot path rarely pays for a TOML parse) ---------------------------


def regex_problem(pattern: object) -> str | None:
    if not isinstance(pattern, str) or not pattern:
        return "must be a non-empty regular expression string"
    try:
        re.compile(pattern)
    except re.error as error:
        return f"{pattern!r} is not a valid regular expression ({error})"
    return None


def arms_problem(value: object) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return "must be a directory path relative to the workspace, e.g. \"arms\""
    if os.path.isabs(value) or ".." in Path(value).parts:
        return f"{value!r} leaves the workspace: use a path relative to the workspace root, without '..'"
    return None


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


def load_policy(root: Path) -> Policy:
    """The policy of this workspace: the defaults, changed by `[gate]` (error set when unreadable)."""
    try:
        data = (Path(root) / CONTRACT_FILE).read_bytes()
    except FileNotFoundError:
        return _DEFAULT_POLICY
    except OSError as error:
        return _DEFAULT_POLICY._replace(error=f"cannot read {CONTRACT_FILE}: {error.strerror}")
    if not re.search(rb"^\s*\[\s*\[?\s*gate\b|^\s*gate\s*[.=]", data, re.MULTILINE):
        return _DEFAULT_POLICY
    import xxhash

    key = xxhash.xxh3_128_hexdigest(data)
    cache = state_dir(root) / "gate-policy.json"
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
