"""One hook call answered, whichever door it came in by. Parse the payload, check the installed
workspace (once), record it (the recorder runs the gate on a pre-tool call), run the Stop
pipeline at a Stop, render the platform's answer; and the one rule for a call vacant fails on
(`fail_closed`). Both doors use it: the in-process entry (vacant/hook/entry.py, which keeps the
process's own concerns: stdin, the whole-call deadline, the exit code, the environment scrub)
and the daemon (vacant/daemon/server.py, which keeps its sockets' concerns).

Trust: the recorder fails open, the gate fails closed. Whatever raises while a call is answered
(a malformed payload, a lock that times out, the deadline's alarm, a MemoryError), a call that
may be ACT is denied, with a message saying why, and any other call gets nothing. A hook in a
directory vacant was never installed in records nothing and creates nothing; one whose install
lost its state (`install_gone`) is denied when it may act.

Stdlib + xxhash only at import (the hook's hot path; the Stop pipeline and the probe load late).
"""

from __future__ import annotations

from vacant.core import leanjson as json  # not `import json`: 13 ms CPU of each hook call (vacant/hook/lean.py)
import os
from pathlib import Path

from vacant.core.leanstd import ExitStack, contextmanager
from vacant.core.calls import HookCall, Response
from vacant.core.errlog import log_error
from vacant.core.locations import INSTALL_RECORD, Workspace, install_gone, installed_workspace, prepare_state_dir
from vacant.core.trustenv import PEER_PID_ENV, do_verified
from vacant.platforms.lean_registry import load, project_dir
from vacant.record.recorder import DO_ENV, Recorder

TYPE_CHECKING = False  # typing's, without importing typing: that costs each hook call 15 ms CPU (hook/lean.py)
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from contextlib import AbstractContextManager
    from typing import Protocol

    class Answerer(Protocol):
        """What a call needs of its platform: any registered platform (vacant/platforms) is one."""

        @property
        def stop_rounds(self) -> int | None: ...

        def parse(self, payload: dict[str, object], env: dict[str, str]) -> HookCall: ...

        def render(self, call: HookCall, response: Response) -> tuple[str, int]: ...

    class Scanner(Protocol):
        """The daemon's watched scanner (vacant/daemon/scanner.py), as far as a call uses it."""

        state: Path

INSTALL_GONE = ("Not run: vacant is installed in {root} (the install registry outside the workspace says so) but "
                "{what}, so nothing can be recorded or gated. Nothing has been done: tell the person to run "
                "`vacant doctor` there.")
UNREADABLE = (
    "Not run: vacant could not read this tool call ({error}), so it cannot tell whether it acts beyond the work. "
    "Nothing has been done. This is vacant's own error, not yours: tell the person (details in .git/vacant/errors.log; outside git, in vacant's data directory)."
)
FAILED_ACT = (
    "Not run: vacant failed while handling this call ({error}), and it is an action that needs the person's "
    "answer, which vacant could not look up. Nothing has been done. This is vacant's own error, not yours: "
    "tell the person (details in errors.log in vacant's state directory; `vacant doctor` names it)."
)

STOPS = ("stop", "subagent_stop")


class Foreign(Exception):
    """A call for a workspace other than the one the daemon serves (it refuses it; the lean client
    then answers in-process)."""


class Served:
    """What the daemon hands each call: the workspace it serves, its watched scanner, and the lock
    its own threads queue on (a call waits there, not in the workspace lock's polling back-off).
    `scanner`: the daemon's watched one (vacant/daemon/scanner.py), which knows its state directory."""

    def __init__(self, root: Path, scanner: Scanner, serial: AbstractContextManager[object]) -> None:
        self.root = Path(root)
        self.scanner = scanner
        self.serial = serial


def parse_call(platform_name: str, raw: bytes, env: dict[str, str]) -> tuple[Answerer, HookCall]:
    """The platform and its normalised call for one raw payload (raises on a malformed one)."""
    platform = load(platform_name)
    payload = json.loads(raw or b"{}")
    if not isinstance(payload, dict):
        raise ValueError("hook payload is not a JSON object")
    return platform, platform.parse(payload, env)


# -- the one rule for a call vacant failed on ----------------------------------------------------


