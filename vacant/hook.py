"""The in-process hook: every platform hook call's answer, payload on stdin. The installed commands
(`vacant-hook PLATFORM`, the `vacant-hook-client.py` launcher) are the lean client
(vacant/daemon/client.py), which asks the workspace's daemon first and falls back to `main` here.

The hot path: it imports the standard library and xxhash only (a test inspects sys.modules).
Recorder hooks fail open: any internal error goes to `errors.log` in the state directory, the
hook prints nothing and exits 0, and the agent carries on. A hook in a directory vacant was never
installed in (vacant.core.locations.installed_root) records nothing and creates nothing. The gate
does not fail open: a PreToolUse call that might be ACT is denied when vacant fails while handling
it (vacant/policy/gate/gate.py `fail_closed`), and so is one it cannot decide before its whole-call
deadline (below every platform's hook timeout: a timeout there would run the tool), one whose
installed workspace lost its state (`install_gone`), and one the hook fails on anywhere at all.
The hook never trusts its environment: `main` drops every variable it must not read first
(vacant/core/trustenv.py).
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
from collections.abc import Callable
from pathlib import Path

from vacant.core.calls import HookCall, Response
from vacant.core.errlog import log_error
from vacant.core.locations import install_gone, installed_root
from vacant.core.trustenv import PEER_PID_ENV, budget, do_verified, scrub
from vacant.platforms.lean_registry import EVENT_KEYS, PRE_TOOL_NAMES, load
from vacant.policy.gate.gate import fail_closed
from vacant.record.recorder import DO_ENV, Recorder

DEFAULT_BUDGET_S = 40.0  # the whole call: below the 60 s every platform gives a tool hook (client.TOOL_CEILING_S)
STOP_BUDGET_S = 570.0  # below the 600 s Stop timeout; the pipeline's own budget is lower still
INSTALL_GONE = ("Not run: vacant is installed in {root} (the install registry outside the workspace says so) but "
                "{what}, so nothing can be recorded or gated. Nothing has been done: tell the person to run "
                "`vacant doctor` there.")


# A payload that names a pre-tool event (of any registered platform): the call may be ACT, so an
# unreadable one is denied.
_PRE_NAMES = b"|".join(re.escape(name.encode()) for name in PRE_TOOL_NAMES)
_EVENT_KEYS = b"|".join(re.escape(key.encode()) for key in EVENT_KEYS)
PRE_TOOL = re.compile(rb'"(?:' + _EVENT_KEYS + rb')"\s*:\s*"(?:' + _PRE_NAMES + rb')"')
PRE_TOOL_ANYWHERE = re.compile(_PRE_NAMES)
EVENT_KEY = re.compile(rb'"(?:' + _EVENT_KEYS + rb')"\s*:')
UNREADABLE = (
    "Not run: vacant could not read this tool call ({error}), so it cannot tell whether it acts beyond the work. "
    "Nothing has been done. This is vacant's own error, not yours: tell the person (details in .git/vacant/errors.log; outside git, in vacant's data directory)."
)


class HookTimeout(Exception):
    pass


def maybe_pre_tool(raw: bytes) -> bool:
    """The payload may be a pre-tool call: its event says so, or it names no event vacant can read
    and mentions a pre-tool event anywhere (every platform's pre-tool payload names its event)."""
    if PRE_TOOL.search(raw):
        return True
    return not EVENT_KEY.search(raw) and bool(PRE_TOOL_ANYWHERE.search(raw))


def deny_unread(platform_name: str, raw: bytes, error: BaseException, env: dict) -> tuple[str, int] | None:
    """The deny for a pre-tool payload vacant failed on before it could decide (None: not pre-tool).
    Rendered by the platform when it loads, else in the JSON Claude Code and Codex share."""
    if not maybe_pre_tool(raw):
        return None
    reason = UNREADABLE.format(error=f"{type(error).__name__}: {str(error)[:200]}")
    call = HookCall("tool_pre", "unknown", Path(env.get("CLAUDE_PROJECT_DIR") or "."), scope=None)
    try:
        return load(platform_name).render(call, Response("deny", reason))
    except BaseException:  # noqa: BLE001 - an unknown platform still gets a deny it may understand
        return json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                                  "permissionDecisionReason": reason},
                           "action": "deny", "reason": reason}), 0


