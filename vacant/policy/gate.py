"""The confirmation gate at PreToolUse: READ passes, ACT waits for a person's answer.

An action is ACT when it changes something beyond the deliverable: a rule of the policy matches
it (shipped defaults, plus the `[gate]` table of `vacant.toml`), or it runs an arm whose mode is
`ACT` or cannot be read. An ACT action with no valid approval never reaches the line that runs
it: the recorder asks `check()` before it starts the step, and a deny goes back to the platform
(see `vacant/policy/asks.py` for the ask book and the needs-confirm payload, docs/GATE.md for the rules).

The gate fails closed: if it cannot decide (its own error), the action is denied with a message
saying why. Stdlib + xxhash only (hot path); `tomllib` is imported only when `vacant.toml` has a
`[gate]` table that is not in the parse cache.
"""

from __future__ import annotations

import json
import os
import re
from collections import namedtuple
from pathlib import Path

from vacant.core.calls import Response
from vacant.core.errlog import log_error
from vacant.core.locations import state_dir, user_config_dir
from vacant.policy import shellwords

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
SHELL_TOOLS = frozenset({"Bash", "bash", "shell", "exec_command", "local_shell", "run_shell_command"})
PATCH_TOOLS = frozenset({"apply_patch"})
EDIT_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit", "write", "edit"})
READ_TOOLS = {"Read": "file_path", "Grep": "path", "Glob": "path", "LS": "path", "view_image": "path", "read": "filePath"}
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


def _parse_gate_table(data: bytes) -> tuple[dict | None, str | None]:
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
    table, error = _parse_gate_table(data)
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        temp = cache.with_name(f".gate-policy.{os.getpid()}.tmp")
        temp.write_text(json.dumps({"key": key, "table": table, "error": error}))
        os.replace(temp, cache)
    except (OSError, TypeError, ValueError):
        pass  # the cache is an optimisation only
    if error:
        return _DEFAULT_POLICY._replace(error=error)
    return policy_from_table(table)


# -- arms and their mode line ---------------------------------------------------------------------

_HASH = ("#",)
_SLASH = ("//", "/*")
COMMENT_LEADERS = {
    **dict.fromkeys((".sh", ".bash", ".zsh", ".ksh", ".fish", ".py", ".rb", ".pl", ".r", ".ps1", ".awk", ".tcl",
                     ".jl", ".ex", ".exs", ".cr", ".nim", ".yaml", ".yml", ".toml", ".mk", ".nu"), _HASH),
    **dict.fromkeys((".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".go", ".rs", ".c", ".cc", ".cpp", ".java",
                     ".kt", ".kts", ".swift", ".scala", ".dart", ".groovy", ".cs", ".zig"), _SLASH),
    ".php": ("#", "//", "/*"),
    **dict.fromkeys((".lua", ".sql", ".hs", ".elm", ".ada"), ("--",)),
    **dict.fromkeys((".bat", ".cmd"), ("REM", "rem", "::", "@REM", "@rem")),
    **dict.fromkeys((".el", ".clj", ".lisp", ".scm", ".rkt"), (";",)),
    **dict.fromkeys((".erl", ".m", ".tex"), ("%",)),
    ".vbs": ("'",),
}
ANY_LEADER = ("#", "//", "/*", "--", ";", "%", "REM", "rem", "::", "'", "<!--")


def mode_of(text: str | bytes | None, name: str = "") -> str | None:
    """`READ` or `ACT` from an arm's header, else None: the mode line must come first (after an
    optional `#!` line), as a comment in the script's comment syntax."""
    if text is None:
        return None
    if isinstance(text, bytes):
        text = text[:8192].decode("utf-8", "replace")
    lines = text.lstrip("\ufeff").split("\n", 3)
    if lines and lines[0].startswith("#!"):
        lines = lines[1:]
    if lines and lines[0].strip().startswith("<?php"):
        lines = lines[1:]
    if not lines:
        return None
    leaders = COMMENT_LEADERS.get(os.path.splitext(name)[1].lower(), ANY_LEADER)
    line = lines[0].rstrip("\r")
    pattern = (r"^\s*(?:" + "|".join(re.escape(leader) for leader in leaders)
               + r")\s*MODE:\s*(READ|ACT)\s*(?:\*/|-->)?\s*$")
    match = re.match(pattern, line)
    return match.group(1) if match else None


