"""Approvals come from a person: an approved card is honoured only when the person's own `vacant
approve` recorded it, a `human_decided` event in the hash-chained step log of a run that asked,
carrying the very signature on the card's decision, in a chain that verifies.

A card that merely verifies (an agent that read the key and signed the pending card itself, or
wrote the decision into the card file) has no such event: it is stale, and the gate asks again.
"""

from __future__ import annotations

from pathlib import Path

from vacant.core.locations import run_dir
from vacant.store.steplog import StepLog, verify

DECIDED_MISSING = ("its approval is not in the record: no `human_decided` event from the person's own `vacant approve` "
                   "carries it (the card was signed or edited behind vacant's back): the person must answer again")


def decided_by_person(root: Path, card: dict) -> bool:
    decision = card.get("decision") or {}
    signature = decision.get("signature")
    if not isinstance(signature, str) or not signature:
        return False
    for run in card.get("runs") or [card.get("run")]:
        if not isinstance(run, str):
            continue
        log = StepLog(run_dir(root, run))
        if not log.path.exists():
            continue
        records = log.records()
        found = next((r for r in records if r.get("type") == "human_decided" and r.get("ask") == card.get("id")
                      and r.get("signature") == signature and r.get("decision") == "approved"), None)
        if found is None:
            continue
        if not any(problem.fatal for problem in verify(log)):  # the chain the event sits in is whole
            return True
    return False
