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

import json
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