def _read_head(path: str) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read(8192)
    except OSError:
        return None


def _file_hash(path: str) -> str | None:
    import xxhash

    try:
        with open(path, "rb") as handle:
            return xxhash.xxh3_128_hexdigest(handle.read())
    except OSError:
        return None


# -- the shell ------------------------------------------------------------------------------------

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "fish", "mksh", "busybox"})
INTERPRETERS = SHELLS | frozenset({
    "python", "python2", "python3", "pypy", "pypy3", "node", "nodejs", "deno", "bun", "ruby", "perl", "php", "lua",
    "luajit", "Rscript", "pwsh", "powershell", "osascript", "tsx", "ts-node", "awk", "gawk", "mawk", "tclsh",
    "julia", "elixir", "groovy", "swift", "go", "uv", "npx", "source", ".",
})
VIEWERS = frozenset({
    "cat", "less", "more", "head", "tail", "wc", "ls", "stat", "file", "grep", "egrep", "fgrep", "rg", "ag", "diff",
    "cmp", "md5sum", "sha1sum", "sha256sum", "sha512sum", "shasum", "b2sum", "cksum", "xxd", "hexdump", "od",
    "strings", "bat", "batcat", "nl", "tac", "sort", "uniq", "cut", "echo", "printf", "test", "[", "realpath",
    "readlink", "basename", "dirname", "shellcheck", "chmod", "tree", "du", "find", "fd", "jq", "yq", "column",
    "sed", "git", "colordiff", "vacant", "cd", "pushd", "popd", "mkdir",
})
GIT_WRITES = frozenset({"rm", "mv", "checkout", "restore", "reset", "clean", "apply", "am", "stash", "switch", "merge",
                        "rebase", "cherry-pick", "revert", "pull"})
