"""Running the cells of a preregistered plan: each (task, arm, repeat) in fresh copies, through
`vacant do`, one at a time, resumable.

Layout under OUT:

    plan.json                       the preregistration (vacant/experiment/plan.py)
    journal.jsonl                   one `start` line before a cell runs, one `done` line (its result) after
    cells/TASK/ARM/REPEAT/attempt-K/ws      the agent's workspace (a git repository with the seed committed)
    cells/TASK/ARM/REPEAT/attempt-K/do.out  `vacant do`'s stdout (the agent's), do.err its stderr
    aborted/…                       a cell that started and never finished, moved aside before it runs again

A cell with a `done` line is never run again. A cell with only a `start` line (the experiment was
killed during it) is moved to aborted/ and run from the start; the journal keeps both lines, so
the summary can say how many cells were restarted. One experiment at a time per OUT (a lock file).
The journal is appended a whole line at a time; a torn last line (a kill mid-write) is skipped.

Measured per cell: accepted (the task's contract passes on a copy of the final workspace), hidden
(the hidden checks pass on another copy, with hidden/ beside it), agent runs (`vacant do`'s
rounds, summed over attempts), wall seconds, and the tokens the agent itself printed (a top-level
`usage` object with input_tokens/output_tokens in any JSON line of its stdout; None when it printed
none). Signals: SIGINT/SIGTERM stop the running cell (`vacant do` forwards them to the agent)
and the experiment, with no `done` line for that cell.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from vacant.core import children
from vacant.core.locations import ensure_state_dir, list_runs
from vacant.experiment.arms import ARMS, PROMPT_SUFFIX
from vacant.experiment.files import fresh_copy
from vacant.experiment.plan import cells
from vacant.experiment.tasks import HIDDEN_COPY, Task
from vacant.platforms.all_platforms import load, names
from vacant.policy.contract.acceptance import run_gates

JOURNAL = "journal.jsonl"
AGENTS = tuple(name for name in names() if load(name).headless("", "", None, []) is not None)
ROUND_LINE = re.compile(r"^vacant do: round (\d+):", re.M)
TERM_GRACE_S = 30.0
LINGER_S = TERM_GRACE_S + 30.0  # a stopped experiment's cell: its `vacant do` has TERM_GRACE_S to stop the agent
PR_SET_PDEATHSIG = 1  # prctl(2)


class ExperimentError(RuntimeError):
    """The experiment cannot run as asked (one sentence saying what to do)."""


class Stopped(Exception):
    """A signal stopped the experiment during a cell."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@dataclass
class Settings:
    out: Path
    agent: str
    agent_bin: str | None
    model: str | None
    agent_args: list[str]
    timeout_s: float
    env: dict[str, str] | None = None  # the agent's environment (default: this process's)


def agent_argv(settings: Settings, prompt: str) -> list[str]:
    """The agent's command line for a task: non-interactive, allowed to edit and run commands."""
    if settings.agent not in AGENTS:
        raise ExperimentError(f"--agent must be one of {', '.join(AGENTS)}")
    return load(settings.agent).headless(settings.agent_bin or settings.agent, prompt, settings.model,
                                         list(settings.agent_args))


# -- the journal ---------------------------------------------------------------------------------


def cell_id(task: str, arm: str, repeat: int) -> str:
    return f"{task}/{arm}/{repeat}"


def read_journal(out: Path) -> list[dict[str, Any]]:
    path = Path(out) / JOURNAL
    if not path.exists():
        return []
    lines = []
    for raw in path.read_bytes().splitlines():
        try:
            lines.append(json.loads(raw))
        except ValueError:
            continue  # a torn line from a kill mid-write: that cell has no `done`, so it runs again
    return lines


def _append(out: Path, record: dict[str, Any]) -> None:
    with open(Path(out) / JOURNAL, "ab") as handle:
        handle.write((json.dumps(record, sort_keys=True) + "\n").encode())
        handle.flush()
        os.fsync(handle.fileno())


def done_cells(journal: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["cell"]: r for r in journal if r.get("event") == "done"}


class OutLock:
    """One experiment at a time in one OUT directory.

    The lock file holds the experiment's pid, and each cell's `vacant do` inherits the lock (and
    gets SIGTERM when the experiment dies, `_die_with_parent`): a killed experiment's cell that is
    still stopping (its hooks being taken out of the workspace) keeps OUT locked, so a resumed
    experiment never prepares a cell's directory under it. A held lock whose recorded experiment is
    gone is waited for, up to `LINGER_S`; one whose experiment lives is refused at once."""

    def __init__(self, out: Path) -> None:
        self.path = Path(out) / "lock"

    def __enter__(self) -> "OutLock":
        self.handle = open(self.path, "a+")
        try:
            if not _try_lock(self.handle):
                holder = _recorded_pid(self.handle)
                if holder is not None and _alive(holder):
                    raise ExperimentError(f"another vacant experiment is running in {self.path.parent} (pid {holder})")
                if not _wait_lock(self.handle, LINGER_S):
                    raise ExperimentError(f"the cell of a stopped experiment in {self.path.parent} is still running "
                                          f"after {LINGER_S:.0f} s; stop its `vacant do` and try again")
            self.handle.truncate(0)
            self.handle.write(f"{os.getpid()}\n")
            self.handle.flush()
        except BaseException:
            self.handle.close()
            raise
        return self

    def fileno(self) -> int:
        return self.handle.fileno()

    def __exit__(self, *exc: object) -> None:
        self.handle.close()


