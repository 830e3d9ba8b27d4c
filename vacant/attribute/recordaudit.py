"""What is wrong with vacant's own record of a run: one list, used by the Stop report, `vacant
report` and `vacant verify`.

Problems, each {kind, detail, path}:
  chain-*          the step log's hash chain is broken (edited, deleted, inserted, reordered,
                   truncated) or has torn lines (vacant.store.steplog.verify)
  flag-tampered    a flag the person filed was removed or altered (its signed ledger copy stands)
  flag-unsigned    a flag file that does not verify and that the ledger does not know
  ledger-*         a signed ledger (flags, spent approvals) was edited, cut or deleted
  hooks-missing    the installed hooks vanished from their settings file during the run
  dangling-step    a step whose hook was killed mid-record, closed at Stop
  call-unheard     a recorded call the agent's transcript does not hold (forged hook call)
  close-forged     a step closed `ok` whose tool_result in the transcript says it failed
  report-edited    a saved Stop report no longer matches the sha256 its `report_saved` event chained
  state-edited     the run's small state (`run.json`: next step number, open and closed steps) no
                   longer agrees with the step log it caches (step numbers could be handed out
                   again, a step never closed)
  object-edited    a stored object's bytes no longer hash to its key (content-addressed)
  record-lost      a hook call found the record changed behind vacant's back since vacant last wrote it
                   (vacant/core/tally.py: a ledger reset or cut, a run deleted, run.json edited, the
                   tally itself gone): said at that call, and every ACT call held until `vacant init`
  unwalled         the agent's commands ran without vacant's wall (`--no-wall`, or a platform with
                   no sandbox vacant configures): the record holds only against an agent that did
                   not try to alter it (docs/TRUST.md)

At Stop each problem is a `record` finding (vacant.core.levels.RECORD): reported to the person,
never blocking the agent (it cannot sign anything), and never a silent pass; the run is not green.
Torn lines and dangling steps (what a killed hook leaves; nothing was lost or altered) are
notes: listed in the report, not findings; so is an unwalled record (the person chose it).
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from vacant.core import events
from vacant.core.findings import Finding, finding_id
from vacant.policy.contract import flags
from vacant.policy.gate.asks.book import AskBook
from vacant.record.losswatch import LOST
from vacant.record.recorder import DANGLING
from vacant.store.steplog import LOG_NAME, StepLog, verify

Problem = dict[str, Any]
NOTES = ("chain-torn", "dangling-step", "unwalled")
FORGED = ("call-unheard", "close-forged")  # the recorder's cross-check against the transcript at Stop


def chain_problems(run_dir: Path) -> list[Problem]:
    log = StepLog(run_dir)
    if not log.path.exists():
        return [{"kind": "chain-missing", "detail": f"the step log {log.path} is missing", "path": None}]
    return [{"kind": f"chain-{p.kind}", "detail": f"step log line {p.line}: {p.kind}: {p.detail}", "path": None}
            for p in verify(log)]


def ledger_problems(root: Path) -> list[Problem]:
    _flags, found = flags.audit(root)
    out = [{"kind": p["kind"], "detail": p["detail"], "path": p.get("path")} for p in found]
    _spent, spent_problems = AskBook(root).spent_ids()
    out += [{"kind": f"ledger-{p.kind}", "detail": f"the spent-approval ledger: {p.detail}", "path": None}
            for p in spent_problems]
    return out


def run_problems(run_dir: Path) -> list[Problem]:
    """What the run's own records say went missing: hooks removed, steps closed as dangling."""
    path = run_dir / LOG_NAME
    if not path.exists():
        return []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torn lines are chain problems, reported once above
        records = events.load(path)
    out = []
    platform = records[0].get("platform") if records else None
    rounds = [r.get("walled") for r in records if r.get("type") == "round" and "walled" in r]
    if False in rounds or (not rounds and _installed_unwalled(run_dir, platform)):
        out.append({"kind": "unwalled", "path": None,
                    "detail": "the agent's commands ran without vacant's wall (--no-wall, or no sandbox for "
                              f"{platform}): an agent that tried could have altered this record unseen"})
    for record in records:
        if record.get("type") == "hooks_missing":
            out.append({"kind": "hooks-missing", "path": record.get("path"),
                        "detail": f"the {record.get('platform')} hooks vanished from {record.get('path')} during the "
                                  "run: what happened after that may be unrecorded"})
        elif record.get("type") == "record_problem" and record.get("kind") in (*FORGED, LOST) \
                and not any(p["detail"] == record.get("detail") for p in out):
            out.append({"kind": record["kind"], "path": None, "detail": str(record.get("detail"))})
        elif record.get("type") == "step_end" and record.get("detail") == DANGLING:
            out.append({"kind": "dangling-step", "path": None,
                        "detail": f"step {record.get('step')} ({record.get('key')}) {DANGLING}"})
    return out


