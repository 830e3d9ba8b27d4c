"""The rounds of `vacant do`: run the agent, find the run its hooks wrote, run the Stop pipeline,
continue the session with the feedback while blocking findings remain and rounds are left."""

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from vacant.core import children
from vacant.core.children import Interrupted
from vacant.core.exitcodes import Exit
from vacant.core.locations import list_runs, mark_installed, read_install, run_dir, state_dir
from vacant.core.progress import progress
from vacant.core.seal import broken, reseal
from vacant.core.wall import ensure_hidden_dirs, missing_packages, wall_for
from vacant.do.bwrap import wrap
from vacant.do.watch import CommandDriver
from vacant.platforms.all_platforms import ALIASES, PROGRAMS, load, names
from vacant.platforms.driver import DoError, Driver, run_session
from vacant.core.trustenv import mark_do, unmark_do
from vacant.record.recorder import DO_ENV
from vacant.core.filelock import file_lock
from vacant.store.steplog import StepLog

PLATFORMS = names()
DEFAULT_BURST_GAP_S = 0.5
KILL_GRACE_S = 10.0
HOOK_SETTLE_TIMEOUT_S = 60.0


def do_root(cwd: Path) -> Path:
    """The workspace `vacant do` records: the nearest installed ancestor inside the git top level
    (one above it is an enclosing workspace), else the git top level, else `cwd`."""
    from vacant.core.locations import find_root, new_root

    top, found = new_root(cwd), find_root(cwd)
    if (top / ".git").exists() and not (found == top or top in found.parents):
        return top
    return found


def pick_platform(argv: list[str], platform: str) -> str:
    if platform == "auto":
        return PROGRAMS.get(os.path.basename(argv[0]), "command")
    platform = ALIASES.get(platform, platform)
    if platform not in PLATFORMS:
        raise DoError(f"--platform must be one of {', '.join(PLATFORMS)} or auto")
    return platform


def _sizes(root: Path) -> dict[Path, int]:
    return {run: (run / "events.jsonl").stat().st_size for run in list_runs(root)}


def find_run(root: Path, before: dict[Path, int], session: str | None, cell_platform: str) -> Path | None:
    """The run this round wrote to (its log grew): the known session's, else the only one, else
    the newest of this platform's. None when no hook recorded anything."""
    after = _sizes(root)
    grown = [run for run, size in after.items() if before.get(run) != size]
    if session and run_dir(root, session) in grown:
        return run_dir(root, session)
    if len(grown) > 1:
        same = [run for run in grown if _run_platform(run) == cell_platform]
        grown = same or grown
    return grown[-1] if grown else None


def _run_platform(run: Path) -> str | None:
    try:
        first = json.loads((run / "events.jsonl").read_bytes().split(b"\n", 1)[0])
        return first.get("platform")
    except (OSError, ValueError):
        return None


@dataclass
class Result:
    code: int
    run: Path | None
    rounds: int
    report: dict[str, Any] | None


