"""Questions the Stop puts to the person in the ask book: a test the agent changed so that it passes,
a contract item (check or guard) the agent added, edited or removed.

A question is a card like an ACT action's, with `question` naming its kind (QUESTION_KINDS) and a
fingerprint of the exact change it is about: the person answers once (`vacant approve` accepts the
change, `vacant decline` rejects it), signed, and a later Stop asking about the same change reads
that answer instead of asking again; a different change is a different question. An answer is
never spent. An acceptance counts only when the person's own `vacant approve` recorded it
(asks/decided.py): a card the agent signed or edited itself is stale, and the question stands.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any, NamedTuple

from vacant.core.redact import redact
from vacant.policy.gate.asks.book import AskBook, fate
from vacant.policy.gate.asks.decided import DECIDED_MISSING, decided_by_person

CHANGED_TEST = "changed_test"
CONTRACT = "contract"
QUESTION_KINDS = {
    CHANGED_TEST: "A guard's test the agent changed fails as the person set it and passes as the agent left it. "
                  "Accept (`vacant approve`): changing the test was the task, the test as changed stands. "
                  "Reject (`vacant decline`): the baseline's test stands, and its failure goes back to the agent "
                  "as a failure to fix.",
    CONTRACT: "A check or guard the agent added, edited or removed in vacant.toml. Until accepted, the Stop runs "
              "the contract as it was at the run's baseline (an added item does not run, an edited or removed one "
              "runs as the person had it). Accept (`vacant approve`): the item as the agent wrote it is the "
              "person's contract from then on. Reject (`vacant decline`): the person's version stands.",
}
AWAITING, ACCEPTED, REJECTED = "awaiting-human", "approved", "declined"


class Answer(NamedTuple):
    """Where one question stands: its card and the card's fate now (awaiting-human, approved, declined)."""

    ask: str
    fate: str
    detail: str

    @property
    def accepted(self) -> bool:
        return self.fate == ACCEPTED

    @property
    def rejected(self) -> bool:
        return self.fate == REJECTED


def fingerprint_of(kind: str, facts: Any) -> str:
    """The exact change a question is about: the same facts, the same question."""
    digest = hashlib.sha256(json.dumps([kind, facts], sort_keys=True, default=str).encode()).hexdigest()
    return f"question:{kind}:{digest[:40]}"


def is_question(card: dict[str, Any]) -> bool:
    return card.get("question") in QUESTION_KINDS


def answer_for(root: Path, fingerprint: str) -> Answer | None:
    """The standing answer to this exact question (the newest card about it that is not stale), or None."""
    for card in reversed(_about(AskBook(root), fingerprint)):
        answer = _answer_of(root, card)
        if answer.fate != "stale":
            return answer
    return None


def ask(root: Path, run_id: str, kind: str, fingerprint: str, action: str, receipts: dict[str, Any],
        topic: str = "") -> Answer:
    """The question's answer if it has one; else its card awaiting the person (a new one, or the
    one already waiting, asked once more from this run). `topic` names what it is about (a test,
    an item): a new card supersedes an unanswered one on the same topic (the agent changed it
    again; answering the old change would decide nothing)."""
    book = AskBook(root)
    with book.lock():
        for card in reversed(_about(book, fingerprint)):
            answer = _answer_of(root, card)
            if answer.fate == AWAITING:
                card["asked"] = card.get("asked", 1) + 1
                card["last_asked"] = time.time()
                if run_id not in card.setdefault("runs", []):
                    card["runs"].append(run_id)
                book.save(card)
            if answer.fate != "stale":
                return answer
        card = book.new({"question": kind, "topic": [kind, topic], "run": run_id, "runs": [run_id],
                         "fingerprint": fingerprint, "action": redact(action), "cwd": ".", "receipts": redact(receipts)})
        _supersede(book, card)
    return Answer(card["id"], AWAITING, "nobody has answered yet (silence is never a decline)")


def _supersede(book: AskBook, card: dict[str, Any]) -> None:
    for other in book.cards():
        if other["id"] != card["id"] and is_question(other) and other.get("topic") == card["topic"] \
                and not other.get("decision") and not other.get("stale"):
            other["stale"] = {"at": time.time(), "next": card["id"],
                              "reason": f"superseded by {card['id']}: the agent changed it again"}
            book.save(other)


def _about(book: AskBook, fingerprint: str) -> list[dict[str, Any]]:
    return [card for card in book.cards() if card.get("fingerprint") == fingerprint and is_question(card)]


def _answer_of(root: Path, card: dict[str, Any]) -> Answer:
    state, detail = fate(card)
    if state == ACCEPTED and not decided_by_person(root, card):
        state, detail = "stale", DECIDED_MISSING
    return Answer(card["id"], state, detail)