def fail_closed(platform_name: str, raw: bytes, error: BaseException, env: dict[str, str],
                call: HookCall | None = None) -> tuple[str, int] | None:
    """The answer to a call vacant failed on, whatever raised and wherever: a deny, rendered for
    the platform, when the call may be ACT; None when it is a recorder-only event or plainly READ
    (the caller fails open: nothing printed, exit 0). `call`: the parsed call, when parsing got
    that far (the gate's rules then decide); without it the raw payload does, and the registry's
    deny table answers (vacant/platforms/deny.py: a payload that names or mentions a pre-tool
    event is denied in its platform's reply). The table answers too when the platform cannot
    render: it holds the same reply, rendered when the table was generated."""
    reason = f"{type(error).__name__}: {str(error)[:200]}"
    if call is None:
        from vacant.platforms import deny  # the failure path only

        return deny.denial(platform_name, raw, UNREADABLE.format(error=reason))
    try:
        denied = _deny_if_act(call, f"{type(error).__name__}: {error}")
    except BaseException:  # noqa: BLE001 - deciding failed too: a call that may be ACT is denied
        denied = None if call.scope == [] or call.kind != "tool_pre" else Response(
            "deny", UNREADABLE.format(error=reason))
    if denied is None:
        return None
    try:
        platform: Answerer = load(platform_name)
        return platform.render(call, denied)
    except BaseException:  # noqa: BLE001 - the platform cannot render: the table holds its deny
        from vacant.platforms import deny

        return deny.reply(platform_name, denied.reason or "", deny.pre_tool(raw))


def _deny_if_act(call: HookCall, reason: str) -> Response | None:
    """The gate's rules on a parsed call vacant failed on (the recorder itself failed, e.g. its lock
    timed out): a deny when it might be ACT, None when it is plainly READ."""
    if call.kind != "tool_pre":
        return None
    from vacant.policy.gate.gate import classify
    from vacant.policy.gate.rules import Verdict, load_policy

    verdict: Verdict | None
    try:
        verdict = classify(call.workspace, call, load_policy(call.workspace))
    except Exception:  # noqa: BLE001
        verdict = None if call.scope == [] else Verdict("act", None, "")
    if verdict is None or verdict.kind == "pass":
        return None
    if verdict.kind == "refuse":
        return Response("deny", verdict.message)
    return Response("deny", FAILED_ACT.format(error=reason))


DECIDED_READ = "vacant_read_call"  # the mark `_answer` leaves on an error it judged READ


def decided_read(error: BaseException) -> bool:
    """`fail_closed` already judged the call this error came from and let it through: the caller
    fails open on it, without judging the raw payload again."""
    return bool(getattr(error, DECIDED_READ, False))


# -- the call ----------------------------------------------------------------------------------


class Found:
    """What one call looked up, once: its platform, its parsed call and the installed workspace it
    records into; or, when that already decides it (an ignored event, a workspace vacant was never
    installed in, one whose install is gone, a payload that cannot be read), the `answer`."""

    __slots__ = ("answer", "call", "platform", "platform_name", "raw", "unsealed", "workspace")

    def __init__(self, platform_name: str, raw: bytes, platform: Answerer | None = None, call: HookCall | None = None,
                 workspace: Workspace | None = None, answer: tuple[str, int] | None = None,
                 unsealed: str | None = None) -> None:
        self.platform_name, self.raw, self.platform, self.call = platform_name, raw, platform, call
        self.workspace, self.answer = workspace, answer
        self.unsealed = unsealed  # a Post's or Stop's: the wall's seal broken, said to the person

    @property
    def stops(self) -> bool:
        """A Stop that will run the pipeline (its own deadline; the collector back on in-process)."""
        return self.answer is None and self.call is not None and self.call.kind in STOPS


