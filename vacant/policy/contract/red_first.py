"""Red-first: adding a check to `vacant.toml` only after running it (`vacant contract add`).

- An acceptance check (`[[check]]`) must be red now, for the right reason: one that already passes
  is refused (it cannot measure the work; the refusal offers `--keep`, unless it passes because it
  runs no test, which no kind of check can use), and one red because the check itself is broken
  (vacant/policy/contract/probe_reasons.py: no tests, unknown test id, a test file that does not load,
  a misspelt program) is refused unless `allow_broken`. A program that is not installed is a red the
  agent may fix by provisioning it: accepted, with the `env/NAME` warning (the probe records `env`).
- A guard (`[[guard]]`, `--keep`) must hold now, and run at least one test when it is a runner; one
  whose program is not installed does not hold, and is refused until the program is there.
- The probe's cap fits the kind: 30 s for an acceptance check (a one-liner), the guard's own
  `timeout` for a guard (a whole suite may take minutes). A probe slower than its cap is refused
  with the figure, never accepted half-run. Every outcome carries the probe's last lines.
- An interrupt (Ctrl-C, SIGTERM) during the probe kills the probe's process group and writes nothing.

The file is appended to (its comments kept), validated before it lands, written atomically.
"""

from __future__ import annotations

import shlex
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import (
    ValidationError,
)

from vacant.core import children
from vacant.core.atomic import atomic_write
from vacant.policy.contract import background
from vacant.policy.contract.checks import CommandResult, Site, missing_tool, run_command, site_for
from vacant.policy.contract.contract import (
    CONTRACT_FILE,
    DEFAULT_TIMEOUT_S,
    GREEN_FIRST,
    MAX_TIMEOUT_S,
    MULTILINE,
    PROBE_CAP_S,
    Check,
    CheckRefused,
    Contract,
    Probe,
    contract_path,
    describe_error,
    load_contract,
    parse_contract,
)
from vacant.policy.contract.probe_reasons import MISSING_CODE, Verdict, classify
from vacant.policy.contract.runners import refused_options
from vacant.policy.contract.wrappers import wrapper_note

TAIL_LINES = 6  # lines of the probe's output shown with every outcome
TAIL_WIDTH = 200


# -- the probe ------------------------------------------------------------------------------------


def last_lines(output: str, count: int = TAIL_LINES) -> list[str]:
    """The probe's last non-blank lines, each trimmed: what every probe outcome shows."""
    lines = [line.rstrip() for line in output.splitlines() if line.strip()]
    return [line if len(line) <= TAIL_WIDTH else line[: TAIL_WIDTH - 1] + "…" for line in lines[-count:]]


def _with_tail(message: str, tail: list[str]) -> str:
    if not tail:
        return f"{message} (the probe printed nothing)"
    return message + "\n  the probe's last lines:\n" + "\n".join(f"  | {line}" for line in tail)


def probe_cap_for(check: Check, guard: bool, probe_cap: float | None) -> float:
    """30 s for an acceptance check (or less, its timeout); a guard's own timeout; `probe_cap` wins."""
    if probe_cap is not None:
        return min(float(probe_cap), check.timeout)
    return check.timeout if guard else min(check.timeout, PROBE_CAP_S)


# -- red-first: adding a check --------------------------------------------------------------------


@dataclass
class Added:
    check: Check
    guard: bool
    env: str | None = None  # the missing tool, when the probe was red for that reason
    warnings: list[str] = field(default_factory=list)
    tail: list[str] = field(default_factory=list)  # the probe's last lines
    verdict: Verdict | None = None  # why it was red, when probe_reasons could say

    @property
    def kind(self) -> str:
        return "guard" if self.guard else "check"


def _toml_string(value: str) -> str:
    out = ['"']
    for char in value:
        code = ord(char)
        if char == '"':
            out.append('\\"')
        elif char == "\\":
            out.append("\\\\")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\u{code:04X}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def _toml_number(value: float) -> str:
    text = repr(float(value))
    return text if text not in ("inf", "-inf", "nan") else "0.0"


