"""The Claude Agent SDK (Python): an agent built on `claude-agent-sdk` recorded and gated in-process.

    from claude_agent_sdk import ClaudeAgentOptions, query
    import vacant.sdk

    options = ClaudeAgentOptions(cwd=workspace, hooks=vacant.sdk.hooks(workspace=workspace))

`hooks()` returns the SDK's hook matchers for every event Claude's platform module handles
(vacant/platforms/claude.py EVENT_KINDS). The SDK runs the claude CLI and hands each hook event
to a callback in this process with the same JSON a command hook reads on stdin; the callback
answers it through the hook's own answer (vacant/hook/call.py `run`: the recorder, the gate on a
pre-tool call, the Stop pipeline at a Stop) and returns what the command hook would have printed,
as the SDK's dict: a deny the CLI obeys, a Stop blocked with the feedback (the same query goes
on), a message for the person. The workspace must be set up once with `vacant init` (no platform:
the SDK's hooks are these, not the settings file's).

Trust, as for the command hook: a pre-tool call vacant fails on, or cannot decide within the
hook's deadline, is denied (`fail_closed`); any other event fails open (`{}`, errors.log says
why). The environment the answer reads is a scrubbed copy of this process's (trustenv.scrub):
this process's own environment is left as it is.

`claude_agent_sdk` is imported only when `hooks()` is called: `pip install 'vacant-trace[sdk]'`.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any, Awaitable, Callable

from vacant.core.errlog import log_error
from vacant.core.trustenv import budget, scrub
from vacant.hook.call import decided_read, fail_closed, run
from vacant.hook.entry import DEFAULT_BUDGET_S, STOP_BUDGET_S
from vacant.platforms.claude import DEFAULT_TIMEOUT, EVENT_KINDS, TIMEOUTS
from vacant.platforms.claude import PLATFORM as CLAUDE

PLATFORM = CLAUDE.name
PROJECT_DIR_ENV = CLAUDE.project_dir_env[0]  # where Claude's platform module takes the workspace from
STOP_KINDS = ("stop", "subagent_stop")
DENIED = ("Not run: vacant could not answer this tool call ({error}), so it cannot tell whether it acts beyond "
          "the work. Nothing has been done. This is vacant's own error, not yours: tell the person.")

SdkCallback = Callable[[Any, "str | None", Any], Awaitable[Any]]  # the SDK types its inputs and outputs as TypedDicts


def events() -> tuple[str, ...]:
    """Every event vacant takes from Claude, by Claude's names: the SDK's hook events."""
    return tuple(EVENT_KINDS)


def hooks(workspace: str | os.PathLike[str] | None = None) -> dict[str, list[Any]]:
    """`ClaudeAgentOptions(hooks=...)`: one matcher per event, each calling vacant.

    `workspace`: the project vacant records (where `vacant init` was run). None: the directory the
    agent's session started in (the `cwd` of its first event), kept for that session."""
    from claude_agent_sdk import HookMatcher  # the optional dependency: only when used

    answerer = Answerer(Path(workspace).resolve() if workspace is not None else None)
    return {event: [HookMatcher(matcher=None, hooks=[answerer.callback(event)],
                                timeout=TIMEOUTS.get(event, DEFAULT_TIMEOUT))]
            for event in events()}


class Answerer:
    """The callbacks of one `hooks()`: the workspace each session records into, and one call
    answered at a time (the CLI's command hooks are processes that queue on the workspace lock;
    here they are threads of one process, which queue here first)."""

    def __init__(self, workspace: Path | None) -> None:
        self.workspace = workspace
        self.roots: dict[str, str] = {}  # session id -> the workspace its first event named
        self.serial = threading.Lock()

    def callback(self, event: str) -> SdkCallback:
        async def answer(input_data: Any, tool_use_id: str | None, context: Any) -> Any:
            return await self.answer(event, dict(input_data), tool_use_id)

        answer.__name__ = f"vacant_{event}"
        return answer

    async def answer(self, event: str, input_data: dict[str, Any], tool_use_id: str | None) -> dict[str, Any]:
        import anyio  # the SDK's own async library (asyncio or trio, whichever runs the query)

        payload = self.payload(event, input_data, tool_use_id)
        env = self.env(payload)
        raw = json.dumps(payload).encode()
        kind = EVENT_KINDS.get(event, "ignore")
        seconds = budget(env, STOP_BUDGET_S if kind in STOP_KINDS else DEFAULT_BUDGET_S)
        try:
            with anyio.fail_after(seconds):
                stdout, _ = await anyio.to_thread.run_sync(self.run, raw, env, abandon_on_cancel=True)
        except Exception as error:  # noqa: BLE001 - deny what may act, fail open on the rest
            return self.failed(kind, raw, env, error)
        return sdk_output(stdout)

    def payload(self, event: str, input_data: dict[str, Any], tool_use_id: str | None) -> dict[str, Any]:
        """What a command hook would read on stdin (the SDK passes the CLI's hook input as it is)."""
        payload = dict(input_data)
        payload.setdefault("hook_event_name", event)
        if tool_use_id and not payload.get("tool_use_id"):
            payload["tool_use_id"] = tool_use_id
        return payload

    def env(self, payload: dict[str, Any]) -> dict[str, str]:
        """A scrubbed copy of this process's environment naming the workspace, as the CLI names it
        for a command hook."""
        env = dict(os.environ)
        scrub(env)
        root = self.root(payload)
        if root:
            env[PROJECT_DIR_ENV] = root
        return env

    def root(self, payload: dict[str, Any]) -> str | None:
        if self.workspace is not None:
            return str(self.workspace)
        session, cwd = str(payload.get("session_id") or ""), payload.get("cwd")
        if session not in self.roots and isinstance(cwd, str) and cwd:
            self.roots[session] = cwd
        return self.roots.get(session)

    def run(self, raw: bytes, env: dict[str, str]) -> tuple[str, int]:
        with self.serial:
            return run(PLATFORM, raw, env)

    def failed(self, kind: str, raw: bytes, env: dict[str, str], error: BaseException) -> dict[str, Any]:
        """The rule of vacant/hook/call.py `fail_closed`: a deny when the call may act, else nothing."""
        root = env.get(PROJECT_DIR_ENV)
        where = Path(root) if root else None
        reason = f"{type(error).__name__}: {str(error)[:200]}"
        try:
            denied = None if decided_read(error) else fail_closed(PLATFORM, raw, error, env)
        except Exception:  # noqa: BLE001 - judging failed too: a pre-tool call is denied
            denied = None
            if kind == "tool_pre":
                log_error(where, f"vacant.sdk: {reason} (a pre-tool call: denied)")
                return deny(DENIED.format(error=reason))
        if denied is not None:
            log_error(where, f"vacant.sdk: {reason} (a pre-tool call: denied)")
            return sdk_output(denied[0])
        log_error(where, f"vacant.sdk: {reason}")
        return {}


def deny(reason: str) -> dict[str, Any]:
    """A PreToolUse deny in the SDK's shape."""
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                   "permissionDecisionReason": reason}}


SDK_KEYS = {"continue": "continue_", "async": "async_"}  # the SDK's names for Python's keywords


def sdk_output(stdout: str) -> dict[str, Any]:
    """What a command hook printed, as the SDK's callback returns it (empty: no opinion)."""
    if not stdout.strip():
        return {}
    printed = json.loads(stdout)
    return {SDK_KEYS.get(key, key): value for key, value in printed.items()}