DELETERS = frozenset({"rm", "rmdir", "unlink", "shred", "srm", "trash", "trash-put"})
WRAPPERS = {  # program -> options that take a separate argument
    "sudo": {"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T"}, "doas": {"-u", "-C"},
    "env": {"-u", "-C", "-S", "--unset", "--chdir", "--split-string"}, "nice": {"-n", "--adjustment"},
    "nohup": set(), "time": {"-f", "-o"}, "command": set(), "exec": {"-a"}, "builtin": set(),
    "stdbuf": {"-i", "-o", "-e"}, "ionice": {"-c", "-n", "-p"}, "chrt": set(), "taskset": set(),
    "unbuffer": set(), "caffeinate": set(), "setsid": set(), "xargs": {"-I", "-n", "-P", "-d", "-E", "-L", "-s", "-a"},
    "timeout": {"-s", "-k", "--signal", "--kill-after"}, "watch": {"-n", "-d"}, "flock": {"-w", "-E"},
}
WITH_OPERAND = {"timeout": 1, "chrt": 1, "taskset": 1, "flock": 1}  # positional args before the command
KEYWORDS = frozenset({"!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "time",
                      "coproc"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\+?=")
_GLOB = re.compile(r"[*?\[]")
_HOME_VAR = re.compile(r"^(?:\$HOME|\$\{HOME\})(/.*)?$")


def _inside(path: str, base: str) -> bool:
    return path == base or path.startswith(base.rstrip(os.sep) + os.sep)


def _program(word_text: str) -> str:
    return os.path.basename(word_text)


def _unwrap(argv: list) -> list:
    """argv without leading assignments, keywords and wrappers (`sudo`, `env`, `timeout 5` …)."""
    argv = list(argv)
    while argv:
        head = argv[0].text
        if _ASSIGNMENT.match(head) or head in KEYWORDS:
            argv.pop(0)
            continue
        name = _program(head)
        if name not in WRAPPERS or argv[0].expands:
            break
        argv.pop(0)
        takes = WRAPPERS[name]
        while argv and argv[0].text.startswith("-") and argv[0].text != "-":
            option = argv.pop(0).text
            if option == "--":
                break
            if option in takes and argv:
                argv.pop(0)
        if name == "env":
            while argv and _ASSIGNMENT.match(argv[0].text):
                argv.pop(0)
        for _ in range(WITH_OPERAND.get(name, 0)):
            if argv:
                argv.pop(0)
    return argv


class ShellScan:
    """Everything one command line would do that the gate cares about."""

    def __init__(self, root: Path, cwd: str, policy: Policy, home: str | None) -> None:
        self.root = os.path.realpath(root)
        self.cwd = cwd
        self.policy = policy
        self.home = os.path.realpath(home) if home else None
        self.arms_dir = os.path.realpath(os.path.join(self.root, policy.arms))
        self.state = os.path.realpath(state_dir(Path(self.root)))
        self.hits: list[Hit] = []
        self.arms: dict[str, str | None] = {}  # absolute arm path -> its mode (None: unreadable)
        self.answers = False
        self.key_touched: str | None = None
        self.patches: list[str] = []  # apply_patch bodies run through the shell
        self.unreadable = False

    # paths

    def resolve(self, word) -> list[str] | None:
        """Absolute paths a word names (globs expanded), None when an expansion hides it."""
        text = word.text
        if word.expands:
            match = _HOME_VAR.match(text)
            if not match or not self.home or "$" in (match.group(1) or "") or "`" in text:
                return None
            text = self.home + (match.group(1) or "")
        elif text == "~" or text.startswith("~/"):
            if not self.home:
                return None
            text = self.home + text[1:]
        if not text:
            return []
        if self.cwd is None and not os.path.isabs(text):
            return None  # after a `cd` vacant could not follow
        path = os.path.normpath(os.path.join(self.cwd, text))
        if _GLOB.search(text):
            import glob

            found = glob.glob(path)
            return [os.path.normpath(p) for p in found] or [path]
        return [path]

    def arm_files(self, path: str) -> list[str]:
        """The arm files a path names: itself when under the arms directory, or every arm below
        it when it is the arms directory (or one of its ancestors inside the workspace)."""
        if _inside(path, self.arms_dir) and path != self.arms_dir:
            if os.path.isdir(path):
                return self._walk_arms(path)
            return [path]
        if _inside(self.arms_dir, path) and _inside(path, self.root) and path != self.root:
            return self._walk_arms(self.arms_dir)
        return []

    @staticmethod
    def _walk_arms(top: str, limit: int = 500) -> list[str]:
        found: list[str] = []
        for directory, dirnames, filenames in os.walk(top):
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            found += [os.path.join(directory, name) for name in filenames if not name.startswith(".")]
            if len(found) >= limit:
                break
        return found

    def note_arm(self, path: str) -> None:
        if path not in self.arms:
            self.arms[path] = mode_of(_read_head(path), path)

    def protected(self, path: str) -> str | None:
        """Why touching `path` is gate-self (None: it is not one of vacant's own files)."""
        if "gate-self" in self.policy.removed:
            return None
        return protected_reason(path, self.root, self.state, self.home)

    # scanning

    def run(self, text: str, depth: int = 0) -> None:
        if depth > MAX_DEPTH:
            self.unreadable = True
            return
        try:
            commands = shellwords.simple_commands(text)
        except shellwords.LexError:
            self.unreadable = True
            commands = self._fallback(text)
        viewed: dict[int, list[str]] = {}
        stdin_interpreter: set[int] = set()
        for command in commands:
            self.simple(command, depth, viewed, stdin_interpreter)
            self._follow_cd(command)
        for pipeline in stdin_interpreter:  # `cat arms/x.sh | sh`: the arm runs after all
            for path in viewed.get(pipeline, []):
                self.note_arm(path)

    def _follow_cd(self, command) -> None:
        """`cd DIR && sh x.sh`: later relative paths start from DIR (None when it cannot be known)."""
        argv = _unwrap(list(command.argv))
        if not argv or _program(argv[0].text) not in ("cd", "pushd", "popd"):
            return
        operands = [w for w in argv[1:] if not (w.text.startswith("-") and len(w.text) > 1)]
        if _program(argv[0].text) == "popd" or (operands and operands[0].text == "-"):
            self.cwd = None
            return
        if not operands:
            self.cwd = self.home
            return
        paths = self.resolve(operands[0])
        self.cwd = paths[0] if paths and len(paths) == 1 else None

    def arms_named(self, text: str) -> list[str]:
        """Arms whose file name is the last part of `text` (when the directory is unknown)."""
        name = os.path.basename(text.rstrip("/"))
        if not name or not os.path.isdir(self.arms_dir):
            return []
        return [path for path in self._walk_arms(self.arms_dir) if os.path.basename(path) == name]

    @staticmethod
    def _fallback(text: str) -> list:
        """An unreadable line (an unclosed quote): whitespace words of each piece, nothing expanded."""
        out = []
        for number, piece in enumerate(re.split(r"[;&|()\n`]|\$\(", text)):
            words = [shellwords.Word(w, w, False, ()) for w in piece.split()]
            if words:
                out.append(shellwords.Simple(words, [], [], number))
        return out

    def simple(self, command, depth: int, viewed: dict, stdin_interpreter: set) -> None:
        words = list(command.argv)
        for word in words + [target for _, target in command.redirects]:
            for sub in word.subs:
                self.run(sub, depth + 1)
        argv = _unwrap(words)
        if not argv:
            self._references(command, [], None, viewed)
            return
        program = _program(argv[0].text)
        norm = " ".join([w.norm for w in argv] + [f"{op} {w.norm}" for op, w in command.redirects])
        if _is_vacant_answer(argv):
            self.answers = True
        allowed = any(_rule_matches(rule, "shell", norm) for rule in self.policy.allow)
        if not allowed:
            for rule in self.policy.act:
                if _rule_matches(rule, "shell", norm):
                    self.hits.append(Hit(rule.name, rule.why))
            if "delete-outside-workspace" not in self.policy.removed:
                self._deletes(program, argv)
        # nested command lines
        if program in SHELLS or program == "su":
            script = _dash_c(argv)
            if script is not None:
                self.run(script, depth + 1)
        elif program == "eval":
            self.run(" ".join(w.text for w in argv[1:]), depth + 1)
        elif program == "find":
            for nested in _find_exec(argv):
                self.simple(shellwords.Simple(nested, [], [], -1), depth + 1, {}, set())
        elif program == "apply_patch":
            self.patches += command.heredocs
        if (program in INTERPRETERS and _script_arg(argv) is None and _dash_c(argv) is None
                and not any(op in ("<", "<<", "<<-", "<<<") for op, _ in command.redirects)):
            stdin_interpreter.add(command.pipeline)
        if allowed:
            return
        self._references(command, argv, program, viewed)

    def _references(self, command, argv: list, program: str | None, viewed: dict) -> None:
        viewer = program is not None and _is_viewer(program, argv)
        targets = [(word, False) for word in argv[1:]] + [(word, op in shellwords.WRITE_REDIRECTS)
                                                          for op, word in command.redirects]
        if program is not None and "/" in argv[0].text:
            targets.append((argv[0], False))  # ./arms/x.sh: the program itself
        for word, writes in targets:
            paths = self.resolve(word)
            if paths is None and self.cwd is None and not word.expands and (writes or not viewer):
                for arm in self.arms_named(word.text):  # the directory is unknown: same name, same arm
                    self.note_arm(arm)
            for path in paths or []:
                path = os.path.realpath(path)  # symlinks: a link to an arm runs the arm
                if _is_key(path, self.home):
                    self.key_touched = path
                why = self.protected(path)
                if why and (writes or not viewer):
                    self.hits.append(Hit("gate-self", why))
                for arm in self.arm_files(path):
                    if writes or not viewer:
                        self.note_arm(arm)
                    else:
                        viewed.setdefault(command.pipeline, []).append(arm)

    def _deletes(self, program: str, argv: list) -> None:
        targets: list = []
        finding = False  # `find ROOT -delete` deletes below the root, not the root
        if program in DELETERS:
            options = True
            for word in argv[1:]:
                if options and word.text == "--":
                    options = False
                elif options and word.text.startswith("-") and len(word.text) > 1:
                    continue
                else:
                    targets.append(word)
        elif program == "find" and any(w.text in ("-delete",) for w in argv) or (
                program == "find" and any(_program(n[0].text) in DELETERS for n in _find_exec(argv) if n)):
            for word in argv[1:]:
                if word.text.startswith("-") or word.text in ("(", "!"):
                    break
                targets.append(word)
            targets = targets or [shellwords.Word(".", ".", False, ())]
            finding = True
        elif program == "git" and len(argv) > 1 and argv[1].text == "clean":
            return
        for word in targets:
            paths = self.resolve(word)
            if paths is None:
                self.hits.append(Hit("delete-outside-workspace",
                                     f"files outside the workspace, maybe: {word.text} (a path vacant cannot resolve)"))
                continue
            for path in paths:
                real = _real_target(path)
                if not _inside(real, self.root) or (real == self.root and not finding):
                    self.hits.append(Hit("delete-outside-workspace", f"{real} (deleted; it is outside the workspace)"))


def _real_target(path: str) -> str:
    """Where a deletion lands: symlinks in the parent resolved (the last part itself is removed)."""
    if path.endswith(os.sep) or os.path.basename(path) in ("", ".", ".."):
        return os.path.realpath(path)
    return os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))