def look_up(platform_name: str, raw: bytes, env: dict[str, str], served: Served | None = None) -> Found:
    """Parse the payload and find the installed workspace, once per call. A payload the daemon
    cannot read, or a call for another workspace (`Foreign`), raises: the daemon refuses it and
    the lean client answers in-process; in-process an unreadable payload is answered here (a deny
    when it may be a pre-tool call), and anything else that raises is the caller's to judge."""
    try:
        platform, call = parse_call(platform_name, raw, env)
    except BaseException as error:  # noqa: BLE001 - RecursionError, MemoryError, the alarm: all the same
        if served is not None:
            raise
        denied = fail_closed(platform_name, raw, error, env)
        if denied is None:
            raise
        log_error(root_of(platform_name, env), f"vacant-hook {platform_name}: could not read the payload "
                                               f"({type(error).__name__}: {str(error)[:200]}); denied: it may be a pre-tool call")
        return Found(platform_name, raw, answer=denied)
    if call.kind == "ignore":
        return Found(platform_name, raw, platform, call, answer=platform.render(call, Response()))
    where = _workspace(call, served)
    if where is None:  # never installed here (or a bogus cwd such as /etc): record nothing, create nothing
        return Found(platform_name, raw, platform, call, answer=platform.render(call, Response()))
    if isinstance(where, str):  # installed, but its state is gone: the gate fails closed
        log_error(served.root if served else None, f"vacant-hook {platform_name}: {where}")
        gone = Response("deny", where) if call.kind == "tool_pre" else Response()
        return Found(platform_name, raw, platform, call, answer=platform.render(call, gone))
    call.workspace = where.root
    unsealed = wall_changed(where) if call.kind in SEALED_AT else None
    if unsealed:
        log_error(where.root, f"vacant-hook {platform_name}: {unsealed}")
    if unsealed and call.kind == "tool_pre":  # the wall was taken down from inside: nothing more runs until the person looks
        return Found(platform_name, raw, platform, call, answer=platform.render(call, Response("deny", unsealed)))
    return Found(platform_name, raw, platform, call, where, unsealed=unsealed)


# the calls that check the wall's seal: each pre-tool call (denied), and the Post and Stop after
# the session's last call (nothing is called after a rename there: they say it to the person)
SEALED_AT = ("tool_pre", "tool_post", "tool_batch", *STOPS)


WALL_CHANGED = ("Not run: the wall around this workspace was changed: {what}. Nothing the agent runs goes "
                "on until the person looks: if they did this themselves, `vacant init` again accepts it.")


def wall_changed(workspace: Workspace) -> str | None:
    """The deny reason when the wall's seal (vacant/core/seal.py, in the install record) no longer
    holds, else None."""
    from vacant.core.seal import broken

    record = workspace.install
    if record is None:
        from vacant.core.locations import read_install

        record = read_install(workspace.root, workspace.state)
    what = broken(workspace.root, (record or {}).get("seal"))
    return WALL_CHANGED.format(what=what) if what else None


@contextmanager
def answering(found: Found, env: dict[str, str], served: Served | None = None) -> Iterator[tuple[str, int]]:
    """The answer to one call looked up (`look_up`): (stdout, exit code), to be sent inside the `with`.

    In-process (`served` None) the call's finishing work (saving the run state, releasing the
    workspace lock) is done before the answer is given. The daemon passes `served`: the answer
    then comes while the recorder still holds the lock, and the finishing work runs when the
    `with` ends, once the answer is sent, so the agent does not wait for it (a failure there is
    logged: the answer is out)."""
    if found.answer is not None:
        yield found.answer
        return
    with ExitStack() as held:
        answer = _answer(found, env, served, held)
        if served is None:
            yield answer
            return
        try:
            yield answer
        finally:
            try:
                held.close()
            except Exception as error:  # noqa: BLE001 - fail open, like the recorder: the answer is out
                log_error(served.root, f"vacant daemon: after answering: {type(error).__name__}: {error}")


@contextmanager
def serving(platform_name: str, raw: bytes, env: dict[str, str], served: Served) -> Iterator[tuple[str, int]]:
    """The daemon's answer to one payload, looked up and answered inside the `with` (what the
    look-up raises, on a payload the daemon cannot read or another workspace's call, is raised
    on entering: the daemon refuses it)."""
    with answering(look_up(platform_name, raw, env, served), env, served) as answer:
        yield answer


def run(platform_name: str, raw: bytes, env: dict[str, str]) -> tuple[str, int]:
    """The in-process answer to one payload (what `vacant-hook PLATFORM` prints, and its exit code)."""
    with answering(look_up(platform_name, raw, env), env) as answer:
        return answer


def _answer(found: Found, env: dict[str, str], served: Served | None, held: ExitStack) -> tuple[str, int]:
    call, platform, workspace = found.call, found.platform, found.workspace
    if call is None or platform is None or workspace is None:  # look_up leaves no answer only with all three
        raise ValueError(f"a {found.platform_name} call with neither an answer nor what answering it needs")
    try:
        recorder = _recorder(call, platform, workspace, served)
        response = held.enter_context(recorder.recording(call))
        if served is None or call.kind in STOPS:
            held.close()  # in-process the answer waits for the save; a Stop's pipeline runs outside the lock
        if call.kind in STOPS:
            response = stop_pipeline(recorder, call, env)
            watch = recorder.losswatch
            lost = watch.losses if watch is not None else []
            if watch is not None and lost:  # the Stop says every loss of the record to the person, each time
                response = told(response, watch.said(lost))
        if found.unsealed:
            response = told(response, f"vacant: {found.unsealed}")
    except BaseException as error:  # the recorder fails open, the gate fails closed
        denied = fail_closed(found.platform_name, found.raw, error, env, call)
        if denied is None:
            setattr(error, DECIDED_READ, True)  # decided READ: the caller fails open on it (decided_read)
            raise
        log_error(Path(call.workspace), f"vacant-hook {found.platform_name}: {type(error).__name__}: {error} "
                                        "(the call was denied: it may be ACT)")
        return denied
    return platform.render(call, response)