def render_check(check: Check, guard: bool) -> str:
    table = "guard" if guard else "check"
    lines = [f"[[{table}]]", f"name = {_toml_string(check.name)}", f"command = {_toml_string(check.command)}"]
    if check.timeout != DEFAULT_TIMEOUT_S:
        lines.append(f"timeout = {_toml_number(check.timeout)}")
    if check.network:
        lines.append("network = true")
    if check.probe is not None:
        probe = check.probe
        parts = [f"exit_code = {probe.exit_code}"] if probe.exit_code is not None else []
        parts += [f"seconds = {_toml_number(probe.seconds)}", f"at = {_toml_string(probe.at)}"]
        if probe.timed_out:
            parts.append("timed_out = true")
        if probe.env:
            parts.append(f"env = {_toml_string(probe.env)}")
        if probe.broken:
            parts.append(f"broken = {_toml_string(probe.broken)}")
        if probe.background:
            parts.append("background = true")
        lines.append("probe = { " + ", ".join(parts) + " }")
    return "\n".join(lines) + "\n"


def _validated_check(name: str, command: str, timeout: float | None, network: bool = False) -> Check:
    fields: dict[str, Any] = {"name": name, "command": command, "network": network}
    if timeout is not None:
        fields["timeout"] = float(timeout)
    try:
        return Check.model_validate(fields)
    except ValidationError as error:
        raise CheckRefused(describe_error(error.errors(include_url=False)[0], {})) from None


def add_check(
    root: Path,
    name: str,
    command: str,
    guard: bool = False,
    timeout: float | None = None,
    probe_cap: float | None = None,
    allow_broken: bool = False,
    precondition: bool = False,  # the old name of `guard`
    network: bool = False,
) -> Added:
    """Probe `command` on the workspace as it stands and, if it is the right colour for the right
    reason, append it (see the module docstring). The probe's evidence is stored with the check."""
    root = Path(root)
    guard = guard or precondition
    check = _new_check(root, name, command, timeout, network)
    cap = probe_cap_for(check, guard, probe_cap)
    # behind the wall (the command may run code the agent wrote); an interrupt kills its group (core/children)
    result = run_command(check.command, root, cap, root, site=site_for(root), network=check.network)
    return settle(root, check, guard, cap, result, allow_broken)


def _new_check(root: Path, name: str, command: str, timeout: float | None, network: bool) -> Check:
    """The check as given, validated, its name free in vacant.toml."""
    if "\n" in command.strip() or "\r" in command.strip():
        raise CheckRefused(f"the command is more than one line: {MULTILINE}")
    check = _validated_check(name, command, timeout, network)
    contract = load_contract(root) or Contract()
    if check.name in contract.names():
        raise CheckRefused(f"a check named {check.name!r} already exists in {CONTRACT_FILE}: pick another name or edit the file")
    return check


def settle(root: Path, check: Check, guard: bool, cap: float, result: CommandResult, allow_broken: bool,
           background: bool = False) -> Added:
    """Judge the probe's `result` (the right colour for the right reason) and append the check with
    its evidence; a refusal raises CheckRefused and writes nothing."""
    at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    tool = missing_tool(result.exit_code, result.output, root)
    verdict = classify(result.exit_code, result.output, root, result.timed_out)
    added = Added(check, guard, env=f"env/{tool}" if tool else None, tail=last_lines(result.output), verdict=verdict)
    if result.timed_out:
        raise CheckRefused(_with_tail(_too_slow(check, guard, cap, result, background), added.tail))
    (_judge_guard if guard else _judge_acceptance)(added, result, allow_broken, root)
    note = wrapper_note(check.command, root)
    if note:
        added.warnings.append(note)
    check.probe = Probe(
        exit_code=result.exit_code, seconds=round(result.seconds, 3), at=at, timed_out=False, env=tool,
        broken=verdict.reason if verdict is not None and verdict.broken else None, background=background,
    )
    _append(root, check, guard)
    return added


def start_guard(root: Path, name: str, command: str, timeout: float | None = None, probe_cap: float | None = None,
                allow_broken: bool = False, network: bool = False) -> background.ProbeRecord:
    """Start a guard's probe in the background (vacant.policy.contract.background): validated and
    its name claimed first; raises background.AlreadyProbing when one of that name runs."""
    root = Path(root)
    check = _new_check(root, name, command, timeout, network)
    record = background.ProbeRecord(name=check.name, command=check.command, timeout=timeout, probe_cap=probe_cap,
                                    network=check.network, allow_broken=allow_broken, started=time.time(),
                                    bound=background.background_cap())  # read here: the child's environment is scrubbed
    return background.start(root, record)


