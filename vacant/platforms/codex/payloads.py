"""Codex CLI (0.171): hook payloads in, decisions out, hooks installed in `hooks.json` and trusted.

Facts this module relies on (measured on the real CLI; captured payloads under fixtures/payloads/):
- `exec_command` arrives as tool `Bash` ({"command": …}); the freeform `apply_patch` tool as
  `apply_patch` with the patch text in `tool_input.command`; every payload but SessionEnd carries
  the `model`.
- In tool events the payload `cwd` is the tool's workdir; the hook process itself runs in the
  session cwd, so the workspace is found from os.getcwd().
- PostToolUse carries no exit code and there is no read tool, but the rollout transcript
  (`transcript_path`) already holds the call's `item_completed` line when PostToolUse runs: exit
  code, status, `aggregated_output` and `parsed_cmd` (reads the shell parser recognised).
- No PostToolUse for: denied calls, spawn failures, sandbox rejections, and `apply_patch` run
  through the shell. Their steps stay open (the full scans around them still see every change).
- Hooks run only when trusted: project-local config needs the project trusted
  (`[projects."<abs>"] trust_level = "trusted"`), and every non-managed hook needs its hash in
  `[hooks.state."<file>:<event>:<group>:<handler>"] trusted_hash` of `$CODEX_HOME/config.toml`.
  Untrusted hooks are skipped with no warning in `codex exec`. Trust is written through Codex's own
  app-server (`hooks/list`, `config/batchWrite`) when a `codex` binary is at hand, else computed
  offline the way Codex does.

Module level imports the standard library only (hot path); the installer imports more lazily.
"""

from __future__ import annotations

import json
import os
import re
import stat

from vacant.core.calls import Read

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hook path
if TYPE_CHECKING:
    from typing import Any  # JSON: each field is read with a check of its type

EVENT_KINDS = {
    "SessionStart": "session_start",
    "UserPromptSubmit": "prompt",
    "PreToolUse": "tool_pre",
    "PostToolUse": "tool_post",
    "SubagentStart": "subagent_start",
    "SubagentStop": "subagent_stop",
    "Stop": "stop",
    "SessionEnd": "session_end",
}
INSTALL_EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd")
# Seconds. Codex clamps SessionEnd to 3 s (and warns unless we ask for 3 ourselves).
TIMEOUTS = {"Stop": 600, "SessionStart": 120, "UserPromptSubmit": 30, "SessionEnd": 3}
DEFAULT_TIMEOUT = 60
DEFAULT_CODEX_TIMEOUT = 600  # what Codex assumes when a handler has no timeout
HOOK_TYPES = ("command", "prompt", "agent", "mcpTool")
SNAKE = {
    "SessionStart": "session_start", "UserPromptSubmit": "user_prompt_submit", "PreToolUse": "pre_tool_use",
    "PostToolUse": "post_tool_use", "Stop": "stop", "SessionEnd": "session_end", "PreCompact": "pre_compact",
    "PostCompact": "post_compact", "PermissionRequest": "permission_request", "SubagentStart": "subagent_start",
    "SubagentStop": "subagent_stop",
}

SHELL_TOOL = "Bash"  # exec_command arrives under this name
SHELL_TOOLS = frozenset({SHELL_TOOL, "shell", "exec_command", "local_shell"})  # older and raw names
PATCH_TOOL = "apply_patch"
READ_ONLY_TOOLS = frozenset({"view_image", "web_search", "tool_search", "update_plan"})
TRANSCRIPT_TAIL = 1024 * 1024
OUTPUT_TYPES = ("function_call_output", "custom_tool_call_output")
FINAL_STATUSES = ("completed", "failed", "declined")

_PATCH_PATH = re.compile(r"^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+?)\s*$", re.MULTILINE)
_EXIT_CODE = re.compile(r"^Exit code: (-?\d+)", re.MULTILINE)


# -- payload helpers (hot path) ------------------------------------------------------------------


def patch_paths(patch: str, cwd: str) -> list[str] | None:
    """The absolute paths an apply_patch text adds, updates, deletes or moves to (None: unparsable)."""
    found = _PATCH_PATH.findall(patch or "")
    if not found:
        return None
    paths: list[str] = []
    for path in found:
        absolute = os.path.normpath(os.path.join(cwd, path))
        if absolute not in paths:
            paths.append(absolute)
    return paths


def tool_scope(tool: str, tool_input: object, cwd: str) -> list[str] | None:
    if tool == PATCH_TOOL:
        patch = (tool_input or {}).get("command") if isinstance(tool_input, dict) else tool_input
        return patch_paths(patch if isinstance(patch, str) else "", cwd)
    if tool in READ_ONLY_TOOLS:
        return []
    return None  # the shell, MCP tools and anything unknown may touch anything