class Runner:
    def __init__(self, argv: list[str], root: Path, platform: str, rounds: int | None,
                 gap: float = DEFAULT_BURST_GAP_S, out: Callable[[str], None] | None = None,
                 cwd: Path | None = None, feedback_text: str | None = None, wall: bool = True) -> None:
        if not argv:
            raise DoError("nothing to run: give the agent's command after --, e.g. vacant do -- claude -p \"task\"")
        self.argv = argv
        self.root = Path(root).resolve()
        # agents run at the workspace root (Claude's project dir is its launch directory); a plain
        # command runs where it was given, so that its relative paths keep their meaning
        self.platform = pick_platform(argv, platform)
        self.cwd = Path(cwd or os.getcwd()).resolve() if self.platform == "command" else self.root
        self.rounds = rounds
        self.gap = gap
        self.out = out or (lambda line: print(line, file=sys.stderr, flush=True))
        self.child: subprocess.Popen | None = None
        self.interrupted: int | None = None
        self.terminal = sys.stdin.isatty()
        self.terminal_sigint = False
        if feedback_text is not None and not feedback_text.strip():
            raise DoError("--feedback-text is empty: give the sentence the agent should get, or leave it out")
        # one fixed sentence sent instead of vacant's located feedback (`--feedback-text`; the
        # experiment's generic-feedback arm); the Stop pipeline, its report and its decision are unchanged
        self.feedback_text = feedback_text
        self.wall = wall  # False: `--no-wall`, the record is unwalled (the report says so)

    # signals: forwarded to the agent; the loop ends after it exits, and cleanup always runs
    def _on_signal(self, signum: int, frame) -> None:
        child = self.child if self.child is not None and self.child.poll() is None else None
        if child is None:  # replaying or grading: its checks' groups go, and the Stop is left unmade
            self.interrupted = signum
            children.on_signal(signum, frame)
            return
        if signum == signal.SIGINT and self.terminal:
            # Ctrl-C at a terminal reached the agent too (same foreground group): it decides (a
            # TUI stops its turn and goes on); only its dying of it stops `vacant do`
            self.terminal_sigint = True
            return
        self.interrupted = signum
        try:
            child.send_signal(signum)
        except OSError:
            pass

    def _run_child(self, argv: list[str], env: dict[str, str]) -> int:
        try:
            self.child = subprocess.Popen(argv, cwd=str(self.cwd), env={**env, "PWD": str(self.cwd)})
        except OSError as error:
            raise DoError(f"cannot run {argv[0]}: {error.strerror or error}") from None
        deadline = None
        try:
            while True:
                try:
                    return self.child.wait(timeout=0.2)
                except subprocess.TimeoutExpired:
                    if self.interrupted:
                        deadline = deadline or time.monotonic() + KILL_GRACE_S
                        if time.monotonic() > deadline:
                            self.child.kill()  # it ignored the forwarded signal
        finally:
            self.child = None

    def run(self) -> Result:
        from vacant.policy.contract.contract import load_contract

        mark_installed(self.root, via="vacant do")  # the person ran `vacant do` here: record it
        contract = load_contract(self.root)
        budget = self.rounds if self.rounds is not None else (contract.stop.rounds if contract else 3)
        tmp = Path(tempfile.mkdtemp(prefix="vacant-do-"))
        had_do_env = os.environ.get(DO_ENV)
        # the agent's hooks leave Stop to us: they honour VACANT_DO only as this live process's
        # marker in the state directory, with this process among their ancestors (core/trustenv.py)
        os.environ[DO_ENV] = mark_do(state_dir(self.root))
        env = dict(os.environ)
        platform = load(self.platform)
        if platform.driver is None:  # no hooks: a watcher records what the command changes
            driver: Driver = CommandDriver(self.argv, self.root, env, tmp, self.gap)
        else:
            driver = platform.driver(self.argv, self.root, env, tmp)
        cell = platform.cell_platform
        walled = self._set_wall(driver)
        handlers = {sig: signal.signal(sig, self._on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
        run: Path | None = None
        round_no = 0
        sealed = False
        try:
            sealed = self._sealed()
            driver.prepare()
            if sealed:
                reseal(self.root)  # the settings its driver wrote for this run are held too
            session, feedback = driver.session, None
            while True:
                round_no += 1
                argv = driver.first() if feedback is None else driver.resume(session, feedback)
                if walled and self.platform == "command":
                    argv = wrap(argv, self.root, self.cwd, tmp / "tmp")
                before = _sizes(self.root)
                driver.before_start()
                self.out(f"vacant do: round {round_no}: {shlex.join(_short(argv))}")
                code = self._run_child(argv, env)
                if self.terminal_sigint and code in (-signal.SIGINT, 128 + signal.SIGINT):
                    self.interrupted = signal.SIGINT
                self.terminal_sigint = False
                found = find_run(self.root, before, session, cell)
                grew = found is not None
                run = found or run
                driver.finish_round(run)
                if self.interrupted:
                    raise Interrupted(self.interrupted)
                if run is None:
                    raise DoError(f"{driver.program} exited ({code}) and none of vacant's hooks fired: nothing was "
                                  f"recorded (`vacant doctor --platform {self.platform}` says why)")
                session = session or run_session(run)
                settle_hooks(self.root)
                with progress(f"round {round_no}: replaying and grading…"):
                    outcome = _stop(self.root, run, budget if driver.can_continue else 0)
                report = outcome.report
                decision = self._decision(outcome, driver, code, grew)
                StepLog(run).emit("round", round=round_no, command=self.argv, exit_code=code, decision=decision,
                                  session=session, resumed=feedback is not None, walled=walled,
                                  findings=[f["id"] for f in outcome.blocking],
                                  rounds=budget if driver.can_continue else 0)
                self._say(round_no, decision, outcome, code)
                if decision != "continue":
                    code_out = _exit_code(report)
                    if decision == "agent_failed" and code_out == int(Exit.OK):
                        code_out = int(Exit.FAILED)
                    return Result(code_out, run, round_no, report)
                feedback = outcome.feedback if self.feedback_text is None else self.feedback_text
        except Interrupted as stop:
            if run is not None:
                StepLog(run).emit("round", round=round_no, command=self.argv, exit_code=None, decision="interrupted",
                                  signal=stop.signum)
            self.out(f"vacant do: stopped by {signal.Signals(stop.signum).name}; vacant's hooks are gone, "
                     "nothing was verified")
            return Result(int(Exit.INTERRUPTED), run, round_no, None)
        finally:
            for sig, handler in handlers.items():
                signal.signal(sig, handler)
            unmark_do(state_dir(self.root))
            children.reset()
            if had_do_env is None:
                os.environ.pop(DO_ENV, None)
            driver.close()
            if sealed:
                reseal(self.root)  # … and no longer, once it removed them
            shutil.rmtree(tmp, ignore_errors=True)

    def _sealed(self) -> bool:
        """Whether the workspace holds a seal (vacant init's); a seal the agent broke since stops the
        run before anything starts: the person accepts the change with `vacant init` first."""
        record = read_install(self.root) or {}
        problem = broken(self.root, record.get("seal"))
        if problem:
            raise DoError(f"the wall around this workspace was changed: {problem}. If you did this, run "
                          "`vacant init` again to accept it; otherwise look at what the last run did (vacant report)")
        return "seal" in record

    def _set_wall(self, driver: Driver) -> bool:
        """Put the wall up for this run: bubblewrap around a plain command, the platform's own
        sandbox for Claude and Codex (their hooks run outside it and reach the daemon). OpenCode's
        plugin runs inside OpenCode's process, so nothing can wall it off from the record: unwalled."""
        if not self.wall:
            self.out("vacant do: --no-wall: the agent's commands can reach vacant's key, state and settings; "
                     "the record is unwalled")
            return False
        platform = load(self.platform)
        if platform.wall_refused:
            self.out(f"vacant do: {platform.wall_refused}; the record is unwalled")
            return False
        missing = missing_packages(os.environ.get("PATH"))
        needed = [p for p in missing if p == "bubblewrap" or platform.sandbox_needs_every_package]
        if needed:
            raise DoError(f"the wall needs these Debian packages: {' '.join(needed)} (`sudo apt-get install "
                          f"{' '.join(needed)}`); or run `vacant do --no-wall -- …` (the record is then unwalled)")
        ensure_hidden_dirs(self.root)
        driver.wall = wall_for(self.root)
        return True

    def _decision(self, outcome, driver: Driver, code: int, grew: bool) -> str:
        if code != 0 and not grew:
            return "agent_failed"  # it recorded nothing this round: continuing would only repeat that
        if outcome.feedback and driver.can_continue:
            return "continue"
        if not outcome.blocking and _waiting(outcome.report):
            return "waiting_on_person"  # a pause: the person answers (`vacant asks`), not the agent
        if not outcome.report.get("findings") and not outcome.report.get("contract_error"):
            return "nothing_to_verify" if outcome.report.get("nothing_to_verify") else "green"
        if outcome.blocking and driver.can_continue:
            return "budget_spent"
        return "cannot_continue"

    def _say(self, round_no: int, decision: str, outcome, code: int) -> None:
        report = outcome.report
        findings = report.get("findings", [])
        tail = f" (the agent exited {code})" if code else ""
        if decision == "continue":
            self.out(f"vacant do: round {round_no}: {len(outcome.blocking)} blocking finding(s); continuing the "
                     f"session with the feedback (round {report.get('round')} of {report.get('rounds')}){tail}")
        elif decision in ("green", "nothing_to_verify"):
            what = "green" if decision == "green" else "nothing to verify (no checks, no flags): not a pass"
            self.out(f"vacant do: round {round_no}: {what}{tail}")
        elif decision == "waiting_on_person":
            ids = ", ".join(item["ask"] for item in _waiting(report) if item.get("ask"))
            self.out(f"vacant do: round {round_no}: {len(_waiting(report))} question(s) wait on you ({ids}): "
                     f"`vacant asks` shows them, `vacant approve` or `vacant decline` answers; then run again{tail}")
        elif decision == "agent_failed":
            self.out(f"vacant do: round {round_no}: the agent exited {code} without a recorded step; stopping here")
        else:
            why = "the round budget is spent" if decision == "budget_spent" else "this agent cannot be continued"
            self.out(f"vacant do: round {round_no}: {len(findings)} finding(s) left; {why}{tail}")


def _short(argv: list[str], width: int = 60) -> list[str]:
    return [a if len(a) <= width else a[: width - 1] + "…" for a in argv]


def settle_hooks(root: Path) -> None:
    """Wait for a hook still holding the workspace lock (a plugin's last call may outlive the agent)."""
    with file_lock(state_dir(root) / "lock", HOOK_SETTLE_TIMEOUT_S):
        pass


def _stop(root: Path, run: Path, rounds: int):
    from vacant.attribute.stop import stop

    return stop(root, run, None, rounds=rounds)


def _waiting(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [item for item in report.get("questions") or [] if item.get("fate") == "awaiting-human"]


def _exit_code(report: dict[str, Any]) -> int:
    findings = report.get("findings") or []
    if report.get("contract_error") or any(item.get("level") != "changed_test" for item in findings):
        return int(Exit.FAILED)
    if _waiting(report):
        return int(Exit.WAITING_ON_PERSON)
    if report.get("findings"):
        return int(Exit.FAILED)
    if report.get("nothing_to_verify"):
        return int(Exit.NOTHING_TO_VERIFY)
    return int(Exit.OK)
