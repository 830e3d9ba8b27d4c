"""The confirmation gate at PreToolUse: READ passes, ACT waits for a person's answer.

An action is ACT when it changes something beyond the deliverable: a rule of the policy matches
it (shipped defaults, plus the `[gate]` table of `vacant.toml`), or it runs an arm whose mode is
`ACT` or cannot be read. An ACT action with no valid approval never reaches the line that runs
it: the recorder asks `check()` before it starts the step, and a deny goes back to the platform
(see `vacant/policy/gate/asks/` for the ask book and `asks/consult.py` for the needs-confirm payload, docs/GATE.md for the rules).

The gate fails closed: if it cannot decide (its own error), the action is denied with a message
saying why. Stdlib + xxhash only (hot path); `tomllib` is imported only when `vacant.toml` has a
`[gate]` table that is not in the parse cache.
"""

from __future__ import annotations

from vacant.core import leanjson as json  # not `import json`: 13 ms CPU of each hook call (vacant/hook/lean.py)
import os
from pathlib import Path

from vacant.core.errlog import log_error
from vacant.core.safeio import SMALL_CAP, read_text_capped
from vacant.core.wall import inside, outside_the_wall
from vacant.policy.gate.rules import (
    ANSWER_REFUSAL,
    CONFIG_REFUSAL,
    CONTRACT_FILE,
    KEY_REFUSAL,
    MAX_COMMAND_CHARS,
    MAX_DEPTH,
    MODE_HINT,
    MODE_REFUSAL,
    PASS,
    PERSON_REFUSAL,
    SCAN_BUDGET_S,
    TOO_LONG,
    WALL_REFUSAL,
    Action,
    Hit,
    Policy,
    Verdict,
)
from vacant.policy.gate.scope import Scope, is_key, rule_matches
from vacant.policy.gate.writes import (
    contract_weakened,
    file_targets,
    gate_table_of,
    patch_targets,
)
from vacant.core.lazyre import MULTILINE, Lazy

TYPE_CHECKING = False  # typing's, without importing typing: that costs each hook call 15 ms CPU (hook/lean.py)
if TYPE_CHECKING:
    from vacant.policy.gate.shellscan import ShellScan

# -- classification -------------------------------------------------------------------------------


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


def classify(root: Path, call, policy: Policy, env: dict | None = None, state: Path | None = None) -> Verdict:
    """What the gate makes of one PreToolUse call (pure: reads files, writes nothing). `state`: the
    workspace's state directory when the caller has just found it (else found here)."""
    env = os.environ if env is None else env
    root_real = os.path.realpath(root)
    kind, intent = getattr(call, "tool_kind", None), getattr(call, "intent", None) or {}
    cwd = call_cwd(root, call)
    home = env.get("HOME")
    if kind == "read":
        path = intent.get("path")
        if isinstance(path, str) and is_key(os.path.normpath(os.path.join(cwd, path)), home):
            return Verdict("refuse", None, KEY_REFUSAL.format(path=path))
    refused = wall_refusal(root, cwd, kind, intent, state)
    if refused:
        return Verdict("refuse", None, refused)
    if kind == "shell":
        command = intent.get("command")
        if not isinstance(command, str):
            return PASS
        return _classify_shell(root, root_real, call.tool or "", command, cwd, policy, home, env, state)
    return _classify_tool(root, root_real, call, kind, intent, cwd, policy, home, env, state)


WRITING_KINDS = ("write", "edit", "notebook", "patch")
PATCH_PATHS = Lazy(r"^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+?)\s*$", MULTILINE)


def tool_paths(kind: str | None, intent: dict) -> list[str]:
    """The paths a platform's own file tool names, as written (relative ones to the call's cwd)."""
    if kind == "patch":
        patch = intent.get("patch")
        return PATCH_PATHS.findall(patch) if isinstance(patch, str) else []
    path = intent.get("path")
    return [path] if isinstance(path, str) and kind in ("read", *WRITING_KINDS) else []