def report_problems(run_dir: Path) -> list[Problem]:
    """Each saved report against the sha256 chained when it was saved (runs from before
    `report_saved` existed have nothing to compare: no problem)."""
    import hashlib

    log = StepLog(run_dir)
    if not log.path.exists():
        return []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        saved = {r.get("stop"): r.get("sha256") for r in log.records() if r.get("type") == "report_saved"}
    if not saved:
        return []
    latest = max(key for key in saved if isinstance(key, int))
    files = [(Path(run_dir) / "reports" / f"{n:04d}.json", n) for n in saved if isinstance(n, int)]
    files.append((Path(run_dir) / "report.json", latest))
    out = []
    for path, number in files:
        try:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError:
            digest = None
        if digest != saved[number]:
            out.append({"kind": "report-edited", "path": str(path),
                        "detail": f"{path} is not the report Stop {number} saved (its sha256 is chained in the "
                                  "step log): it was edited or removed behind vacant's back"})
    return out


def state_problems(run_dir: Path) -> list[Problem]:
    """The run's `run.json` against the step log it caches (vacant.record.recovery); a missing or
    unreadable one is no problem (the recorder starts afresh from the log's tail)."""
    import json

    from vacant.record.recovery import reconcile, state_disagreements

    log, path = StepLog(run_dir), Path(run_dir) / "run.json"
    try:
        run = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return []
    if not isinstance(run, dict) or not log.path.exists():
        return []
    try:
        reconcile(run, log)  # what a killed hook left unsaved is not an edit
        found = state_disagreements(run, log)
    except (AttributeError, KeyError, TypeError, ValueError) as error:
        found = [f"it cannot be read as a run state ({type(error).__name__})"]
    if not found:
        return []
    return [{"kind": "state-edited", "path": str(path),
             "detail": f"{path} no longer agrees with the step log it caches: {'; '.join(found)}"}]


def object_problems(state: Path) -> list[Problem]:
    from vacant.store.objects import ObjectStore

    return [{"kind": "object-edited", "path": key,
             "detail": f"object {key} no longer matches its content hash: edited behind vacant's back"}
            for key in ObjectStore(Path(state) / "objects").tampered()]
def _installed_unwalled(run_dir: Path, platform: object) -> bool:
    """`vacant init` recorded this platform's hooks as installed without the wall, or the install
    record is gone (nothing then says the wall was up)."""
    from vacant.core.locations import read_install

    state = Path(run_dir).parent.parent  # <state>/runs/<run>
    record = read_install(state, state)
    if record is None:
        return True
    walls = record.get("walls") or {}
    name = {"claude-code": "claude"}.get(str(platform), str(platform))
    return walls.get(name) is False


def problems(root: Path, run_dir: Path) -> list[Problem]:
    return (chain_problems(run_dir) + ledger_problems(root) + run_problems(run_dir) + report_problems(run_dir)
            + state_problems(run_dir))


def as_findings(found: list[Problem]) -> list[Finding]:
    """Each problem but the notes as a `record` finding (stable id across Stops)."""
    return [Finding(id=finding_id("record:" + p["kind"], p.get("path"), p["detail"]), source="record",
                    name=p["kind"], path=p.get("path"), line=None, col=None, message=p["detail"], text="")
            for p in found if p["kind"] not in NOTES]