def probe_in_background(root: Path, record: background.ProbeRecord, progress_dir: Path) -> background.ProbeRecord:
    """The background probe itself (the detached process): the guard's command walled, under the
    background cap (or the person's timeout or probe cap), its pytest progress written to
    `progress_dir`; judged and added as in the foreground. Returns the record, ended."""
    root = Path(root)
    try:
        with children.interruptible():  # `contract stop` (SIGTERM) kills the probe's group with it
            check = _new_check(root, record.name, record.command, record.timeout, record.network)
            cap = record.probe_cap or (check.timeout if record.timeout is not None else record.bound)
            result = run_command(check.command, root, cap, root, site=site_for(root), network=check.network,
                                 extra_env=background.progress_env(progress_dir), writable=(progress_dir,))
            if refused_options(result.exit_code, result.output, background.PROGRESS_PLUGIN):
                result = run_command(check.command, root, cap, root, site=site_for(root), network=check.network)
            if record.timeout is None and result.seconds > check.timeout:
                check.timeout = min(background.widened_timeout(result.seconds), MAX_TIMEOUT_S)
            added = settle(root, check, True, cap, result, record.allow_broken, background=True)
    except CheckRefused as refused:
        record.state, record.message = background.REFUSED, str(refused)
        return record
    except children.Interrupted:
        record.state, record.message = background.STOPPED, f"the probe of {record.name!r} was stopped; nothing was added"
        return record
    probe = check.probe
    record.state, record.tail, record.warnings = background.ADDED, added.tail, added.warnings
    record.seconds, record.exit_code = probe.seconds if probe else None, probe.exit_code if probe else None
    record.message = (f"added guard {check.name!r} to {CONTRACT_FILE} (probe: exit {record.exit_code} in "
                      f"{record.seconds or 0:.2f} s, in the background; timeout {check.timeout:g} s)")
    return record


def _too_slow(check: Check, guard: bool, cap: float, result: CommandResult, in_background: bool = False) -> str:
    kind = "guard" if guard else "check"
    advice = ("give the guard a larger cap with --timeout SECONDS (the Stop runs it under the same timeout)"
              if guard and not in_background else
              f"a background probe is bounded at {cap:g} s (a guard's --timeout or --probe-cap bounds it too): run "
              "a part of the suite as the guard, or raise the bound with --probe-cap SECONDS"
              if guard else
              f"an acceptance check's probe is capped at {PROBE_CAP_S:g} s: run only what measures the work, "
              "pass --probe-cap SECONDS, or add a whole suite as a guard (--keep)")
    return (f"{kind} {check.name!r} was refused: its probe ran past its cap of {cap:g} s (stopped at "
            f"{result.seconds:.1f} s, its process group killed) and was not seen to finish: {advice}")


def _broken_refusal(added: Added, colour: str) -> str:
    verdict = added.verdict
    return (f"{added.kind} {added.check.name!r} is {colour} for the wrong reason ({verdict.sentence()}): the check "
            "itself is broken, so it cannot measure the work; fix the command, or add it anyway with --allow-broken")


def _judge_guard(added: Added, result: CommandResult, allow_broken: bool, root: Path) -> None:
    check, verdict = added.check, added.verdict
    if result.exit_code != 0 and added.env and not (verdict is not None and verdict.broken):
        tool = added.env.removeprefix("env/")
        raise CheckRefused(_with_tail(
            f"guard {check.name!r} does not hold now (exit {result.exit_code}: `{tool}` is not installed): a guard "
            f"must hold when it is added; provision it (install it on PATH, or put it in {_local_bin(root)}, which "
            "checks see first) and add the guard again", added.tail))
    if result.exit_code != 0:
        why = f": {verdict.sentence()}" if verdict else ""
        raise CheckRefused(_with_tail(
            f"guard {check.name!r} does not hold now (exit {result.exit_code}{why}): a guard is what holds before the "
            "work and must still hold at the end; what the work should make true is an acceptance check (add it "
            "without --keep)", added.tail))
    if verdict is not None and verdict.broken:
        if not allow_broken:
            raise CheckRefused(_with_tail(_broken_refusal(added, "green"), added.tail))
        added.warnings.append(f"added with --allow-broken: {verdict.sentence()}")


