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
from vacant.core.lazyre import Lazy
from vacant.core.locations import state_dir
from vacant.core.safeio import SMALL_CAP, read_capped

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


def _rx(pattern: str) -> Lazy:
    """A shipped rule's pattern, compiled when a call first needs it (a Read needs none)."""
    return Lazy(pattern)


# -- the shipped policy ---------------------------------------------------------------------------

_OPTS = r"(?:\s+(?:-C|-c|--git-dir|--work-tree|--namespace|--exec-path|--config-env)\s+\S+|\s+-\S*)*"
_WRITE_METHOD = r"'?(?i:POST|PUT|PATCH|DELETE)\b"
DEFAULT_RULES = (
    Rule("git-push", None, _rx(
        r"^(?:git" + _OPTS + r"\s+(?:push|send-pack|http-push|subtree\s+push|lfs\s+push|svn\s+dcommit|p4\s+submit)"
        r"|git-(?:push|send-pack|http-push)|(?:hub|sl|jj|yadm)(?:\s+\S+)*?\s+(?:push|submit)|jj\s+git\s+push)(?:\s|$)"),
         "a remote git repository (commits, branches or tags pushed where others see them)"),
    Rule("package-publish", None, _rx(
        r"^(?:(?:npm|pnpm|yarn|bun)(?:\s+\S+)*?\s+(?:pub\w*|unpublish|deprecate|dist-tags?\s+(?:add|rm)|owner\s+(?:add|rm))"
        r"|twine\s+upload|python[0-9.]*\s+-m\s+twine\s+upload"
        r"|cargo\s+(?:publish|yank|owner)|(?:poetry|flit|uv|hatch|pdm|rye)\s+publish|gem\s+(?:push|yank)"
        r"|(?:docker|podman|buildah|nerdctl)\s+(?:image\s+|manifest\s+)?push|(?:docker\s+)?buildx\s+(?:\S+\s+)*?--push"
        r"|docker\s+build\s+(?:\S+\s+)*?--push|(?:docker\s+)?buildx\s+(?:\S+\s+)*?--output[= ]\S*type=registry"
        r"|helm\s+push|crane\s+(?:push|copy|cp|tag|delete)|oras\s+push|skopeo\s+(?:copy|delete|sync)"
        r"|ko\s+(?:publish|build|apply|resolve)|(?:dotnet\s+)?nuget\s+push|(?:anaconda|conda)\s+upload"
        r"|mvn\s+(?:\S+\s+)*?deploy|(?:\./)?gradlew?\s+(?:\S+\s+)*?publish\S*|gh\s+release\s+(?:create|upload|edit|delete)"
        r"|vsce\s+publish|ovsx\s+publish|swift\s+package-registry\s+publish|pod\s+trunk\s+push"
        r"|lerna\s+publish|changeset\s+publish|semantic-release|goreleaser\s+release|goreleaser$)(?:\s|$)"),
         "a package registry (a release others can install)"),
    Rule("deploy", None, _rx(
        r"^(?:kubectl(?:\s+\S+)*?\s+(?:apply|create|delete|replace|patch|scale|rollout|set|edit|annotate|label"
        r"|drain|cordon|expose|autoscale)|terraform(?:\s+-\S+)*\s+(?:apply|destroy|import)"
        r"|tofu(?:\s+-\S+)*\s+(?:apply|destroy)|helm(?:\s+\S+)*?\s+(?:install|upgrade|uninstall|rollback|delete)"
        r"|pulumi(?:\s+\S+)*?\s+(?:up|destroy|update)|(?:serverless|sls|fly|flyctl|netlify|firebase|eb|cdk"
        r"|railway|wrangler|vercel|surge|heroku|dokku|kamal|skaffold|waypoint|nomad|amplify|sam"
        r"|supabase|convex|deno\s+deploy|deployctl)\s+(?:\S+\s+)*?(?:deploy|publish|up|push|promote|release"
        r"|rollback|destroy|delete|apply|job\s+run|rm)|skaffold\s+run|vercel|ansible-playbook"
        r"|heroku\s+\S+:(?:create|destroy|set|unset|add|remove|rollback|restart|promote|scale)"
        r"|gsutil(?:\s+-\S+)*\s+(?:cp|mv|rm|rsync|rb|mb|acl|setmeta|iam)|gcloud\s+storage\s+(?:cp|mv|rm|rsync)"
        r"|rclone\s+(?:copy|copyto|sync|move|moveto|delete|deletefile|purge|rmdir|mkdir)|s3cmd\s+(?:put|del|sync|rm|mv)"
        r"|azcopy\s+(?:copy|sync|remove)|doctl(?:\s+\S+)*?\s+(?:create|delete|update|deploy)"
        r"|docker\s+(?:stack|service)\s+(?:deploy|update|rm|create)|gcloud(?:\s+\S+)*?\s+(?:deploy|create|delete|update)"
        r"|aws(?:\s+\S+)*?\s+(?:deploy|create-\S+|delete-\S+|put-\S+|update-\S+|cp|sync|rm|mv)"
        r"|az(?:\s+\S+)*?\s+(?:create|delete|update|deploy))(?:\s|$)"),
         "deployed infrastructure or services (a cluster, a cloud account, a live site)"),
    Rule("http-write", None, _rx(
        r"^(?:curl\s(?:.*\s)?(?:-[a-zA-Z]*X\s*" + _WRITE_METHOD + r"|--request[\s=]" + _WRITE_METHOD +
        r"|-[a-zA-Z]*[dFT](?:\s|$|\S)|--data\S*|--form\S*|--json|--upload-file)"
        r"|wget\s(?:.*\s)?--(?:post-data|post-file|body-data|body-file|method)"
        r"|(?:https?|xhs?|curlie)\s+(?:\S+\s+)*?" + _WRITE_METHOD + r"(?:\s|$)"
        r"|(?:https?|xhs?)\s+(?:\S+\s+)*?\S+(?::=|=@|:=@|@)\S*"
        r"|aria2c\s(?:.*\s)?--(?:post|upload)|lwp-request\s+-m\s+" + _WRITE_METHOD + r")"),
         "a remote service (an HTTP request that writes: POST, PUT, PATCH, DELETE or a request body)"),
    Rule("code-host-write", None, _rx(
        r"^(?:gh(?:\s+-\S+(?:\s+\S+)?)*\s+(?:pr\s+(?:merge|create|close|reopen|comment|edit|review|ready|lock|unlock)"
        r"|issue\s+(?:create|close|reopen|comment|edit|delete|transfer|lock|unlock|pin|unpin)"
        r"|repo\s+(?:create|delete|edit|rename|archive|unarchive|sync|fork|deploy-key\s+(?:add|delete))"
        r"|(?:secret|variable)\s+(?:set|delete)|workflow\s+(?:run|enable|disable)|run\s+(?:cancel|rerun|delete)"
        r"|gist\s+(?:create|edit|delete)|label\s+(?:create|edit|delete|clone)|ruleset\s+\S+|cache\s+delete"
        r"|api\s+(?:.*\s)?(?:-X\s*" + _WRITE_METHOD + r"|--method[\s=]" + _WRITE_METHOD +
        r"|-[fF](?:\s|$)|--(?:raw-)?field(?:\s|=)|--input(?:\s|=)))"
        r"|glab\s+(?:mr\s+(?:merge|create|close|reopen|note|approve|update)|issue\s+(?:create|close|note|update|delete)"
        r"|repo\s+(?:create|delete|fork|archive)|release\s+(?:create|upload|delete)|api\s+(?:.*\s)?-X\s*"
        + _WRITE_METHOD + r")|tea\s+(?:pr|pulls|issues?|releases?)\s+(?:create|merge|close|reopen|edit|delete))(?:\s|$)"),
         "a code host (GitHub, GitLab, Gitea): merges, pull requests, issues, comments, releases, repository settings"),
)
# Rules implemented in code (not a regex); removable by name like the others.
CODE_RULES = {
    "delete-outside-workspace": "files outside the workspace (deleted)",
    "gate-self": "vacant's own hooks, gate policy or records (which decide what needs a person's answer)",
    "write-outside-workspace": "files outside the workspace (written; temp directories excepted)",
    "record-delete": "vacant's records or the agent's hook settings (deleted, so the run would go unrecorded)",
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
        data = read_capped(Path(root) / CONTRACT_FILE, SMALL_CAP)
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