def _transcript_records(path: str | None, item_id: str | None, tail: int = TRANSCRIPT_TAIL) -> list[dict[str, Any]]:
    """The rollout lines (last `tail` bytes) that mention this id, newest first."""
    if not path or not item_id or not isinstance(path, str):
        return []  # an int would open (and close) that file descriptor
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return []  # a FIFO or device would block or never end
        with open(path, "rb") as handle:
            handle.seek(0, 2)
            size = handle.tell()
            handle.seek(max(0, size - tail))
            data = handle.read()
    except (OSError, ValueError):  # ValueError: a NUL in the path
        return []
    needle = json.dumps(item_id).encode()
    records = []
    for raw in reversed(data.split(b"\n")):
        if needle not in raw:
            continue
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        payload = line.get("payload") if isinstance(line, dict) else None
        if isinstance(payload, dict):
            records.append(payload)
    return records


ROLLOUT_JUDGE_MAX = 8 * 1024 * 1024
CALL_TYPES = ("function_call", "custom_tool_call", "local_shell_call", *OUTPUT_TYPES)


def rollout_call_ids(path: str | None, limit: int = ROLLOUT_JUDGE_MAX) -> set[str] | None:
    """Every tool call id the rollout holds (the model's calls and their outputs by `call_id`, the
    items by `id`), parsed line by line (an id printed in a command's output is not a call); None
    when it cannot judge: absent, not a regular file, larger than `limit`, or holding no call."""
    if not path or not isinstance(path, str):
        return None
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except (OSError, ValueError):
        return None
    ids: set[str] = set()
    for raw in data.split(b"\n"):
        if b"call" not in raw and b"item_" not in raw:
            continue
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        payload = line.get("payload") if isinstance(line, dict) else None
        if not isinstance(payload, dict):
            continue
        item = payload.get("item")
        if str(payload.get("type", "")).startswith("item_") and isinstance(item, dict) and isinstance(item.get("id"), str):
            ids.add(item["id"])
        elif payload.get("type") in CALL_TYPES and isinstance(payload.get("call_id"), str):
            ids.add(payload["call_id"])
    return ids or None


def _completed_item(records: list[dict[str, Any]], item_id: str) -> dict[str, Any] | None:
    for payload in records:
        item = payload.get("item")
        if payload.get("type") == "item_completed" and isinstance(item, dict) and item.get("id") == item_id:
            return item
    return None


def transcript_item(path: str | None, item_id: str | None, tail: int = TRANSCRIPT_TAIL) -> dict[str, Any] | None:
    """The `item_completed` item with this id, from the last `tail` bytes of the rollout."""
    return _completed_item(_transcript_records(path, item_id, tail), item_id) if item_id else None


def finished_unreported(path: str | None, item_id: str) -> dict[str, Any] | None:
    """The completed item of a call whose PostToolUse, if Codex had sent one, has already run.

    Codex writes a call's `item_completed` before PostToolUse and the output the model gets
    (`function_call_output` / `custom_tool_call_output`) after it. A call with both whose step is
    still open got no PostToolUse and never will (apply_patch run through the shell)."""
    records = _transcript_records(path, item_id)
    answered = any(p.get("type") in OUTPUT_TYPES and p.get("call_id") == item_id for p in records)
    item = _completed_item(records, item_id) if answered else None
    return item if item is not None and item.get("status") in FINAL_STATUSES else None


def _item_cwd(item: dict[str, Any], fallback: str) -> str:
    cwd = item.get("cwd")
    if isinstance(cwd, str) and cwd:
        return cwd.removeprefix("file://")
    return fallback


def command_reads(item: dict[str, Any] | None, command: str, output: str | None, cwd: str) -> list[Read]:
    """The file reads the shell parser recognised, then the command's own output."""
    reads: list[Read] = []
    if item is not None:
        cwd = _item_cwd(item, cwd)
        aggregated = item.get("aggregated_output")
        if output is None and isinstance(aggregated, str):
            output = aggregated
        parsed = [p for p in item.get("parsed_cmd") or [] if isinstance(p, dict)]
        file_reads = [p for p in parsed if p.get("type") == "read" and isinstance(p.get("path"), str) and p["path"]]
        for entry in file_reads:
            # the command's output is not the file's content (`sed -n 2,3p`, `awk`, `cat a b`): the
            # recorder takes the file's bytes from the recorded state before the step
            reads.append(Read("file", os.path.normpath(os.path.join(cwd, entry["path"])), None))
    if output is not None:
        reads.append(Read("command", command, output))
    return reads