def protected_reason(path: str, root: str, state: str, home: str | None) -> str | None:
    if path == os.path.join(root, CONTRACT_FILE):
        return "the gate policy ([gate] in vacant.toml) that decides what needs a person's answer"
    if _inside(path, state):
        return "vacant's records (the step log, the ask book)"
    rel = os.path.relpath(path, root)
    if rel in (".claude/settings.json", ".claude/settings.local.json", ".codex/hooks.json", ".codex/config.toml",
               ".opencode/plugin", ".opencode/plugins"):
        return "the agent's hook settings that run vacant"
    if home:
        for rel_home in (".claude/settings.json", ".codex/hooks.json", ".codex/config.toml"):
            if path == os.path.join(home, rel_home):
                return "the agent's hook settings that run vacant"
    return None


def _is_key(path: str, home: str | None) -> bool:
    """Inside the directory holding the person's signing key (`~/.config/vacant`)."""

    try:
        key_dir = os.path.realpath(str(user_config_dir()))
    except (RuntimeError, KeyError):
        return False
    return _inside(os.path.realpath(path), key_dir)


def _is_viewer(program: str, argv: list) -> bool:
    if program not in VIEWERS:
        return False
    texts = [w.text for w in argv[1:]]
    if program == "sed":
        return not any(t.startswith("-i") or t == "--in-place" or t.startswith("--in-place=") for t in texts)
    if program == "git":
        sub = next((t for t in texts if not t.startswith("-")), "")
        return sub not in GIT_WRITES
    if program == "find":
        return not any(t in ("-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprintf") for t in texts)
    if program == "vacant":
        return True
    return True


