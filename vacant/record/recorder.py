"""Turns normalised hook calls into step-log events, with the scans around each step.

One hook process handles one call under the workspace lock (scans share the index, and step
numbers must follow start order). The small run state (`run.json`: next step number, open steps,
agents) is read and written under the same lock. Stdlib + xxhash only (hot path).
"""

from __future__ import annotations

from vacant.core import leanjson as json  # not `import json`: 13 ms CPU of each hook call (vacant/hook/lean.py)
import os
from pathlib import Path

from vacant.core.leanstd import ExitStack, contextmanager
from vacant.core.atomic import atomic_write
from vacant.core.calls import HookCall, Read, Response
from vacant.core.locations import ensure_state_dir, read_install, run_dir
from vacant.core.redact import redact_bytes
from vacant.core.safeio import SMALL_CAP, read_capped
from vacant.record import hookwatch, recovery
from vacant.record.losswatch import LOST, LossWatch
from vacant.store.exclude import excluded
from vacant.store.hasher import ScanResult, relative_to_root
from vacant.store.objects import hash_bytes
from vacant.store.states import open_scanner, save_manifest
from vacant.core.filelock import file_lock
from vacant.store.steplog import StepLog

TYPE_CHECKING = False  # typing's, without importing typing: that costs each hook call 15 ms CPU (hook/lean.py)
if TYPE_CHECKING:
    from contextlib import AbstractContextManager
    from collections.abc import Callable, Iterator

WORKSPACE_LOCK_TIMEOUT_S = 60.0
MAIN = "main"
RECONCILED = "reached no hook (the daemon was down?): found in the transcript at Stop"
DANGLING = "closed at Stop: the hook recording this step was killed before it finished"
RAN_UNHEARD = "listed as not run, but it changed what it may write: it ran, and its Post never reached vacant"
DO_ENV = "VACANT_DO"  # set by `vacant do` for the agent it runs (and so for the agent's hooks)
VERIFIED_KINDS = ("shell", "write", "edit", "patch")  # the Stop checks who wrote these steps' changes


# the task family line of a contract, as a regex (the definition `family_in` keeps to)
TASK_FAMILY_PATTERN = r'^\s*task_family\s*=\s*["\']([^"\']+)["\']'


def family_in(text: str) -> str | None:
    """`re.search(TASK_FAMILY_PATTERN, text, re.MULTILINE).group(1)`, None for no match, without
    `re`: every call records its cell, and `re` with its enum costs a call about 4 ms. At each line
    start, in order: whitespace (`\\s`: str.isspace), `task_family`, whitespace, `=`, whitespace,
    a quote, then everything up to the next quote of either kind (at least one character). A
    line start inside whitespace already skipped lands where that skip did, so it is not tried again."""
    start = 0
    while True:
        at = _past_space(text, start)
        found = _family_at(text, at)
        if found is not None:
            return found
        newline = text.find("\n", at)
        if newline < 0:
            return None
        start = newline + 1


def _past_space(text: str, at: int) -> int:
    while at < len(text) and text[at].isspace():
        at += 1
    return at


def _family_at(text: str, at: int) -> str | None:
    if not text.startswith("task_family", at):
        return None
    at = _past_space(text, at + len("task_family"))
    if not text.startswith("=", at):
        return None
    at = _past_space(text, at + 1)
    if at >= len(text) or text[at] not in "\"'":
        return None
    ends = [end for end in (text.find('"', at + 1), text.find("'", at + 1)) if end >= 0]
    end = min(ends, default=-1)
    return text[at + 1:end] if end > at + 1 else None


def task_family(root: Path) -> str:
    """The contract's task family, read without a TOML parser (the hot path stays stdlib-lean)."""
    try:
        text = read_capped(root / "vacant.toml", SMALL_CAP).decode("utf-8", "replace")
    except OSError:  # missing, a FIFO, a device, too big: the default family
        return "general"
    return family_in(text) or "general"


def _file_bytes(path: str, cap: int) -> bytes | None:
    """A regular file's bytes, when it is one and no larger than `cap`."""
    try:
        with open(path, "rb") as handle:
            if not os.path.isfile(path) or os.fstat(handle.fileno()).st_size > cap:
                return None
            return handle.read()
    except OSError:
        return None


