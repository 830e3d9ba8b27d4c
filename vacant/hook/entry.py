"""The in-process hook: the process that answers one platform hook call, payload on stdin. The
installed commands (`vacant-hook PLATFORM`, the `vacant-hook-client.py` launcher) are the lean
client (vacant/hook/client.py), which asks the workspace's daemon first and falls back to
`main` here.

This module keeps the process's concerns only: the environment scrub (vacant/core/trustenv.py:
the hook never trusts its environment), stdin, the whole-call deadline (an alarm below every
platform's hook timeout: a timeout there would run the tool), the exit code. The call itself is
answered by vacant/hook/call.py, as in the daemon; its `fail_closed` also decides what a failure
anywhere in this process means: a call that may be ACT is denied, any other fails open (exit 0,
nothing printed, `errors.log` in the state directory says why).

The hot path: it imports the standard library and xxhash only (a test inspects sys.modules).
"""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path

from vacant.core.errlog import log_error
from vacant.core.trustenv import budget, scrub
from vacant.hook.call import answering, decided_read, fail_closed, look_up, root_of

TYPE_CHECKING = False  # typing's, without importing typing: that costs each hook call 15 ms CPU (hook/lean.py)
if TYPE_CHECKING:
    import signal  # the stubs (the C module has none)
    from types import FrameType
else:
    import _signal as signal  # signal.py adds an enum of the constants (and imports enum): not needed here

DEFAULT_BUDGET_S = 40.0  # the whole call: below the 60 s every platform gives a tool hook (client.TOOL_CEILING_S)
STOP_BUDGET_S = 570.0  # below the 600 s Stop timeout; the pipeline's own budget is lower still


class HookTimeout(Exception):
    pass


def _on_alarm(signum: int, frame: FrameType | None) -> None:
    raise HookTimeout("the hook ran out of its whole-call deadline")


def _arm(seconds: float) -> None:
    """The alarm for what is left of the deadline (at least a moment: 0 would disarm it)."""
    signal.setitimer(signal.ITIMER_REAL, max(0.01, seconds))


def _before_stop(env: dict[str, str]) -> None:
    """A Stop runs the pipeline (minutes, threads, many objects): its own deadline, and the
    collector the launchers switch off for a tool call's few milliseconds back on."""
    gc.enable()
    _arm(budget(env, STOP_BUDGET_S))


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
        env = dict(os.environ)
        root = root_of(platform_name, env)
        raw = sys.stdin.buffer.read() if given is None else given
        if deadline is None:
            deadline = time.monotonic() + budget(env, DEFAULT_BUDGET_S)
        signal.signal(signal.SIGALRM, _on_alarm)
        left = deadline - time.monotonic()
        if left <= 0.05:
            raise HookTimeout("the whole-call deadline was spent before the in-process hook started")
        _arm(left)
        if len(argv) != 1:
            log_error(root, f"usage: vacant-hook PLATFORM (got {argv!r})")
            return 0
        found = look_up(argv[0], raw, env)  # the payload parsed and the workspace found, once
        if found.stops:
            _before_stop(env)
        with answering(found, env) as (stdout, code):
            pass
        signal.setitimer(signal.ITIMER_REAL, 0)
    except BaseException as error:  # noqa: BLE001 - deny what may act, fail open on the rest
        return _failed(platform_name, raw, root, error)
    if stdout:
        sys.stdout.write(stdout)
        sys.stdout.flush()
    return code


def _failed(platform_name: str, raw: bytes, root: Path | None, error: BaseException) -> int:
    """Whatever stopped the call (a SIGINT's KeyboardInterrupt too): a call that may act is denied."""
    try:
        signal.setitimer(signal.ITIMER_REAL, 0)
        denied = None if decided_read(error) else fail_closed(platform_name, raw, error, dict(os.environ))
        if denied is not None:
            stdout, code = denied
            sys.stdout.write(stdout)
            sys.stdout.flush()
            log_error(root, f"vacant-hook {platform_name}: {type(error).__name__}: {error} (a pre-tool call: denied)")
            return code
        if isinstance(error, KeyboardInterrupt):
            return 0  # interrupted on a call that does not act: nothing to report
        import traceback  # only on the error path

        log_error(root, f"vacant-hook {platform_name}: {type(error).__name__}: {error}\n{traceback.format_exc()}")
        return 0
    except BaseException:  # noqa: BLE001 - even reporting failed: the launcher's last resort
        raise error from None


if __name__ == "__main__":
    sys.exit(main())