def _dash_c(argv: list) -> str | None:
    for index, word in enumerate(argv[1:], start=1):
        text = word.text
        if text == "--":
            return None
        if text.startswith("-") and not text.startswith("--") and "c" in text[1:]:
            return argv[index + 1].text if index + 1 < len(argv) else None
        if not text.startswith("-"):
            return None
    return None


def _script_arg(argv: list):
    """The script file an interpreter runs (its first operand), None for stdin or `-c`/`-m`."""
    skip_next = False
    for word in argv[1:]:
        text = word.text
        if skip_next:
            skip_next = False
            continue
        if text in ("-m", "-c", "-e", "--eval", "-r", "--command"):
            return None
        if text in ("-W", "-X", "-O", "--import", "--require", "-I"):
            skip_next = True
            continue
        if text.startswith("-") and text != "-":
            continue
        return None if text == "-" else word
    return None


def _find_exec(argv: list) -> list[list]:
    nested: list[list] = []
    current: list | None = None
    for word in argv[1:]:
        if current is None:
            if word.text in ("-exec", "-execdir", "-ok", "-okdir"):
                current = []
            continue
        if word.text in (";", "+"):
            nested.append(current)
            current = None
            continue
        current.append(word)
    if current:
        nested.append(current)
    return nested


def _is_vacant_answer(argv: list) -> bool:
    """`vacant approve …` / `vacant decline …` (also via `python -m vacant`)."""
    texts = [w.text for w in argv]
    program = _program(texts[0])
    rest = texts[1:]
    if re.match(r"^python[0-9.]*$", program) and len(rest) >= 2 and rest[0] == "-m" and rest[1].startswith("vacant"):
        rest = rest[2:]
    elif program not in ("vacant", "vacant.exe", "uvx", "pipx") and not program.startswith("vacant"):
        return False
    elif program in ("uvx", "pipx"):
        rest = [t for t in rest if t not in ("run", "vacant")]
    operands = [t for t in rest if not t.startswith("-")]
    return bool(operands) and operands[0] in ("approve", "decline")