def told(response: Response, message: str) -> Response:
    """The response with `message` for the person added to its system message."""
    said = response.system_message
    return response._replace(system_message=f"{said}\n{message}" if said else message)


def _workspace(call: HookCall, served: Served | None) -> Workspace | str | None:
    """The installed workspace the call records into; a str: why its install is gone (a pre-tool
    call is denied); None: vacant was never installed there. Looked up once per call."""
    if served is not None:
        if Path(call.workspace).resolve() != served.root:
            raise Foreign(f"call for another workspace ({call.workspace}); this daemon serves {served.root}")
        record = served.scanner.state / INSTALL_RECORD
        if call.kind == "tool_pre" and not record.is_file():  # the gate's call: installed means installed
            return INSTALL_GONE.format(root=served.root, what=f"its install record {record} is gone")
        return Workspace(served.root, served.scanner.state, None)
    if not call.workspace:
        return None
    found = installed_workspace(Path(call.workspace))
    if found is not None:
        return found
    gone = install_gone(Path(call.workspace))  # ... unless the registry says it is installed
    return None if gone is None else INSTALL_GONE.format(root=gone[0], what=gone[1])


def _recorder(call: HookCall, platform: Answerer, workspace: Workspace, served: Served | None) -> Recorder:
    if served is None:  # the state directory this call found: the gate may take it as it is
        return Recorder(workspace.root, call.session_id, platform, start_probe=start_probe,
                        state=prepare_state_dir(workspace.root, workspace.state), state_found_now=True)
    return Recorder(served.root, call.session_id, platform, scanner=served.scanner, state=served.scanner.state,
                    serial=served.serial, start_probe=start_probe)


def start_probe(root: Path, run_dir: Path) -> None:
    """What a run starts in the background: the baseline probe of the acceptance checks
    (vacant.attribute.baseline_probe, imported only when a run starts in a workspace with a contract)."""
    from vacant.attribute import baseline_probe

    baseline_probe.start(root, run_dir)


def stop_pipeline(recorder: Recorder, call: HookCall, env: Mapping[str, str] | None = None) -> Response:
    """Stop / SubagentStop: run the attribution pipeline and answer with its feedback."""
    env = os.environ if env is None else env
    if call.kind == "stop" and do_verified(env.get(DO_ENV), recorder.state_dir, _hook_pid(env)):
        return Response()  # `vacant do` owns the rounds: it runs the pipeline when the agent exits
    from vacant.attribute.stop import (
        stop,  # imports pydantic: only at Stop, never on a tool call
    )
    from vacant.platforms import git_exclude

    try:  # a placeholder's path made for real since: git sees it again (never the Stop's failure)
        git_exclude.refresh(recorder.root)
    except Exception as error:  # noqa: BLE001 - recorder side: fail open
        log_error(recorder.root, f"git exclude refresh: {type(error).__name__}: {error}")

    # a platform whose Stop cannot carry feedback to the model reports only (no round claimed)
    outcome = stop(recorder.root, recorder.log.run_dir, call.agent_id, rounds=recorder.platform.stop_rounds)
    if outcome.feedback:
        return Response("block", outcome.feedback)
    return Response(system_message=outcome.system_message or "")


def root_of(platform_name: str, env: dict[str, str]) -> Path | None:
    """The project's root as the platform's hook environment names it: where a failure before the
    payload is read is logged (None: vacant's data directory)."""
    named = project_dir(platform_name, env)
    return Path(named) if named else None


def _hook_pid(env: Mapping[str, str]) -> int:
    """The hook process: the daemon's peer (SO_PEERCRED, set by the daemon), else this process."""
    try:
        return int(env.get(PEER_PID_ENV) or os.getpid())
    except ValueError:
        return os.getpid()
