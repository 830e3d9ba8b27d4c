"""The ask book's card store: one card per ACT action that waits for a person, under `asks/` in the state directory.

A card (`ask#N`) holds the receipts of what would run (the command or arm, its working
directory, what it may change), who asked (run, step key), and the person's answer, signed with
their key. Its fate is read at answer time, never stored as a snapshot:

    awaiting-human  nobody has answered (silence is never a decline; nothing ages it)
    approved        the person said yes; the same action (same normal form, same working
                    directory) will pass exactly once
    declined        the person said no
    stale           the approval can no longer be used: it expired (`--expires`), the workspace
                    moved since (`--refuse-if-moved`), or its signature does not verify
    spent           the approval was used: it forwards to the step that ran

The recorder consults the book (asks/consult.py) for every ACT call the gate classifies; the
person answers with `vacant approve` / `vacant decline` (asks/answer.py), recorded as
`human_decided` in the step log of every run that asked. Stdlib + xxhash only (an ACT call's hot path).
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

from vacant.core.atomic import atomic_write
from vacant.core.filelock import file_lock
from vacant.core.keys import verify_signature
from vacant.core.ledger import Ledger
from vacant.core.locations import state_dir
from vacant.policy.gate.asks.fingerprint import moved_since

PREFIX = "ask#"
ID_PATTERN = re.compile(r"^ask#([1-9][0-9]*)$")
LOCK_TIMEOUT_S = 20.0

FATES = {
    "awaiting-human": "Nobody has answered yet. Silence is never a decline: nothing times out or ages the card.",
    "approved": "The person approved; the same action (same normal form, same working directory) passes once.",
    "declined": "The person declined; the action does not run (an agent-relayed decline closes nothing).",
    "stale": "The approval can no longer be used: it expired, the workspace moved since "
             "(--refuse-if-moved), or its signature does not verify. The gate refuses with APPROVAL_STALE.",
    "spent": "The approval was used by exactly one call; the card forwards to that step and its settled outcome.",
}
LEDGER_BROKEN = "the signed ledger of spent approvals was cut or altered, so no approval can be trusted unspent"


class AskError(ValueError):
    """A person-facing problem with an ask command (one sentence saying what to do)."""


# -- storage --------------------------------------------------------------------------------------


class AskBook:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.dir = state_dir(self.root) / "asks"

    def lock(self):
        self.dir.mkdir(parents=True, exist_ok=True)
        return file_lock(self.dir / "lock", LOCK_TIMEOUT_S)

    def path(self, n: int) -> Path:
        return self.dir / f"ask-{n}.json"

    def cards(self) -> list[dict]:
        if not self.dir.is_dir():
            return []
        out = []
        for entry in os.scandir(self.dir):
            if entry.name.startswith("ask-") and entry.name.endswith(".json"):
                try:
                    card = json.loads(Path(entry.path).read_bytes())
                except (OSError, ValueError):
                    continue
                if isinstance(card, dict) and isinstance(card.get("n"), int):
                    out.append(_numbered(card, entry.name))
        return sorted(out, key=lambda card: card["n"])

    def get(self, ask_id: str) -> dict | None:
        match = ID_PATTERN.match(ask_id)
        if not match:
            return None
        path = self.path(int(match.group(1)))
        try:
            card = json.loads(path.read_bytes())
        except (OSError, ValueError):
            return None
        return _numbered(card, path.name) if isinstance(card, dict) else None

    def spent_ledger(self) -> Ledger:
        return Ledger(self.dir / "spent.jsonl", self.root, "spent")

    def spent_ids(self) -> tuple[set[str], list]:
        """Ids of the cards whose approval was spent, by the signed ledger, and its problems."""
        entries, problems = self.spent_ledger().read()
        return {str(entry.get("ask")) for entry in entries}, problems

    def save(self, card: dict) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        path = self.path(card["n"])
        atomic_write(path, json.dumps(card, indent=1, ensure_ascii=False))

    def new(self, fields: dict) -> dict:
        """A new card with the next number (call under `lock()`)."""
        counter = self.dir / "next"
        try:
            n = int(counter.read_text().strip())
        except (OSError, ValueError):
            n = 1
        n = max([n] + [card["n"] + 1 for card in self.cards()])
        counter.write_text(f"{n + 1}\n")
        now = time.time()
        card = {"id": f"{PREFIX}{n}", "n": n, "created": now, "asked": 1, "last_asked": now, "decision": None,
                "stale": None, "spent": None, **fields}
        self.save(card)
        return card


def _numbered(card: dict, file_name: str) -> dict:
    """A card carries the number of the file it was read from: a card copied under another number
    then no longer matches its own (signed) id, and `fate` calls it stale."""
    match = re.match(r"^ask-([1-9][0-9]*)\.json$", file_name)
    if match:
        card["n"] = int(match.group(1))
    return card


# -- fates ----------------------------------------------------------------------------------------


def signed_body(card: dict, decision: dict) -> dict:
    return {"ask": card["id"], "fingerprint": card["fingerprint"], "decision": decision["decision"],
            "at": decision["at"], "expires_at": decision.get("expires_at"),
            "refuse_if_moved": bool(decision.get("refuse_if_moved")), "workspace": decision.get("workspace")}


def signature_ok(card: dict) -> bool:
    decision = card.get("decision") or {}
    try:
        return verify_signature(signed_body(card, decision), decision.get("signature"))
    except (OSError, KeyError, TypeError, ValueError, RuntimeError):
        return False


def fate(card: dict, now: float | None = None, root: Path | None = None) -> tuple[str, str]:
    """(fate, one sentence) of a card, read now. With `root`, a `--refuse-if-moved` approval is
    compared with the workspace as it is now."""
    now = time.time() if now is None else now
    if card.get("id") != f"{PREFIX}{card.get('n')}":
        return "stale", (f"the card in file ask-{card.get('n')}.json says it is {card.get('id')!r}: it was copied or "
                         "renumbered, so its answer does not count here")
    if card.get("spent"):
        return "spent", f"used at {_when(card['spent']['at'])} by {card['spent'].get('step_id') or card['spent']['key']}"
    if card.get("stale"):
        return "stale", card["stale"]["reason"]
    decision = card.get("decision")
    if not decision:
        return "awaiting-human", "nobody has answered yet (silence is never a decline)"
    question = bool(card.get("question"))  # a question of the Stop's (asks/questions.py): never spent
    if decision["decision"] == "declined":
        return "declined", f"{'rejected' if question else 'declined'} by the person at {_when(decision['at'])}"
    if not signature_ok(card):
        return "stale", "its signature does not verify with the person's key (the card was edited): answer again"
    if decision.get("expires_at") is not None and now >= decision["expires_at"]:
        return "stale", f"the approval expired at {_when(decision['expires_at'])}"
    if decision.get("refuse_if_moved") and root is not None:
        moved = moved_since(root, decision.get("workspace"))
        if moved:
            return "stale", f"the workspace moved since the approval ({moved}) and it was given with --refuse-if-moved"
    if question:
        return "approved", f"accepted by the person at {_when(decision['at'])}; it stands for this exact change"
    until = f", until {_when(decision['expires_at'])}" if decision.get("expires_at") is not None else ""
    return "approved", f"approved by the person at {_when(decision['at'])}{until}; the same action passes once"


def _when(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))