def _rule_matches(rule: Rule, tool: str, text: str, tool_name: str | None = None) -> bool:
    """A shell rule (no `tool`) matches shell commands; a `tool` rule matches that tool's calls."""
    if rule.tool is not None:
        if tool_name is None or not rule.tool.fullmatch(tool_name):
            return False
    elif tool != "shell":
        return False
    return rule.command is None or bool(rule.command.search(text))


# -- file-writing tools ---------------------------------------------------------------------------


def _patch_targets(patch: str, cwd: str) -> list[tuple[str, str | None]]:
    """(absolute path, resulting text or None when it cannot be worked out) for each file an
    apply_patch text adds, updates or moves to (deleted files are left out)."""
    out: list[tuple[str, str | None]] = []
    lines = patch.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        add = re.match(r"^\*\*\* Add File: (.+?)\s*$", line)
        update = re.match(r"^\*\*\* Update File: (.+?)\s*$", line)
        i += 1
        if add:
            body = []
            while i < len(lines) and not lines[i].startswith("*** "):
                body.append(lines[i][1:] if lines[i].startswith("+") else lines[i])
                i += 1
            out.append((os.path.normpath(os.path.join(cwd, add.group(1))), "\n".join(body)))
        elif update:
            source = os.path.normpath(os.path.join(cwd, update.group(1)))
            target = source
            if i < len(lines):
                move = re.match(r"^\*\*\* Move to: (.+?)\s*$", lines[i])
                if move:
                    target = os.path.normpath(os.path.join(cwd, move.group(1)))
                    i += 1
            hunks: list[list[str]] = []
            while i < len(lines) and not (lines[i].startswith("*** ") and lines[i] != "*** End of File"):
                if lines[i].startswith("@@"):
                    hunks.append([])
                elif lines[i] != "*** End of File":
                    if not hunks:
                        hunks.append([])
                    hunks[-1].append(lines[i])
                i += 1
            out.append((target, _apply_hunks(source, hunks)))
    return out


def _apply_hunks(path: str, hunks: list[list[str]]) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as handle:
            current = handle.read().split("\n")
    except OSError:
        return None
    position = 0
    for hunk in hunks:
        old = [line[1:] for line in hunk if line[:1] in (" ", "-") or line == ""]
        new = [line[1:] for line in hunk if line[:1] in (" ", "+") or line == ""]
        if not old:
            current[position:position] = new
            position += len(new)
            continue
        for start in range(position, len(current) - len(old) + 1):
            if current[start : start + len(old)] == old:
                current[start : start + len(old)] = new
                position = start + len(new)
                break
        else:
            return None
    return "\n".join(current)


def _edit_result(path: str, edits: list[dict]) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as handle:
            text = handle.read()
    except FileNotFoundError:
        text = ""
    except OSError:
        return None
    for edit in edits:
        old, new = edit.get("old_string"), edit.get("new_string")
        if not isinstance(old, str) or not isinstance(new, str):
            return None
        if old == "" and text == "":
            text = new
            continue
        if old not in text:
            return None
        text = text.replace(old, new) if edit.get("replace_all") else text.replace(old, new, 1)
    return text


def file_targets(tool: str, tool_input: object, cwd: str) -> list[tuple[str, str | None]] | None:
    """What a file tool would leave at each path it writes; None when the tool writes no file."""
    data = tool_input if isinstance(tool_input, dict) else {}
    if tool in PATCH_TOOLS:
        patch = data.get("command") if data else tool_input
        if isinstance(patch, list):
            patch = patch[-1] if patch else ""
        return _patch_targets(patch if isinstance(patch, str) else "", cwd)
    if tool not in EDIT_TOOLS:
        return None
    path = data.get("file_path") or data.get("filePath") or data.get("notebook_path") or data.get("path")
    if not isinstance(path, str):
        return []
    path = os.path.normpath(os.path.join(cwd, path))
    if tool in ("Write", "write"):
        content = data.get("content")
        return [(path, content if isinstance(content, str) else None)]
    if tool == "MultiEdit":
        return [(path, _edit_result(path, data.get("edits") or []))]
    if tool in ("Edit", "edit"):
        edit = {"old_string": data.get("old_string", data.get("oldString")),
                "new_string": data.get("new_string", data.get("newString")),
                "replace_all": data.get("replace_all", data.get("replaceAll"))}
        return [(path, _edit_result(path, [edit]))]
    return [(path, None)]