def wall_refusal(root: Path, cwd: str, kind: str | None, intent: dict, state: Path | None = None) -> str | None:
    """A platform's own file tool (Claude's Read/Write/Edit/MultiEdit/NotebookEdit, Codex's
    apply_patch) runs outside any Bash sandbox: the gate refuses it on every path the wall
    protects (vacant/core/wall.py), resolved the way the kernel does (symlinks, `..`)."""
    paths = tool_paths(kind, intent)
    if not paths:
        return None
    from vacant.core.locations import read_install
    from vacant.core.wall import wall_for

    record = read_install(root, state) or {}
    named = [entry["path"] for entry in (record.get("hooks") or {}).values()
             if isinstance(entry, dict) and isinstance(entry.get("path"), str)]
    wall = wall_for(root, named, state)
    writing = kind in WRITING_KINDS
    for path in paths:
        joined = os.path.join(cwd, os.path.expanduser(path) if path.startswith("~") else path)
        for form in (joined, os.path.normpath(joined)):  # the kernel's reading, and the lexical one
            base = wall.refusal(form, writing)
            if base:
                return WALL_REFUSAL.format(path=path, base=base, verb="write" if writing else "read")
    return None


def _classify_shell(root: Path, root_real: str, tool: str, command: str, cwd: str, policy: Policy,
                    home: str | None, env, state: Path | None = None) -> Verdict:
    """A shell command line: refusals first (an answer, the key, an unreadable policy, a line too
    long to read in time), then every rule, arm and patch its text reaches."""
    from vacant.policy.gate import shellwords  # the shell reader: a shell command's only
    from vacant.policy.gate.shellscan import ScanBudget, ShellScan

    if policy.error:
        return Verdict("refuse", None, CONFIG_REFUSAL.format(error=policy.error))
    too_long = Verdict("refuse", None, TOO_LONG.format(size=len(command), limit=MAX_COMMAND_CHARS,
                                                       budget=SCAN_BUDGET_S))
    if len(command) > MAX_COMMAND_CHARS:  # reading it would not fit the hook's budget
        return too_long
    scan = ShellScan(root, cwd, policy, home, env, state)
    try:
        scan.run(command)
    except ScanBudget:  # fail closed within a fixed time, whatever the command holds
        return too_long
    if scan.answers:
        verb = scan.answers
        return Verdict("refuse", None, ANSWER_REFUSAL if verb in ("approve", "decline") else
                       PERSON_REFUSAL.format(verb=verb))
    if scan.key_touched:
        return Verdict("refuse", None, KEY_REFUSAL.format(path=scan.key_touched))
    for patch in scan.patches:
        refusal, hits = _check_writes(patch_targets(patch, cwd), root_real, scan, policy)
        if refusal:
            return Verdict("refuse", None, refusal)
        scan.hits += hits
    normal = shellwords.normal_form(command)
    hits = list(scan.hits) + [Hit(rule.name, rule.why) for rule in policy.act
                              if rule.tool is not None and rule_matches(rule, "tool", normal, tool)]
    arms = _arm_hits(scan, root_real, hits)
    if scan.too_deep:
        hits.append(Hit("unreadable", f"whatever runs more than {MAX_DEPTH} levels of nested shells deep "
                                      "(vacant stops reading there)"))
    if scan.unreadable and not hits and policy.arms and (policy.arms in command):
        hits.append(Hit("arm", "an arm, maybe (vacant could not read this command line)"))
    unwalled = outside_the_wall(command) if not hits else None
    if unwalled and _walled(root):  # the wall and the gate agree: nothing leaves it without the person's answer
        hits.append(Hit("unwalled", f"whatever this whole line does, outside the wall (the sandbox runs a line "
                                    f"naming `{unwalled}` unsandboxed, with the person's remotes and credentials)"))
    hits = _unique(hits)
    if not hits:
        return PASS
    kind = "arm" if any(hit.rule == "arm" for hit in hits) else "command"
    from vacant.policy.gate.modes import file_hash  # a shell command's (it loads with the shell reader)

    arm_hashes = {rel: file_hash(os.path.join(root_real, rel)) for rel in arms}
    receipts = {"tool": tool, "command": command, "cwd": cwd, "mayChange": [hit.why for hit in hits],
                "rules": sorted({hit.rule for hit in hits})}
    if arms:
        receipts["arm"] = [rel for rel, mode in arms.items() if mode != "READ"] or list(arms)
    fingerprint = _fingerprint({"tool": "shell", "command": normal, "cwd": os.path.realpath(cwd),
                                "arms": arm_hashes})
    return Verdict("act", Action(kind, tool, normal, cwd, hits, receipts, fingerprint), "")


