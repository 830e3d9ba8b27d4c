"""What the gate asks the book for one ACT action: an approval to spend, or the deny text and the card it waits on.

The hot-path part of the ask book (an ACT call only): stdlib + xxhash.
"""

from __future__ import annotations

import json
import time
from collections import namedtuple
from pathlib import Path

from vacant.core.calls import HookCall
from vacant.core.redact import redact
from vacant.policy.gate.asks.book import LEDGER_BROKEN, AskBook, fate
from vacant.policy.gate.asks.decided import DECIDED_MISSING, decided_by_person

TYPE_CHECKING = False  # typing's, without importing typing (hot path)
if TYPE_CHECKING:
    from collections.abc import Callable

# The fixed sentences. WHY is byte-identical on every needs-confirm payload: no runtime value in it.
WHY = (
    "Nothing has been done: this action changes something beyond the work itself, so it waits for a person's "
    "answer. This is a question for the person, not a failure: do not report it as an error and do not try "
    "another way around it. Your own confirmation is not the person's answer."
)
DECLINED_WHY = (
    "Nothing has been done: the person declined this action. This is their answer, not a failure: do not "
    "report it as an error and do not try another way around it; carry on without it, or tell the person."
)

CODES = {
    "NEEDS_CONFIRM": "An ACT action with no approval: a card awaits the person (askId).",
    "APPROVAL_STALE": "The approval went stale (see the card); a new card awaits the person (askId).",
    "DECLINED": "The person declined this action (askId names their answer).",
}


SPENT_CLEARED = ("its approval was already spent (the signed spent ledger says so) although the card no longer "
                 "shows it: the card was edited")


def how_to_act(ask_id: str) -> str:
    return (
        f"Tell the person what you want to run and why, then stop and let them answer {ask_id} from their own "
        f"shell: `vacant approve {ask_id}` or `vacant decline {ask_id}` (`vacant ask {ask_id}` shows the card). "
        "If they approve, make exactly the same call again (same command, same working directory): it runs once. "
        "Do not run `vacant approve` yourself: it is refused."
    )


# -- the gate's side (hot path) -------------------------------------------------------------------


def _payload(card: dict, code: str, stale: dict | None = None) -> str:
    if code == "DECLINED":
        payload = {"performed": False, "status": "declined", "code": code, "why": DECLINED_WHY,
                   "askId": card["id"], "receipts": card["receipts"],
                   "howToAct": f"Do not run it. Tell the person you did not do it because they declined {card['id']}."}
    else:
        payload = {"performed": False, "status": "needs-confirm", "code": code, "why": WHY, "askId": card["id"],
                   "receipts": card["receipts"], "howToAct": how_to_act(card["id"])}
    if stale is not None:
        payload["stale"] = {"askId": stale["id"], "reason": stale["stale"]["reason"]}
    return json.dumps(payload, ensure_ascii=False)


# The book's answer for an ACT action that may not run: the deny text the agent sees and, unless
# the person already declined it in this run, the `pause_surfaced` fields to record (else None).
Held = namedtuple("Held", "text pause")
# An approval spent on this very action: the card's id and the command line the person approved
# (as the card shows it). The step then starts (or vacant's hook runs it: vacant/record/unwalled.py).
Spent = namedtuple("Spent", "ask command")

KEPT = ("Not run: the person approved this ({ask}), but vacant cannot run it here: {reason}. The approval is "
        "kept, unspent. This is not your error: tell the person (`vacant ask {ask}` shows the card).")


def consult(root: Path, run_id: str, key: str, call: HookCall, action,
            check: Callable[[dict], str | None] | None = None) -> Held | Spent:
    """Consult the book for one ACT action: `Spent` when an approval is spent on it (the step then
    starts), else what to deny it with. The caller records the denied call; the book only keeps
    its cards. `check(card)`: asked of a valid approval before it is spent; a reason it returns
    denies the call with that reason and leaves the approval unspent (KEPT)."""
    book = AskBook(root)
    stale_card = None
    with book.lock():
        cards = [card for card in book.cards() if card.get("fingerprint") == action.fingerprint]
        approved = [c for c in cards if (c.get("decision") or {}).get("decision") == "approved"
                    and not c.get("spent") and not c.get("stale")]
        spent, ledger_problems = book.spent_ids() if approved else (set(), [])
        for card in approved:
            state, detail = fate(card, root=root)
            if state == "approved" and card["id"] in spent:
                state, detail = "stale", SPENT_CLEARED
            elif state == "approved" and not decided_by_person(root, card):  # a card that merely verifies
                state, detail = "stale", DECIDED_MISSING
            elif state == "approved" and ledger_problems:  # fail closed: which approvals were spent is unknown
                state, detail = "stale", f"{LEDGER_BROKEN} ({ledger_problems[0].detail})"
            kept = check(card) if state == "approved" and check is not None else None
            if kept:
                return Held(KEPT.format(ask=card["id"], reason=kept), None)
            if state == "approved":
                card["spent"] = {"at": time.time(), "run": run_id, "key": key, "tool_use_id": call.key,
                                 "agent_id": call.agent_id}
                book.spent_ledger().append({"ask": card["id"], "fingerprint": card["fingerprint"],
                                            "at": card["spent"]["at"], "run": run_id, "key": key})
                book.save(card)
                return Spent(card["id"], (card.get("receipts") or {}).get("command"))
            card["stale"] = {"at": time.time(), "reason": detail, "refused": "APPROVAL_STALE", "run": run_id}
            book.save(card)
            stale_card = card
        fields = {"run": run_id, "runs": [run_id], "agent_id": call.agent_id, "tool": action.tool, "key": key,
                  "kind": action.kind, "action": redact(action.command), "cwd": action.cwd,  # cards at rest: no secrets
                  "fingerprint": action.fingerprint, "receipts": redact(action.receipts), "rules": [h.rule for h in action.hits]}
        if stale_card is not None:
            card = book.new({**fields, "replaces": stale_card["id"]})
            stale_card["stale"]["next"] = card["id"]
            book.save(stale_card)
            code = "APPROVAL_STALE"
        else:
            awaiting = [c for c in cards if not c.get("decision") and not c.get("stale")]
            latest = cards[-1] if cards else None
            if awaiting:
                card = awaiting[-1]
                card["asked"] = card.get("asked", 1) + 1
                card["last_asked"] = time.time()
                if run_id not in card.setdefault("runs", []):
                    card["runs"].append(run_id)
                book.save(card)
                code = "NEEDS_CONFIRM"
            elif (latest is not None and (latest.get("decision") or {}).get("decision") == "declined"
                  and run_id in latest.get("runs", [])):
                card, code = latest, "DECLINED"
            else:
                card = book.new(fields)
                code = "NEEDS_CONFIRM"
    text = _payload(card, code, stale_card)
    if code == "DECLINED":
        return Held(text, None)
    return Held(text, {"ask": card["id"], "status": "awaiting-human", "code": code, "receipts": card["receipts"]})