def _on_alarm(signum, frame):
    raise HookTimeout("the hook ran out of its whole-call deadline")


def _arm(seconds: float) -> None:
    """The alarm for what is left of the deadline (at least a moment: 0 would disarm it)."""
    signal.setitimer(signal.ITIMER_REAL, max(0.01, seconds))




def stop_pipeline(recorder: Recorder, call: HookCall, env: dict[str, str] | None = None) -> Response:
    """Stop / SubagentStop: run the attribution pipeline and answer with its feedback."""
    env = os.environ if env is None else env
    if call.kind == "stop" and do_verified(env.get(DO_ENV), recorder.state_dir, _hook_pid(env)):
        return Response()  # `vacant do` owns the rounds: it runs the pipeline when the agent exits
    from vacant.attribute.stop import (
        stop,  # imports pydantic: only at Stop, never on a tool call
    )

    # a platform whose Stop cannot carry feedback to the model reports only (no round claimed)
    outcome = stop(recorder.root, recorder.log.run_dir, call.agent_id, rounds=recorder.platform.stop_rounds)
    if outcome.feedback:
        return Response("block", outcome.feedback)
    return Response(system_message=outcome.system_message or "")


def parse_call(platform_name: str, raw: bytes, env: dict[str, str]):
    """The platform and its normalised call for one raw payload (raises on a malformed one)."""
    platform = load(platform_name)
    payload = json.loads(raw or b"{}")
    if not isinstance(payload, dict):
        raise ValueError("hook payload is not a JSON object")
    return platform, platform.parse(payload, env)


def run(platform_name: str, raw: bytes, env: dict[str, str]) -> tuple[str, int]:
    """The hook's answer to one payload. Whatever fails on a call that may be ACT denies it: a
    payload that cannot be read or parsed (deep nesting, wrong field types, a NUL) is denied when
    it may be a pre-tool call; a failure while handling a parsed one goes to `fail_closed`."""
    try:
        platform, call = parse_call(platform_name, raw, env)
    except BaseException as error:  # noqa: BLE001 - RecursionError, MemoryError, the alarm: all the same
        denied = deny_unread(platform_name, raw, error, env)
        if denied is None:
            raise
        log_error(_root_of(env), f"vacant-hook {platform_name}: could not read the payload "
                                 f"({type(error).__name__}: {str(error)[:200]}); denied: it may be a pre-tool call")
        return denied
    root = installed_root(Path(call.workspace)) if call.workspace else None
    if root is None:  # never installed here (or a bogus cwd such as /etc): record nothing, create nothing
        gone = install_gone(Path(call.workspace)) if call.workspace else None
        if gone is not None:  # ... unless the registry says it is installed: then the gate fails closed
            reason = INSTALL_GONE.format(root=gone[0], what=gone[1])
            log_error(None, f"vacant-hook {platform_name}: {reason}")
            return platform.render(call, Response("deny", reason) if call.kind == "tool_pre" else Response())
        return platform.render(call, Response())
    call.workspace = root
    if call.kind in ("stop", "subagent_stop"):
        _arm(budget(env, STOP_BUDGET_S))  # the Stop pipeline keeps to its own, smaller budget
    return answer(platform_name, platform, call, Recorder, env)