def _try_lock(handle: Any) -> bool:
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError:
        return False


def _wait_lock(handle: Any, within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if _try_lock(handle):
            return True
        time.sleep(0.1)
    return _try_lock(handle)


def _recorded_pid(handle: Any) -> int | None:
    handle.seek(0)
    text = handle.read(32).strip()
    return int(text) if text.isdigit() else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # someone else's process: alive
    return True


def _die_with_parent() -> None:
    """In a cell's child before exec: SIGTERM when the experiment dies, however it died (a SIGKILL
    included), so `vacant do` stops its agent and takes its hooks out instead of running on."""
    import ctypes

    parent = os.getppid()
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # the experiment died before the request took effect
        os.kill(os.getpid(), signal.SIGTERM)


# -- one cell ------------------------------------------------------------------------------------


def prepare_workspace(task: Task, ws: Path) -> None:
    """A fresh copy of the seed plus the contract, committed in its own git repository (so
    `vacant do` records exactly this directory, and an agent can diff its own work)."""
    fresh_copy(task.seed, ws)
    shutil.copy2(task.path / "vacant.toml", ws / "vacant.toml")
    git = ["git", "-c", "user.name=vacant experiment", "-c", "user.email=experiment@vacant.invalid",
           "-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null"]
    try:
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "--no-verify", "-m", "seed"]):
            if children.run([*git, *args], cwd=ws, timeout=60).returncode:
                raise subprocess.CalledProcessError(1, args[0])
    except (OSError, subprocess.SubprocessError) as error:
        raise ExperimentError(f"cannot make the git repository of {ws} ({error}); is git installed?") from None
    ensure_state_dir(ws)


def judge(task: Task, ws: Path) -> tuple[bool, bool]:
    """(accepted, hidden pass) on two copies of the final workspace; the workspace is left as is."""
    with tempfile.TemporaryDirectory(prefix="vacant-judge-") as scratch:
        visible = fresh_copy(ws, Path(scratch) / "visible")
        accepted = run_gates(task.contract, visible).passed
        held = fresh_copy(ws, Path(scratch) / "hidden")
        shutil.rmtree(held / HIDDEN_COPY, ignore_errors=True)  # the agent's own file of that name is not ours
        shutil.copytree(task.hidden_dir, held / HIDDEN_COPY)
        hidden = run_gates(task.hidden, held).passed
    return accepted, hidden


def tokens(stdout: str) -> tuple[int | None, int | None]:
    """Summed input/output tokens of every top-level `usage` the agent printed (None: none printed)."""
    found, spent_in, spent_out = False, 0, 0
    for line in stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        usage = record.get("usage") if isinstance(record, dict) else None
        if isinstance(usage, dict) and isinstance(usage.get("input_tokens"), int):
            found = True
            spent_in += usage["input_tokens"] + int(usage.get("cache_read_input_tokens") or 0) \
                + int(usage.get("cache_creation_input_tokens") or 0)
            spent_out += int(usage.get("output_tokens") or 0)
    return (spent_in, spent_out) if found else (None, None)