def _gate_table_of(text: str | None) -> object:
    if text is None:
        return ("unreadable",)
    table, error = _parse_gate_table(text.encode("utf-8", "surrogateescape"))
    return ("invalid", error) if error else table


# -- classification -------------------------------------------------------------------------------


def shell_command(tool_input: object) -> str | None:
    if not isinstance(tool_input, dict):
        return tool_input if isinstance(tool_input, str) else None
    command = tool_input.get("command", tool_input.get("cmd"))
    if isinstance(command, list) and all(isinstance(part, str) for part in command):
        import shlex

        return shlex.join(command)
    return command if isinstance(command, str) else None


def call_cwd(root: Path, call) -> str:
    cwd = getattr(call, "cwd", None)
    if isinstance(cwd, str) and cwd:
        return os.path.realpath(os.path.join(str(root), cwd))
    return os.path.realpath(root)


def _fingerprint(value: object) -> str:
    import xxhash

    return xxhash.xxh3_128_hexdigest(json.dumps(value, sort_keys=True, separators=(",", ":"), default=str).encode())


def _rel(path: str, root: str) -> str:
    rel = os.path.relpath(path, root)
    return path if rel.startswith("..") else rel


def classify(root: Path, call, policy: Policy, env: dict | None = None) -> Verdict:
    """What the gate makes of one PreToolUse call (pure: reads files, writes nothing)."""
    env = os.environ if env is None else env
    root_real = os.path.realpath(root)
    tool = call.tool or ""
    cwd = call_cwd(root, call)
    home = env.get("HOME")
    if tool in READ_TOOLS and isinstance(call.tool_input, dict):
        path = call.tool_input.get(READ_TOOLS[tool])
        if isinstance(path, str) and _is_key(os.path.normpath(os.path.join(cwd, path)), home):
            return Verdict("refuse", None, KEY_REFUSAL.format(path=path))
    if tool in SHELL_TOOLS:
        command = shell_command(call.tool_input)
        if command is None:
            return PASS
        if policy.error:
            return Verdict("refuse", None, CONFIG_REFUSAL.format(error=policy.error))
        scan = ShellScan(root, cwd, policy, home)
        scan.run(command)
        if scan.answers:
            return Verdict("refuse", None, ANSWER_REFUSAL)
        if scan.key_touched:
            return Verdict("refuse", None, KEY_REFUSAL.format(path=scan.key_touched))
        for patch in scan.patches:
            refusal, hits = _check_writes(_patch_targets(patch, cwd), root_real, scan, policy)
            if refusal:
                return Verdict("refuse", None, refusal)
            scan.hits += hits
        hits = list(scan.hits)
        normal = shellwords.normal_form(command)
        for rule in policy.act:
            if rule.tool is not None and _rule_matches(rule, "tool", normal, tool):
                hits.append(Hit(rule.name, rule.why))
        arms = {}
        for path, mode in sorted(scan.arms.items()):
            arms[_rel(path, root_real)] = mode
            if mode != "READ":
                why = (f"whatever {_rel(path, root_real)} does (it declares MODE: ACT)" if mode == "ACT" else
                       f"whatever {_rel(path, root_real)} does (its MODE line cannot be read, so it counts as ACT)")
                hits.append(Hit("arm", why))
        if scan.unreadable and not hits and policy.arms and (policy.arms in command):
            hits.append(Hit("arm", "an arm, maybe (vacant could not read this command line)"))
        hits = _unique(hits)
        if not hits:
            return PASS
        kind = "arm" if any(hit.rule == "arm" for hit in hits) else "command"
        arm_hashes = {rel: _file_hash(os.path.join(root_real, rel)) for rel in arms}
        receipts = {"tool": tool, "command": command, "cwd": cwd, "mayChange": [hit.why for hit in hits],
                    "rules": sorted({hit.rule for hit in hits})}
        if arms:
            receipts["arm"] = [rel for rel, mode in arms.items() if mode != "READ"] or list(arms)
        fingerprint = _fingerprint({"tool": "shell", "command": normal, "cwd": os.path.realpath(cwd),
                                    "arms": arm_hashes})
        return Verdict("act", Action(kind, tool, normal, cwd, hits, receipts, fingerprint), "")
    targets = file_targets(tool, call.tool_input, cwd)
    hits: list[Hit] = []
    if targets is not None:
        scan = ShellScan(root, cwd, policy, home)
        refusal, hits = _check_writes(targets, root_real, scan, policy)
        if refusal:
            return Verdict("refuse", None, refusal)
    elif policy.error and call.scope != []:
        return Verdict("refuse", None, CONFIG_REFUSAL.format(error=policy.error))
    text = json.dumps(call.tool_input, sort_keys=True, default=str)
    allowed = any(_rule_matches(rule, "tool", text, tool) for rule in policy.allow if rule.tool is not None)
    if not allowed:
        for rule in policy.act:
            if rule.tool is not None and _rule_matches(rule, "tool", text, tool):
                hits.append(Hit(rule.name, rule.why))
    else:
        hits = [hit for hit in hits if hit.rule not in {r.name for r in policy.act}]
    hits = _unique(hits)
    if not hits:
        return PASS
    receipts = {"tool": tool, "input": _short_input(call.tool_input), "cwd": cwd,
                "mayChange": [hit.why for hit in hits], "rules": sorted({hit.rule for hit in hits})}
    fingerprint = _fingerprint({"tool": tool, "input": call.tool_input, "cwd": os.path.realpath(cwd)})
    return Verdict("act", Action("tool", tool, text, cwd, hits, receipts, fingerprint), "")