def _judge_acceptance(added: Added, result: CommandResult, allow_broken: bool, root: Path) -> None:
    check, verdict = added.check, added.verdict
    if result.exit_code == 0 and verdict is not None and verdict.broken:
        # green because it runs nothing (go test -run TestTypo): no use as a guard either, so no --keep offered
        raise CheckRefused(_with_tail(
            f"check {check.name!r} passes now, and for the wrong reason ({verdict.sentence()}): the check itself is "
            "broken, so it can neither measure the work nor hold as a guard; fix the command", added.tail))
    if result.exit_code == 0:
        keep = f"vacant contract add {check.name} --keep -- {shlex.quote(check.command)}"
        raise CheckRefused(_with_tail(
            f"check {check.name!r} passes now (exit 0 in {result.seconds:.2f} s): {GREEN_FIRST} (`{keep}`)",
            added.tail))
    if verdict is not None and verdict.broken:
        if not allow_broken:
            raise CheckRefused(_with_tail(_broken_refusal(added, "red"), added.tail))
        added.warnings.append(f"added with --allow-broken, red for the wrong reason: {verdict.sentence()}")
    elif verdict is not None and verdict.reason == MISSING_CODE:
        added.warnings.append(f"red because {verdict.detail}: right if the work creates it; if it is a misspelling "
                              "or a package to install, fix the check")
    if added.env:
        tool = added.env.removeprefix("env/")
        added.warnings.append(
            f"{added.env}: `{tool}` is not available to checks, so {check.name!r} is red for a reason editing code "
            f"cannot fix: until it is provisioned (installed on PATH, or put in {_local_bin(root)}, which checks see "
            f"first) the Stop reports it as {added.env}, blamed on no one"
        )


def _local_bin(root: Path) -> Path:
    return root / ".local" / "bin"


def _append(root: Path, check: Check, guard: bool) -> None:
    """Append the check's table to vacant.toml (keeping the file's comments), validated before it lands."""
    path = contract_path(root)
    try:
        before = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        before = ""
    current = parse_contract(before, str(path)) if before else Contract()
    if check.name in current.names():  # added meanwhile, while the probe ran
        raise CheckRefused(f"a check named {check.name!r} already exists in {CONTRACT_FILE}: pick another name or edit the file")
    separator = "" if not before else ("\n" if before.endswith("\n") else "\n\n")
    after = before + separator + render_check(check, guard)
    parse_contract(after, str(path))  # never write a file that would not load
    atomic_write(path, after)


def probe_vacuous(root: Path, cap: float = PROBE_CAP_S, site: Site | None = None) -> list[str]:
    """Acceptance checks that pass right now, before any work: vacuous (the workspace drifted).

    Called when a run starts; a warning to report, never a refusal. Probes run in parallel, each
    capped at `cap` seconds, behind the wall at `site` (the baseline shown at the workspace's path).
    """
    contract = load_contract(root)
    if contract is None or not contract.check:
        return []

    def green(check: Check) -> bool:
        result = run_command(check.command, Path(root), min(check.timeout, cap), Path(root), site=site,
                             network=check.network)
        return result.exit_code == 0 and not result.timed_out

    with ThreadPoolExecutor(max_workers=min(8, len(contract.check))) as pool:
        verdicts = list(pool.map(green, contract.check))
    return [check.name for check, verdict in zip(contract.check, verdicts) if verdict]


def run_detached(root: Path, name: str) -> None:
    """The detached process (background.ENTRY): probe, judge and add, record how it ended."""
    record = background.claimed(root, name)
    if record is None:
        return
    directory = Path(tempfile.mkdtemp(prefix="vacant-progress-"))
    record.progress_file = str(directory / "progress.json")
    background.save(root, record)
    try:
        ended = probe_in_background(root, record, directory)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    current = background.load(root, name)
    if current is not None and current.state == background.STOPPED:
        return  # the person stopped it meanwhile: their word stands
    ended.progress_file = None
    ended.finished = time.time()
    background.save(root, ended)