def _walled(root: Path) -> bool:
    """Whether a platform's sandbox was set up here (install.json's `walls`); an unreadable record
    counts as walled (the hold then asks the person once too often, never once too few)."""
    from vacant.core.locations import read_install

    try:
        walls = (read_install(root) or {}).get("walls")
    except (OSError, ValueError):
        return True
    return not isinstance(walls, dict) or any(walls.values()) or not walls


def _arm_hits(scan: ShellScan, root_real: str, hits: list[Hit]) -> dict[str, str]:
    """The arms the command runs (relative path -> mode); each one not READ adds a hit."""
    arms = {}
    for path, mode in sorted(scan.arms.items()):
        arms[_rel(path, root_real)] = mode
        if mode != "READ":
            why = (f"whatever {_rel(path, root_real)} does (it declares MODE: ACT)" if mode == "ACT" else
                   f"whatever {_rel(path, root_real)} does (its MODE line cannot be read, so it counts as ACT)")
            hits.append(Hit("arm", why))
    return arms


def _classify_tool(root: Path, root_real: str, call, kind: str | None, intent: dict, cwd: str, policy: Policy,
                   home: str | None, env, state: Path | None = None) -> Verdict:
    """Any other tool: the files it will write (checked like a shell's writes), then the rules
    that name tools, unless an allow rule matches."""
    tool = call.tool or ""
    targets = file_targets(kind, intent, cwd)
    hits: list[Hit] = []
    if targets is not None:
        scan = Scope(root, cwd, policy, home, env, state)
        refusal, hits = _check_writes(targets, root_real, scan, policy)
        if refusal:
            return Verdict("refuse", None, refusal)
    elif policy.error and call.scope != []:
        return Verdict("refuse", None, CONFIG_REFUSAL.format(error=policy.error))
    text = json.dumps(call.tool_input, sort_keys=True, default=str)
    allowed = any(rule_matches(rule, "tool", text, tool) for rule in policy.allow if rule.tool is not None)
    if not allowed:
        hits += [Hit(rule.name, rule.why) for rule in policy.act
                 if rule.tool is not None and rule_matches(rule, "tool", text, tool)]
    else:
        hits = [hit for hit in hits if hit.rule not in {r.name for r in policy.act}]
    hits = _unique(hits)
    if not hits:
        return PASS
    receipts = {"tool": tool, "input": _short_input(call.tool_input), "cwd": cwd,
                "mayChange": [hit.why for hit in hits], "rules": sorted({hit.rule for hit in hits})}
    fingerprint = _fingerprint({"tool": tool, "input": call.tool_input, "cwd": os.path.realpath(cwd)})
    return Verdict("act", Action("tool", tool, text, cwd, hits, receipts, fingerprint), "")


def _check_writes(targets, root_real: str, scan: Scope, policy: Policy) -> tuple[str | None, list[Hit]]:
    hits: list[Hit] = []
    for path, content in targets:
        path = os.path.realpath(path)
        if is_key(path, scan.home):
            return KEY_REFUSAL.format(path=path), []
        if inside(path, scan.arms_dir) and path != scan.arms_dir and not os.path.basename(path).startswith("."):
            from vacant.policy.gate.modes import mode_of  # a write into the arms directory only

            if mode_of(content, path) is None:
                rel = _rel(path, root_real)
                extra = "" if content is not None else " (vacant could not work out the file's text after this edit)"
                return MODE_REFUSAL.format(path=rel) + extra + MODE_HINT, []
        if (not inside(path, root_real) and "write-outside-workspace" not in policy.removed
                and not _harmless_outside(path, scan.env)):
            hits.append(Hit("write-outside-workspace", f"{path} (written; it is outside the workspace)"))
        why = scan.protected(path)
        if why:
            if path == os.path.join(root_real, CONTRACT_FILE):
                try:
                    before = read_text_capped(path, SMALL_CAP)
                except OSError:  # unreadable, special or huge: the gate table counts as changed
                    before = ""
                weakened = contract_weakened(before, content)
                if weakened:
                    hits.append(Hit("gate-self", weakened))
                if gate_table_of(before) == gate_table_of(content):
                    continue  # the gate policy did not change
            hits.append(Hit("gate-self", why))
    return None, hits


def _harmless_outside(path: str, env) -> bool:
    from vacant.policy.gate.forms import harmless_outside  # with the shell reader: a write outside the workspace only

    return harmless_outside(path, env)


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