class Recorder:
    def __init__(self, root: Path, run_id: str, platform: "Platform", scanner=None,  # noqa: F821
                 state: Path | None = None, serial: AbstractContextManager | None = None,
                 start_probe: Callable[[Path, Path], None] | None = None, state_found_now: bool = False) -> None:
        self.root = Path(root)
        # `state`: the state directory when the caller already holds it (the daemon finds it once
        # at its start, the in-process hook once per call: `state_found_now`)
        self.state_dir = ensure_state_dir(self.root) if state is None else Path(state)
        # found by this call (not the daemon's, found at its start): the gate may take it
        self._state_found_now = state is None or state_found_now
        self.log = StepLog(run_dir(self.root, run_id, self.state_dir))
        self.run_id = run_id
        self.platform = platform
        self.state_path = self.log.run_dir / "run.json"
        self.run: dict[str, object] = {}
        self._scanner = scanner  # None: opened on first use; the daemon passes its watched one
        # the daemon's lock for its own threads: a call waits there, not in the workspace lock's
        # polling back-off, while an earlier call finishes
        self._serial = serial
        # `start_probe(root, run_dir)`: what a run starts in the background (the hook call hands
        # vacant.attribute.baseline_probe.start, a layer above this one); None: nothing
        self._start_probe = start_probe
        self.losswatch: LossWatch | None = None  # the record's tally, checked once per call (_locked)
        self._run_raw: bytes | None = None  # run.json's bytes as this call read them

    # -- entry -------------------------------------------------------------------------------

    def handle(self, call: HookCall) -> Response:
        with self.recording(call) as response:
            return response

    @contextmanager
    def recording(self, call: HookCall) -> Iterator[Response]:
        """The call recorded under the workspace lock: yields the answer, with every event of the
        call already appended to the step log, and on leaving saves the run state and releases
        the lock (the one place the lock is taken and released). The daemon sends the answer
        inside the `with`, so the agent does not wait for the save; a save that never happens is
        what a hook killed after its appends leaves, which the next call repairs
        (vacant.record.recovery). Nothing is saved when recording itself failed."""
        if call.kind == "ignore":
            yield Response()
            return
        with ExitStack() as held:
            if self._serial is not None:
                held.enter_context(self._serial)
            held.enter_context(file_lock(self.state_dir / "lock", WORKSPACE_LOCK_TIMEOUT_S))
            response = self._locked(call)
            try:
                yield response
            finally:
                self._save_run()

    def _locked(self, call: HookCall) -> Response:
        self.log.run_dir.mkdir(parents=True, exist_ok=True)
        self.run = self._load_run()
        install = read_install(self.root, self.state_dir)  # once: the hooks' and the tally's watch read it
        self._watch_losses(install)
        recovery.reconcile(self.run, self.log)  # records a killed hook appended but never saved
        if not self.run["started"] and call.kind != "session_start":
            self._start(call, "implicit")
        self._note_agent(call)
        if call.kind in ("tool_pre", "stop"):
            self._settle(call)
        handler = getattr(self, f"_on_{call.kind}")
        response = handler(call) or Response()
        notice = self._watch_hooks(install) or self._say_losses()
        if notice and not response.system_message:
            response = response._replace(system_message=notice)
        return response

    def _watch_hooks(self, install: dict[str, object] | None) -> str | None:
        """Once per run: the installed hooks vanished from their settings file (`hooks_missing`)."""
        if self.run.get("hooks_missing"):
            return None
        name = self.platform.name
        path = hookwatch.missing_hooks(install, name)
        if path is None:
            return None
        self.run["hooks_missing"] = path
        self.log.emit("hooks_missing", platform=name, path=path)
        return hookwatch.message(name, path)

    # -- the gate ----------------------------------------------------------------------------

    def _gate(self, call: HookCall) -> Response | None:
        """None: let the step start. A deny: the action must not run (recorded as a not-run step;
        a pause also as `pause_surfaced`). Never raises: whatever fails, a call that may be ACT is
        denied."""
        try:
            from vacant.policy.gate import gate, rules  # a pre-tool call's only: a Post never loads the gate

            state = self.state_dir if self._state_found_now else None
            verdict = gate.classify(self.root, call, rules.load_policy(self.root, state), state=state)
            if verdict.kind == "pass":
                return None
            if verdict.kind == "refuse":
                self.record_not_run(call, verdict.message)
                return Response("deny", verdict.message)
            lost = self.losswatch.held() if self.losswatch is not None else None
            if lost:  # an approval cannot be checked against a record that lost what was decided
                self.record_not_run(call, lost)
                return Response("deny", lost)
            from vacant.policy.gate.asks import consult as asks  # an ACT call only: a Read, Write or Edit that passes never loads it

            outside = self._runs_outside(call, install_walls(self.root, self.state_dir))
            check = None
            if outside is not None:
                def check(card: dict) -> str | None:
                    from vacant.record import unwalled

                    hook_runs = self.platform.hook_runs_approved
                    return unwalled.refusal(self.root, outside, gate.call_cwd(self.root, call),
                                            (card.get("receipts") or {}).get("command"),
                                            hook_runs(self.root) if hook_runs else unwalled.own_git_dir_refusal(self.root),
                                            unwalled.environment(self.root, self._env()))
            held = asks.consult(self.root, self.run_id, self._key(call), call, verdict.action, check)
            if isinstance(held, asks.Spent):
                if outside is not None and self.platform.hook_runs_approved is not None:
                    return self._run_approved(call, outside, held.ask)  # the wall would break it: the hook runs it, once
                return None  # a person's approval was spent on this very action
            self.record_not_run(call, held.text, held.pause)
            return Response("deny", held.text)
        except Exception as error:  # noqa: BLE001 - fail closed, say why
            return self._gate_failed(call, error)

    def _runs_outside(self, call: HookCall, walls: dict[str, object]) -> str | None:
        """The shell line that runs outside vacant's wall (up here for this platform) once approved,
        or None. Where the platform's wall would break it (`hook_runs_approved`), the hook runs it
        (vacant/record/unwalled.py); elsewhere the platform's sandbox runs it unsandboxed (Claude
        Code's `excludedCommands`). Either way it runs as the person, so the same rules decide
        whether it may: a plain push, to no repository the agent can write."""
        if not walls.get(self.platform.name):
            return None
        command = (call.intent or {}).get("command") if call.tool_kind == "shell" else None
        if not isinstance(command, str):
            return None
        from vacant.core.wall import outside_the_wall

        return command if outside_the_wall(command) else None

    @staticmethod
    def _env() -> dict[str, str]:
        return dict(os.environ)  # the hook's (scrubbed by the in-process entry; the daemon's own, spawned scrubbed)

    def _run_approved(self, call: HookCall, command: str, ask: str) -> Response:
        """Run the approved line outside the wall, as one recorded step, and tell the agent (a deny:
        the platform must not run it again)."""
        from vacant.policy.gate.gate import call_cwd
        from vacant.record import unwalled

        key = self._key(call)
        self._start_step(call, key, None)
        try:
            ran = unwalled.run(command, call_cwd(self.root, call), unwalled.environment(self.root, self._env()))
        except Exception as error:  # noqa: BLE001 - the deadline's alarm, say: its process group is killed by now
            ran = unwalled.Ran(None, "", 0.0, f"it was interrupted ({type(error).__name__}: it may have done part "
                                              "of its work)")
        text = unwalled.told(ask, ran)
        outcome = "unknown" if ran.exit_code is None else "ok" if ran.exit_code == 0 else "failed"
        self._end_step(key, outcome, ran.exit_code, [Read("command", command, ran.output)], detail=text[:2000],
                       extra={"ran_by": "vacant", "ask": ask})
        return Response("deny", text)

    def record_not_run(self, call: HookCall, detail: str, pause: dict | None = None) -> int:
        """A denied call as a step that did not run (Claude's PostToolBatch then skips it)."""
        key = self._key(call)
        step = self._start_step(call, key, [])
        if pause is not None:
            self.log.emit("pause_surfaced", step=step, key=key, **pause)
        self._end_step(key, "not-run", None, [], detail=detail[:2000])
        return step

    def _gate_failed(self, call: HookCall, error: BaseException) -> Response | None:
        from vacant.policy.gate import gate, rules

        gate.log_failure(self.root, error)
        if call.scope == []:
            return None  # a tool that writes nothing (Read, Grep, …): nothing to hold back
        message = rules.FAILED.format(error=f"{type(error).__name__}: {error}")
        try:
            self.record_not_run(call, message)
        except Exception:  # noqa: BLE001 - the deny matters more than its record
            pass
        return Response("deny", message)

    # -- run state ---------------------------------------------------------------------------

    def _load_run(self) -> dict[str, object]:
        self._run_raw = None
        try:
            self._run_raw = self.state_path.read_bytes()
            run = json.loads(self._run_raw)
            run.pop("mac", None)  # the seal of the bytes just read (vacant/core/tally.py), not state
            return run
        except (OSError, ValueError, AttributeError):
            return {"started": False, "next_step": 1, "open": {}, "closed": {}, "agents": {}, "oob": 0}

    def _save_run(self) -> None:
        head = self.log.read_head()
        self.run["log_seq"] = head.seq if head is not None else 0  # what the state knows of the log
        sealed = self.losswatch.run_bytes(self.run) if self.losswatch is not None else None
        atomic_write(self.state_path, sealed if sealed is not None else json.dumps(self.run))
        if self.losswatch is not None:
            self.losswatch.saved(self.log.run_dir.name)

    # -- the record's losses (vacant/record/losswatch.py) ------------------------------------

    def _watch_losses(self, install: dict[str, object] | None) -> None:
        """The record against its tally: each loss new to this run goes into the step log."""
        self.losswatch = LossWatch(self.root, self.state_dir, install)
        losses = self.losswatch.check(self.log.run_dir.name, self._run_raw)
        said = self.run.setdefault("losses_logged", [])
        for loss in losses:
            if loss not in said:
                said.append(loss)
                self.log.emit("record_problem", kind=LOST, detail=loss)

    def _say_losses(self) -> str | None:
        """Once per loss per run, on the call that first sees it: a message for the person."""
        losses = self.losswatch.losses if self.losswatch is not None else []
        told = self.run.setdefault("losses_said", [])
        fresh = [loss for loss in losses if loss not in told]
        if not fresh:
            return None
        told.extend(fresh)
        return self.losswatch.said(fresh)

    @property
    def scanner(self):
        if self._scanner is None:
            self._scanner = open_scanner(self.root, self.state_dir)
        return self._scanner

    # -- actors ------------------------------------------------------------------------------

    def _note_agent(self, call: HookCall) -> None:
        """Remember each agent's definition and, once known, its model (emitting `actor`)."""
        agents = self.run["agents"]
        agent = call.agent_id or MAIN
        known = agents.setdefault(agent, {"definition": call.agent_type or MAIN, "model": None})
        if call.agent_type and known["definition"] == MAIN and agent != MAIN:
            known["definition"] = call.agent_type
        models = dict(call.models)
        if call.model:
            models[agent] = call.model
        for agent_id, model in models.items():
            entry = agents.setdefault(agent_id, {"definition": MAIN, "model": None})
            if model and entry["model"] != model:
                entry["model"] = model
                self.log.emit("actor", agent_id=agent_id, agent_definition=entry["definition"], model=model)

    def _actor(self, agent_id: str | None) -> dict[str, object]:
        entry = self.run["agents"].get(agent_id or MAIN, {"definition": MAIN, "model": None})
        return {
            "platform": self.platform.cell_platform,
            "agent_definition": entry["definition"],
            "model": entry["model"],
            "task_family": task_family(self.root),
        }

    # -- scans and steps ---------------------------------------------------------------------

    def _scope(self, paths: list[str] | None) -> list[str] | None:
        if paths is None:
            return None
        rels = [relative_to_root(self.root, path) for path in paths]
        return [rel for rel in rels if rel is not None]

    def _scan(self, scope: list[str] | None) -> ScanResult | None:
        if scope == []:
            return None
        return self.scanner.scan(scope, log=self.log)

    def _open_steps(self) -> list[int]:
        return sorted(info["step"] for info in self.run["open"].values())

    def _record_unexplained(self, result: ScanResult | None, scope: list[str] | None) -> None:
        """A change seen before a step started. Each changed path goes to the open steps that could
        have written it (a shell step could write anything; a Write only its target and the
        directories it creates): one such step owns it, several share it as a group, and a path no
        open step could have written is an out-of-band change set."""
        if result is None or result.empty:
            return
        open_steps = self._open_steps()
        writers = [(info["step"], info["scope"]) for info in self.run["open"].values() if info["scope"] != []]
        by_owners: dict[tuple[int, ...], dict[str, object]] = {}
        for kind, paths in (("added", result.added), ("changed", result.changed), ("removed", result.removed)):
            for rel in paths:
                owners = tuple(step for step, could in writers if _could_write(could, rel))
                part = by_owners.setdefault(owners, {"added": {}, "changed": {}, "removed": []})
                if kind == "removed":
                    part["removed"].append(rel)
                else:
                    part[kind][rel] = paths[rel]
        for owners, delta in by_owners.items():
            if len(owners) == 1:
                self.log.emit("change", step=owners[0], scope=scope, open_steps=open_steps, **delta)
            elif owners:
                self.log.emit("change", step=None, scope=scope, open_steps=open_steps, **delta)
            else:
                self._out_of_band(delta, scope)

    def _out_of_band(self, delta: dict[str, object], scope: list[str] | None) -> None:
        self.run["oob"] += 1
        step = self._next_step()
        key = f"oob-{self.run['oob']}"
        self.log.emit("step_start", step=step, key=key, tool="oob", input=None, actor=None, open_steps=[], scope=scope)
        self.log.emit("change", step=step, scope=scope, open_steps=[step], **delta)
        self.log.emit("step_end", step=step, key=key, outcome="ok")

    def _next_step(self) -> int:
        step = self.run["next_step"]
        self.run["next_step"] = step + 1
        return step

    def _start_step(self, call: HookCall, key: str, scope: list[str] | None) -> int:
        self._record_unexplained(self._scan(scope), scope)
        step = self._next_step()
        self.log.emit(
            "step_start",
            step=step,
            key=key,
            tool=call.tool,
            input=call.tool_input,
            actor=self._actor(call.agent_id),
            open_steps=self._open_steps(),
            scope=scope,
            agent_id=call.agent_id,
            **self._what_it_does(call),
        )
        self.run["open"][key] = {"step": step, "scope": scope, "agent_id": call.agent_id}
        return step

    def _what_it_does(self, call: HookCall) -> dict[str, object]:
        """The step's tool kind (vacant/core/calls.py TOOL_KINDS) and, for a kind whose write the
        Stop verifies (a shell command it may re-run, a file tool whose input says what it wrote),
        the platform's canonical input (`intent`) and the directory it ran in (`cwd`: relative to
        the workspace, `.` for its root, absolute outside it)."""
        kind, intent = call.tool_kind, call.intent
        if kind is None and call.tool:
            kind, intent = self.platform.intent(call.tool, call.tool_input)
        if kind is None:
            return {}
        fields: dict[str, object] = {"kind": kind}
        if kind in VERIFIED_KINDS:
            fields["intent"] = intent
        if isinstance(call.cwd, str) and call.cwd:
            fields["cwd"] = _workspace_relative(self.root, call.cwd)
        return fields

    def _end_step(self, key: str, outcome: str, exit_code: int | None, reads: list[Read], detail: str | None = None,
                  reconciled: str | None = None, extra: dict[str, object] | None = None) -> None:
        info = self.run["open"][key]
        step, scope = info["step"], info["scope"]
        reads = [self._before_step(read) for read in reads]  # before the scan moves the index on
        result = self._scan(scope)
        if result is not None and not result.empty:
            self.log.emit("change", step=step, scope=scope, open_steps=self._open_steps(), **result.delta())
            if outcome == "not-run":  # it changed what it may write, so it ran: its Post never reached vacant
                outcome, detail = "unknown", RAN_UNHEARD
        for read in reads:
            self._record_read(read, step)
        fields: dict[str, object] = {"exit_code": exit_code} if exit_code is not None else {}
        if detail:
            fields["detail"] = detail
        if reconciled:
            fields["reconciled"] = reconciled
        fields.update(extra or {})
        self.log.emit("step_end", step=step, key=key, outcome=outcome, **fields)
        del self.run["open"][key]
        self.run["closed"][key] = step

    def _before_step(self, read: Read) -> Read:
        """A file read the platform reported without its bytes (a shell command that read it):
        the file as the recorded state held it before this step (the index, not yet moved on by
        the step's own scan). A file outside the workspace is read as it is now. Unresolvable:
        content stays None and nothing is recorded (a read never holds bytes its origin lacked)."""
        if read.content is not None or read.origin != "file":
            return read
        rel = relative_to_root(self.root, read.ref)
        if rel is None:
            return Read(read.origin, read.ref, _file_bytes(read.ref, self.scanner.store.cap))
        entry, _ = self.scanner.index.get(rel)
        if entry and entry[0] == "f" and entry[3] and self.scanner.store.has(entry[3]):
            return Read(read.origin, read.ref, self.scanner.store.get(entry[3]))
        return read

    def _record_read(self, read: Read, step: int | None) -> None:
        if read.content is None:
            return
        content = read.content if isinstance(read.content, bytes) else read.content.encode("utf-8", "surrogateescape")
        ref = (relative_to_root(self.root, read.ref) or read.ref) if read.origin == "file" else read.ref
        fields = {}
        if read.origin != "file":  # output, prompts, pages: redacted; a file read is a file state (docs/STORAGE.md)
            content = redact_bytes(content)
        elif excluded(self.root, ref):  # `[store] exclude`: hashed, never stored
            fields["excluded"] = True
        key = hash_bytes(content) if fields else self.scanner.store.put_bytes(content)
        self.log.emit("read", origin=read.origin, ref=ref, object=key, step=step, size=len(content), **fields)

    @staticmethod
    def _key(call: HookCall, tool_use_id: str | None = None) -> str:
        return f"{call.agent_id or MAIN}/{tool_use_id or call.key}"

    def _own_open(self, call: HookCall) -> dict[str, str]:
        """The calling agent's open steps: tool-call id -> step key."""
        prefix = f"{call.agent_id or MAIN}/"  # as in _key
        return {key[len(prefix):]: key for key in self.run["open"] if key.startswith(prefix)}

    def _settle(self, call: HookCall) -> None:
        """Close the open steps the platform reports finished with no Post to come (Codex:
        apply_patch run through the shell). Left open, such a step would sit in every later step's
        group, and each later change would look like one of several parallel writers'."""
        settled = self.platform.settled  # declared by every platform (vacant/platforms/base.py)
        mine = self._own_open(call)
        if settled is None or not mine:
            return
        for tool_use_id, (outcome, exit_code) in settled(call, list(mine)).items():
            self._end_step(mine[tool_use_id], outcome, exit_code, [])

    # -- handlers, one per HookCall kind -----------------------------------------------------

    def _start(self, call: HookCall, source: str) -> None:
        self.scanner.scan(log=self.log)  # bring the index up to date, then keep the full manifest as state_0
        self._emit_run_start(call, source)
        self.run["started"] = True
        if self._start_probe is not None and (self.root / "vacant.toml").exists():
            # acceptance checks green before any work are vacuous: probed detached, on the baseline
            self._start_probe(self.root, self.log.run_dir)

    def _emit_run_start(self, call: HookCall, source: str) -> None:
        from vacant.core.githead import head_commit  # once a run, at its start

        baseline = save_manifest(self.scanner.store, self.scanner.index.entries())
        self.log.emit("run_start", run=self.run_id, platform=self.platform.cell_platform, workspace=str(self.root),
                      source=source, baseline=baseline, session=call.session_id, commit=head_commit(self.root))

    def _on_session_start(self, call: HookCall) -> None:
        if not self.run["started"]:
            self._start(call, call.source or "startup")
            return
        # resume / compact: whatever changed while nobody was recording is out-of-band
        self._record_unexplained(self._scan(None), None)
        self._emit_run_start(call, call.source or "resume")

    def _on_prompt(self, call: HookCall) -> None:
        for read in call.reads:
            self._record_read(read, None)

    def _on_tool_pre(self, call: HookCall) -> Response | None:
        key = self._key(call)
        if key in self.run["open"] or key in self.run["closed"]:
            # a tool-call id seen before: still a call the gate must judge (it may be ACT); a deny
            # is recorded under a key of its own so that the first call's step stays as it was
            call.key = f"{call.key}#again{self.run['next_step']}"
            return self._gate(call)
        denied = self._gate(call)  # ACT without a person's answer: denied, never started
        if denied is not None:
            return denied
        self._start_step(call, key, self._scope(call.scope))
        return None

    def _on_tool_post(self, call: HookCall) -> None:
        key = self._key(call)
        if key in self.run["closed"]:
            return
        if key not in self.run["open"]:  # a Post with no Pre (hooks installed mid-call)
            self._start_step(call, key, self._scope(call.scope))
        self._end_step(key, call.outcome or "ok", call.exit_code, call.reads)

    def _on_tool_batch(self, call: HookCall) -> None:
        """Close calls that got no Post: denied, invalid input (those skip Pre as well)."""
        for item in call.batch:
            key = self._key(call, item.key)
            if key in self.run["closed"]:
                continue
            if key not in self.run["open"]:
                pseudo = HookCall(
                    kind="tool_pre", session_id=call.session_id, workspace=call.workspace,
                    agent_id=call.agent_id, tool=item.tool, tool_input=item.tool_input, key=item.key, scope=[],
                )
                self._start_step(pseudo, key, [])
            self._end_step(key, "not-run", None, [], detail=item.response_text[:2000])

    def _on_change_set(self, call: HookCall) -> None:
        """Changes already made when the call arrives (a watcher's burst): one step, opened and
        closed at once, owning whatever the scan finds now; nothing when it finds nothing."""
        scope = self._scope(call.scope)
        result = self._scan(scope)
        if result is None or result.empty:
            return
        key = self._key(call)
        step = self._next_step()
        self.log.emit("step_start", step=step, key=key, tool=call.tool, input=call.tool_input,
                      actor=self._actor(call.agent_id), open_steps=self._open_steps(), scope=scope,
                      agent_id=call.agent_id)
        self.log.emit("change", step=step, scope=scope, open_steps=[*self._open_steps(), step], **result.delta())
        self.log.emit("step_end", step=step, key=key, outcome=call.outcome or "ok")
        self.run["closed"][key] = step

    def _on_subagent_start(self, call: HookCall) -> None:
        self.log.emit("subagent", agent_id=call.agent_id, agent_type=call.agent_type, phase="start")

    def _on_subagent_stop(self, call: HookCall) -> None:
        for read in call.reads:
            self._record_read(read, None)
        self.log.emit("subagent", agent_id=call.agent_id, agent_type=call.agent_type, phase="stop")
        self.log.emit("stop", agent_id=call.agent_id, stop_hook_active=call.stop_hook_active)

    def _on_stop(self, call: HookCall) -> None:
        self._cross_check(call)
        unhooked = self._reconcile(call)
        self._record_unexplained(self._scan(None), None)
        for tool_use_id, key in self._own_open(call).items():  # a Pre with no Post is closed at Stop (the scan just ran)
            outcome = unhooked.get(tool_use_id)
            fields = {"detail": RECONCILED, "reconciled": "transcript"} if outcome else {}
            self._end_step(key, outcome or "unknown", None, [], **fields)
        for key in recovery.dangling(self.run):  # any agent's step whose hook was killed mid-record
            self._end_step(key, "unknown", None, [], detail=DANGLING)
        self.log.emit("stop", agent_id=call.agent_id, stop_hook_active=call.stop_hook_active)

    def _cross_check(self, call: HookCall) -> None:
        """Only hooks speak as hooks: each recorded call is checked against the platform's transcript
        of its agent (at a sub-agent's Stop its own calls, at the main Stop every agent's, a sub-agent
        whose Stop never came included); a call it does not hold (a forged Pre/Post from another
        process on the socket or the HTTP door) or an `ok` close of a call that failed there is a
        `record_problem` (a `record` finding at Stop), named once."""
        check = getattr(self.platform, "unheard", None)
        if check is None:
            return
        recorded: dict[str, dict[str, str]] = {}
        reconciled: set[str] = set()
        for record in self.log.records():
            key = record.get("key")
            if not isinstance(key, str) or "/" not in key or record.get("tool") == "oob":
                continue
            key = key.split("#again", 1)[0]  # the same call id heard twice: one call of the transcript's
            if record.get("type") == "step_start":
                recorded.setdefault(key.split("/", 1)[0], {}).setdefault(key.split("/", 1)[1], "unknown")
            elif record.get("type") == "step_end":
                recorded.setdefault(key.split("/", 1)[0], {})[key.split("/", 1)[1]] = str(record.get("outcome"))
                if record.get("reconciled"):
                    reconciled.add(key)
        agents = [call.agent_id] if call.agent_id else list(recorded)
        named = self.run.setdefault("unheard", [])
        for agent in agents:
            prefix = f"{agent or MAIN}/"
            calls = {k: v for k, v in recorded.get(agent or MAIN, {}).items() if prefix + k not in reconciled}
            if not calls:
                continue
            for tool_use_id, kind in check(call, None if agent in (None, MAIN) else agent, calls) or []:
                if f"{kind}:{prefix}{tool_use_id}" in named or f"{kind}:{tool_use_id}" in named:
                    continue
                named.append(f"{kind}:{prefix}{tool_use_id}")
                why = ("the agent's transcript holds no such tool call: it was sent to vacant by something other than "
                       "the platform's hook" if kind == "call-unheard" else
                       "it was recorded as ok but the agent's transcript says it failed: the close was forged")
                self.log.emit("record_problem", kind=kind, detail=f"step {prefix}{tool_use_id}: {why}")

    def _reconcile(self, call: HookCall) -> dict[str, str]:
        """Steps that reached no hook (an http hook to a daemon that was down), found in the
        platform's transcript: opened now as writers of unknown scope, so the Stop scan that
        follows can own their changes; closed by the caller with the transcript's outcome, as are
        open steps whose Post never came."""
        unhooked = self.platform.unhooked
        if unhooked is None:
            return {}
        prefix = f"{call.agent_id or MAIN}/"
        known = {key[len(prefix):] for key in self.run["closed"] if key.startswith(prefix)}
        found: dict[str, str] = {}
        for item, outcome in unhooked(call, known):
            found[item.key] = outcome
            if self._key(call, item.key) in self.run["open"]:
                continue  # its Pre was seen, its Post was not: closed with the transcript's outcome
            pseudo = HookCall(kind="tool_pre", session_id=call.session_id, workspace=call.workspace,
                              agent_id=call.agent_id, tool=item.tool, tool_input=item.tool_input, key=item.key, scope=[])
            key = self._key(call, item.key)
            self._start_step(pseudo, key, [])
            self.run["open"][key]["scope"] = None
        return found

    def _on_session_end(self, call: HookCall) -> None:
        for key in list(self.run["open"]):  # killed or never reported: closed by the final scan
            self.run["open"][key]["scope"] = None
            self._end_step(key, "unknown", None, [])
        self._record_unexplained(self._scan(None), None)
        self.log.emit("run_end", reason=call.reason or "other")


def install_walls(root: Path, state: Path) -> dict[str, object]:
    """install.json's `walls` (platform -> whether vacant's wall is up for it); {} when unreadable."""
    try:
        walls = (read_install(root, state) or {}).get("walls")
    except (OSError, ValueError):
        return {}
    return walls if isinstance(walls, dict) else {}


def _could_write(scope: list[str] | None, rel: str) -> bool:
    """Whether a step with this write scope could have made the change at `rel`: a scope of None
    (a shell, an unknown tool) anything; else a path in the scope, under it, or a directory above
    it (writing a file creates its missing directories)."""
    if scope is None:
        return True
    return any(rel == path or rel.startswith(path + "/") or path.startswith(rel + "/") for path in scope)


def _workspace_relative(root: Path, cwd: str) -> str:
    """`cwd` relative to the workspace (`.` for its root), or absolute when it lies outside."""
    real_root, real = os.path.realpath(root), os.path.realpath(os.path.join(root, cwd))
    if real == real_root:
        return "."
    if real.startswith(real_root + os.sep):
        return real[len(real_root) + 1:].replace(os.sep, "/")
    return real