class CellRunner:
    """Runs attempts through `vacant do` in a child process; a signal stops the child and the cell."""

    def __init__(self, settings: Settings, hold: OutLock | None = None) -> None:
        self.settings = settings
        self.hold = hold  # the experiment's lock, held by each cell's `vacant do` too
        self.child: subprocess.Popen | None = None
        self.stopped: int | None = None

    def _on_signal(self, signum: int, frame: object) -> None:
        self.stopped = signum
        if self.child is not None and children.running(self.child):
            # to its whole group, as a terminal would: `vacant do`, the agent and whatever the agent started
            children.kill_group(self.child.pid, signal.SIGTERM)
            return
        try:
            children.on_signal(signum, frame)  # judging: the checks' groups go with it
        except children.Interrupted:
            raise Stopped(signum) from None

    def attempt(self, argv: list[str], ws: Path, logs: Path) -> tuple[int | None, bool]:
        """Run one `vacant do`; (its exit code or None, whether the cell timeout ended it)."""
        with open(logs / "do.out", "wb") as out, open(logs / "do.err", "wb") as err:
            # its own group: a terminal's Ctrl-C comes to us, and `vacant do` gets one SIGTERM from us
            held = () if self.hold is None else (self.hold.fileno(),)
            self.child = children.spawn(argv, cwd=ws, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                        env=self.settings.env, pass_fds=held, preexec_fn=_die_with_parent)
            # each wait ends with the cell's group killed: what the agent left running there (its
            # sandbox's helpers, a server it started) never outlives the cell
            try:
                return children.wait_group(self.child, self.settings.timeout_s), False
            except subprocess.TimeoutExpired:
                self.child.terminate()
                try:
                    children.wait_group(self.child, TERM_GRACE_S)
                except subprocess.TimeoutExpired:
                    self.child.kill()
                    children.wait_group(self.child)
                return self.child.returncode, True
            finally:
                children.release(self.child)
                self.child = None
                if self.stopped is not None:
                    raise Stopped(self.stopped)

    def run(self, task: Task, arm_name: str, repeat: int, rounds: int, base: Path) -> dict[str, Any]:
        arm = ARMS[arm_name]
        prompt = task.prompt + PROMPT_SUFFIX
        started = time.monotonic()
        codes, runs, runs_ids, spent_in, spent_out = [], 0, [], None, None
        accepted = hidden = timed_out = False
        ws = base
        for k in range(1, arm.attempts(rounds) + 1):
            where = base / f"attempt-{k}"
            where.mkdir(parents=True)
            ws = where / "ws"
            prepare_workspace(task, ws)
            argv = [sys.executable, "-m", "vacant", "do", *arm.do_args(rounds), "--",
                    *agent_argv(self.settings, prompt)]
            code, timed_out = self.attempt(argv, ws, where)
            codes.append(code)
            err = (where / "do.err").read_text(errors="replace")
            runs += max([int(n) for n in ROUND_LINE.findall(err)] or [0])
            used_in, used_out = tokens((where / "do.out").read_text(errors="replace"))
            if used_in is not None:
                spent_in, spent_out = (spent_in or 0) + used_in, (spent_out or 0) + (used_out or 0)
            runs_ids += sorted(p.name for p in list_runs(ws))
            accepted, hidden = judge(task, ws)
            if accepted or timed_out:
                break
        return {
            "task": task.name, "family": task.family, "arm": arm_name, "repeat": repeat,
            "accepted": accepted, "hidden": hidden, "success": accepted and hidden,
            "attempts": len(codes), "agent_runs": runs, "exit_codes": codes, "timed_out": timed_out,
            "seconds": round(time.monotonic() - started, 3), "input_tokens": spent_in, "output_tokens": spent_out,
            "workspace": str(ws.relative_to(self.settings.out)), "runs": runs_ids,
        }

    def signals(self) -> "_Handlers":
        return _Handlers(self._on_signal)


class _Handlers:
    def __init__(self, handler: Callable[[int, object], None]) -> None:
        self.handler = handler

    def __enter__(self) -> None:
        self.saved = {sig: signal.signal(sig, self.handler) for sig in (signal.SIGINT, signal.SIGTERM)}

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self.saved.items():
            signal.signal(sig, handler)
        children.reset()


# -- the whole plan ------------------------------------------------------------------------------


def _move_aside(out: Path, base: Path) -> None:
    """A cell's directory from a run that never finished: kept under aborted/, never deleted."""
    if not base.exists():
        return
    target = out / "aborted" / base.relative_to(out / "cells")
    n = 1
    while (candidate := target.with_name(f"{target.name}.{n}")).exists():
        n += 1
    candidate.parent.mkdir(parents=True, exist_ok=True)
    os.replace(base, candidate)


def pending(plan: dict[str, Any], journal: list[dict[str, Any]]) -> Iterator[tuple[str, str, int]]:
    done = done_cells(journal)
    return (c for c in cells(plan) if cell_id(*c) not in done)


def run_plan(tasks: list[Task], plan: dict[str, Any], digest: str, settings: Settings,
             say: Callable[[str], None], hold: OutLock | None = None) -> list[dict[str, Any]]:
    """Run every cell the journal does not call done; the done records of the whole plan."""
    out = settings.out
    by_name = {t.name: t for t in tasks}
    runner = CellRunner(settings, hold)
    todo = list(pending(plan, read_journal(out)))
    total = len(cells(plan))
    with runner.signals():
        for n, (task, arm, repeat) in enumerate(todo, start=total - len(todo) + 1):
            cid = cell_id(task, arm, repeat)
            base = out / "cells" / task / arm / str(repeat)
            _move_aside(out, base)
            _append(out, {"event": "start", "cell": cid, "plan": digest, "at": time.time()})
            say(f"vacant experiment: cell {n}/{total}: {cid}")
            result = runner.run(by_name[task], arm, repeat, plan["rounds"], base)
            _append(out, {"event": "done", "cell": cid, "plan": digest, "at": time.time(), **result})
            say(f"vacant experiment: cell {n}/{total}: {cid}: "
                f"{'success' if result['success'] else 'failure'} (accepted {result['accepted']}, "
                f"hidden {result['hidden']}, {result['agent_runs']} agent run(s), {result['seconds']:.0f} s)")
    return list(done_cells(read_journal(out)).values())