def _check_writes(targets, root_real: str, scan: ShellScan, policy: Policy) -> tuple[str | None, list[Hit]]:
    hits: list[Hit] = []
    for path, content in targets:
        path = os.path.realpath(path)
        if _is_key(path, scan.home):
            return KEY_REFUSAL.format(path=path), []
        if _inside(path, scan.arms_dir) and path != scan.arms_dir and not os.path.basename(path).startswith("."):
            if mode_of(content, path) is None:
                rel = _rel(path, root_real)
                extra = "" if content is not None else " (vacant could not work out the file's text after this edit)"
                return MODE_REFUSAL.format(path=rel) + extra + MODE_HINT, []
        why = scan.protected(path)
        if why:
            if path == os.path.join(root_real, CONTRACT_FILE):
                try:
                    with open(path, encoding="utf-8", errors="surrogateescape") as handle:
                        before = handle.read()
                except OSError:
                    before = ""
                if _gate_table_of(before) == _gate_table_of(content):
                    continue  # the checks changed, the gate policy did not
            hits.append(Hit("gate-self", why))
    return None, hits


def _short_input(tool_input: object, limit: int = 2000) -> object:
    text = json.dumps(tool_input, sort_keys=True, default=str)
    return tool_input if len(text) <= limit else text[:limit] + "…"


def _unique(hits: list[Hit]) -> list[Hit]:
    seen: set = set()
    out = []
    for hit in hits:
        if hit not in seen:
            seen.add(hit)
            out.append(hit)
    return out


# -- the hook's error path ----------------------------------------------------------------------


def log_failure(root: Path, error: BaseException) -> None:
    """A gate failure in the error log, with its traceback (the call was denied meanwhile)."""
    import traceback  # only on the error path

    log_error(Path(root), f"gate: {type(error).__name__}: {error}\n{traceback.format_exc()}")


def fail_closed(call, error: BaseException) -> Response | None:
    """For the hook's error path (the recorder itself failed, e.g. its lock timed out): deny when
    the call might be ACT, with a message saying why; None when it is plainly READ."""
    if getattr(call, "kind", None) != "tool_pre":
        return None
    reason = f"{type(error).__name__}: {error}"
    try:
        verdict = classify(call.workspace, call, load_policy(call.workspace))
    except Exception:  # noqa: BLE001
        verdict = None if call.scope == [] else Verdict("act", None, "")
    if verdict is None or verdict.kind == "pass":
        return None
    if verdict.kind == "refuse":
        return Response("deny", verdict.message)
    return Response("deny", (
        f"Not run: vacant failed while handling this call ({reason}), and it is an action that needs the person's "
        "answer, which vacant could not look up. Nothing has been done. This is vacant's own error, not yours: "
        "tell the person (details in .vacant/errors.log)."
    ))
