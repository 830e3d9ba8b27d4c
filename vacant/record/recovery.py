"""Bringing a run's small state (`run.json`) up to date with its step log after a killed hook.

A hook appends to the step log first and saves `run.json` last, both under the workspace lock. A
hook killed in between (a platform timeout, SIGKILL) leaves records the state does not know: a
`step_start` whose number the next call would hand out again, a step nobody will close. The state
remembers the log's sequence number it was saved at (`log_seq`); when the log's head is past it,
the records after it are folded into the state: step numbers are never reused, the steps they
opened are open (and marked dangling: closed at Stop), the steps they closed are closed.
Stdlib only (hot path): the common case reads the log's `head` file only.
"""

from __future__ import annotations

from vacant.core import leanjson as json  # not `import json`: 13 ms CPU of each hook call (vacant/hook/lean.py)
import os

from vacant.core import events
from vacant.store.steplog import StepLog

TAIL_PROBE = 1 << 20


def records_after(log: StepLog, seq: int) -> list[dict]:
    """The log's readable records with a sequence number above `seq` (a tail read when it suffices)."""
    try:
        size = os.path.getsize(log.path)
    except OSError:
        return []
    with open(log.path, "rb") as handle:
        handle.seek(max(0, size - TAIL_PROBE))
        tail = handle.read()
    lines = tail.split(b"\n")
    if size > TAIL_PROBE:
        lines = lines[1:]  # the first piece may be a partial line
    parsed = []
    for raw in lines:
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("seq"), int):
            parsed.append(record)
    if size > TAIL_PROBE and (not parsed or parsed[0]["seq"] > seq + 1):
        import warnings  # the rare full read: torn lines were already reported by verify

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parsed = [r for r in events.load(log.path) if isinstance(r.get("seq"), int)]
    return [record for record in parsed if record["seq"] > seq]


def reconcile(run: dict, log: StepLog) -> bool:
    """Fold records the state missed into `run` (in place). True when anything was missed."""
    head = log.read_head()
    known = int(run.get("log_seq") or 0)
    if head is not None and head.seq == known and head.size == _size(log):
        return False
    missed = records_after(log, known)
    changed = False
    for record in missed:
        kind = record.get("type")
        step = record.get("step")
        if kind == "run_start":
            run["started"] = True
        elif kind == "step_start" and isinstance(step, int):
            run["next_step"] = max(int(run.get("next_step") or 1), step + 1)
            key = str(record.get("key"))
            if key not in run["open"] and key not in run["closed"]:
                run["open"][key] = {"step": step, "scope": record.get("scope"), "agent_id": record.get("agent_id"),
                                    "dangling": True}
            changed = True
        elif kind == "step_end" and isinstance(step, int):
            key = str(record.get("key"))
            if key in run["open"] and run["open"][key]["step"] == step:
                del run["open"][key]
            run["closed"][key] = step
            changed = True
    if missed:
        run["log_seq"] = max(record["seq"] for record in missed)
    return changed


def _size(log: StepLog) -> int:
    try:
        return os.path.getsize(log.path)
    except OSError:
        return 0


def dangling(run: dict) -> list[str]:
    """Keys of the open steps a killed hook left behind."""
    return [key for key, info in run["open"].items() if info.get("dangling")]


def state_disagreements(run: dict, log: StepLog) -> list[str]:
    """Where a saved run state (`run.json`, already reconciled with the log's tail) disagrees with
    the step log it caches, one sentence each; [] when they agree. The log is the record: the
    state only remembers what it says (the next step number, the steps open and closed). Steps of
    out-of-band changes (`oob-N`) open and close in one call and are not kept in the state."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torn lines are the chain's problems, reported there
        records = [r for r in events.load(log.path) if isinstance(r, dict)]
    started = any(r.get("type") == "run_start" for r in records)
    numbers = [r["step"] for r in records if r.get("type") == "step_start" and isinstance(r.get("step"), int)]
    opened = {str(r.get("key")): r["step"] for r in records if r.get("type") == "step_start" and isinstance(r.get("step"), int)}
    closed = {str(r.get("key")): r["step"] for r in records if r.get("type") == "step_end" and isinstance(r.get("step"), int)}
    still_open = {key: step for key, step in opened.items() if key not in closed}
    out = []
    if bool(run.get("started")) != started:
        out.append(f"it says the run {'started' if run.get('started') else 'never started'}; the log says otherwise")
    want = max(numbers, default=0) + 1
    if run.get("next_step") != want:
        out.append(f"its next step number is {run.get('next_step')!r}; the log's is {want}")
    state_open = {str(k): (v or {}).get("step") if isinstance(v, dict) else v for k, v in (run.get("open") or {}).items()}
    if state_open != still_open:
        out.append(f"its open steps {sorted(map(str, state_open.values()))} are not the log's "
                   f"{sorted(map(str, still_open.values()))}")
    state_closed = {str(k): v for k, v in (run.get("closed") or {}).items() if not str(k).startswith("oob-")}
    log_closed = {k: v for k, v in closed.items() if not k.startswith("oob-")}
    if state_closed != log_closed:
        out.append("its closed steps are not the log's")
    return out
