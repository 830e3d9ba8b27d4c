"""What the gate checks a call's paths against, whether a shell command or a platform's own file
tool names them: the person's key directory, vacant's own files (gate-self), the arms directory,
and whether a rule matches. Kept apart from the shell reader (vacant.policy.gate.shellscan, whose
`ShellScan` extends `Scope`): a Read, Write or Edit is gated without loading it. Stdlib only (hot path)."""

from __future__ import annotations

import os
from pathlib import Path

from vacant.core.locations import state_dir, user_config_dir
from vacant.core.wall import inside
from vacant.policy.gate.rules import CONTRACT_FILE, Policy
from vacant.policy.shipped import Rule


class Scope:
    """The workspace, policy and person one gated call is judged in (what a file tool's writes
    are checked with; the shell reader's `ShellScan` adds what a command line does)."""

    def __init__(self, root: Path, cwd: str, policy: Policy, home: str | None, env: dict | None = None,
                 state: Path | None = None) -> None:
        self.root = os.path.realpath(root)
        self.cwd = cwd
        self.policy = policy
        self.home = os.path.realpath(home) if home else None
        self.arms_dir = os.path.realpath(os.path.join(self.root, policy.arms))
        # `state`: the workspace's state directory when the caller has just found it
        self.state = os.path.realpath(state_dir(Path(self.root)) if state is None else state)
        self.env = os.environ if env is None else env

    def protected(self, path: str) -> str | None:
        """Why touching `path` is gate-self (None: it is not one of vacant's own files)."""
        if "gate-self" in self.policy.removed:
            return None
        return protected_reason(path, self.root, self.state, self.home)


def protected_reason(path: str, root: str, state: str, home: str | None) -> str | None:
    if path == os.path.join(root, CONTRACT_FILE):
        return "the gate policy ([gate] in vacant.toml) that decides what needs a person's answer"
    if inside(path, state):
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


def key_dirs() -> list[str]:
    """The person's key directory as configured and with its symlinks resolved."""
    try:
        configured = os.path.normpath(str(user_config_dir()))
    except (RuntimeError, KeyError):
        return []
    return sorted({configured, os.path.realpath(configured)})


def is_key(path: str, home: str | None) -> bool:
    """Inside the directory holding the person's signing key (`~/.config/vacant`)."""

    try:
        key_dir = os.path.realpath(str(user_config_dir()))
    except (RuntimeError, KeyError):
        return False
    return inside(os.path.realpath(path), key_dir)


def rule_matches(rule: Rule, tool: str, text: str, tool_name: str | None = None) -> bool:
    """A shell rule (no `tool`) matches shell commands; a `tool` rule matches that tool's calls."""
    if rule.tool is not None:
        if tool_name is None or not rule.tool.fullmatch(tool_name):
            return False
    elif tool != "shell":
        return False
    return rule.command is None or bool(rule.command.search(text))