def answer(platform_name: str, platform, call: HookCall, make_recorder, env: dict[str, str],
           after: list[Callable[[], None]] | None = None) -> tuple[str, int]:
    """Record one call and render the platform's answer: the recorder fails open, the gate closed.
    `make_recorder(root, session_id, platform)` is the Recorder (the daemon passes one bound to
    its watched scanner). `after`: when given, the recorder's finishing work (saving the run state,
    releasing the workspace lock; Recorder.begin) is put there for the caller to run once the
    answer is sent, instead of being done before answering."""
    try:
        recorder = make_recorder(call.workspace, call.session_id, platform)
        response, finish = recorder.begin(call)
        if after is None or call.kind in ("stop", "subagent_stop"):
            finish()
        else:
            after.append(finish)
        if call.kind in ("stop", "subagent_stop"):
            response = stop_pipeline(recorder, call, env)  # outside the recorder's lock: replay may take a while
    except BaseException as error:  # the recorder fails open, the gate fails closed
        try:
            denied = fail_closed(call, error)
        except BaseException:  # noqa: BLE001 - deciding failed too: a call that may be ACT is denied
            denied = None if call.scope == [] or call.kind != "tool_pre" else Response("deny", UNREADABLE.format(
                error=f"{type(error).__name__}: {str(error)[:200]}"))
        if denied is None:
            error.vacant_read_call = True  # decided READ: main() fails open on it
            raise
        log_error(Path(call.workspace), f"vacant-hook {platform_name}: {type(error).__name__}: {error} "
                                        "(the call was denied: it may be ACT)")
        return platform.render(call, denied)
    return platform.render(call, response)


def _root_of(env: dict) -> Path | None:
    return Path(env["CLAUDE_PROJECT_DIR"]) if env.get("CLAUDE_PROJECT_DIR") else None


def _hook_pid(env: dict) -> int:
    """The hook process: the daemon's peer (SO_PEERCRED, set by the daemon), else this process."""
    try:
        return int(env.get(PEER_PID_ENV) or os.getpid())
    except ValueError:
        return os.getpid()


def main(argv: list[str] | None = None, raw: bytes | None = None, deadline: float | None = None) -> int:
    """`raw`: the payload when the caller already read stdin (the lean client's fallback);
    `deadline`: the whole call's (time.monotonic()), when the caller started the clock already.
    Nothing escapes: a pre-tool call that is not decided in time, or on which anything at all
    fails, is denied; any other call fails open (exit 0, nothing printed, errors.log says why)."""
    import time

    argv = sys.argv[1:] if argv is None else argv
    given, raw, root, platform_name = raw, b"", None, argv[0] if argv else ""
    try:
        scrub(os.environ)  # before anything reads a variable (locations, the platform, the gate)
        root = _root_of(os.environ)
        raw = sys.stdin.buffer.read() if given is None else given
        if deadline is None:
            deadline = time.monotonic() + budget(os.environ, DEFAULT_BUDGET_S)
        signal.signal(signal.SIGALRM, _on_alarm)
        left = deadline - time.monotonic()
        if left <= 0.05:
            raise HookTimeout("the whole-call deadline was spent before the in-process hook started")
        _arm(left)
        if len(argv) != 1:
            log_error(root, f"usage: vacant-hook PLATFORM (got {argv!r})")
            return 0
        stdout, code = run(argv[0], raw, dict(os.environ))
        signal.setitimer(signal.ITIMER_REAL, 0)
    except BaseException as error:  # noqa: BLE001 - deny what may act, fail open on the rest
        return _failed(platform_name, raw, root, error)
    if stdout:
        sys.stdout.write(stdout)
        sys.stdout.flush()
    return code


def _failed(platform_name: str, raw: bytes, root: Path | None, error: BaseException) -> int:
    try:
        signal.setitimer(signal.ITIMER_REAL, 0)
        if isinstance(error, KeyboardInterrupt):
            return 0
        denied = None
        if not getattr(error, "vacant_read_call", False):  # not a call already decided READ
            denied = deny_unread(platform_name, raw, error, dict(os.environ))
        if denied is not None:
            stdout, code = denied
            sys.stdout.write(stdout)
            sys.stdout.flush()
            log_error(root, f"vacant-hook {platform_name}: {type(error).__name__}: {error} (a pre-tool call: denied)")
            return code
        import traceback  # only on the error path

        log_error(root, f"vacant-hook {platform_name}: {type(error).__name__}: {error}\n{traceback.format_exc()}")
        return 0
    except BaseException:  # noqa: BLE001 - even reporting failed: the launcher's last resort
        raise error from None


if __name__ == "__main__":
    sys.exit(main())
