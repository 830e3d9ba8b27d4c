"""The person's side of the ask book: their answer on an awaiting card, signed, and `human_decided` in its runs; the check that refuses it from inside an agent's tool."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from vacant.core.keys import sign
from vacant.core.locations import run_dir
from vacant.policy.gate.asks.book import ID_PATTERN, LEDGER_BROKEN, AskBook, AskError, fate, signed_body
from vacant.policy.gate.asks.fingerprint import workspace_fingerprint
from vacant.policy.gate.asks.views import resolve
from vacant.store.steplog import StepLog

# -- the person's side (CLI) ----------------------------------------------------------------------

# Set in the shell an agent's tool runs commands in (measured on the pinned binaries by
# tests/e2e/test_agent_env.py), and VACANT_DO, which `vacant do` sets for the agent it runs.
AGENT_ENV = ("CLAUDECODE", "CODEX_SANDBOX", "CODEX_SANDBOX_NETWORK_DISABLED", "CODEX_THREAD_ID", "CODEX_TOOL_CALL_ID",
             "CODEX_SESSION_ID", "CODEX_CI", "OPENCODE", "VACANT_DO")


def agent_env(env: dict | None = None) -> str | None:
    """The variable that shows this process runs inside an agent's own tool, if any."""
    env = os.environ if env is None else env
    for name in AGENT_ENV:
        if env.get(name):
            return name
    return None


def parse_duration(text: str) -> float:
    """`90`, `90s`, `10m`, `1h30m`, `2d`, `1w` -> seconds (ValueError when unreadable or zero)."""
    units = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
    text = text.strip().lower()
    parts = re.findall(r"(\d+(?:\.\d+)?)\s*([smhdw]?)", text)
    if not text or not parts or re.sub(r"(\d+(?:\.\d+)?)\s*([smhdw]?)", "", text).strip():
        raise ValueError(f"{text!r} is not a duration: use e.g. 90s, 10m, 1h30m, 2d")
    seconds = sum(float(number) * units[unit] for number, unit in parts)
    if seconds <= 0:
        raise ValueError("the duration must be longer than 0 s")
    return seconds


def answer(root: Path, ask_id: str, decision: str, expires_s: float | None = None,
           refuse_if_moved: bool = False) -> dict:
    """Record the person's answer on an awaiting card: signed, and `human_decided` in its runs."""
    if decision not in ("approved", "declined"):
        raise ValueError(decision)
    book = AskBook(root)
    card = book.get(ask_id) if ID_PATTERN.match(ask_id) else None
    if card is None:
        resolve(root, ask_id)  # raises UnknownId / AmbiguousId with the lists
        raise AskError(f"{ask_id} is a step, not a card: only cards (ask#N) take an answer")
    with book.lock():
        card = book.get(ask_id)
        _void_if_ledger_broken(book, ask_id)
        state, detail = fate(card)
        if state != "awaiting-human":
            raise AskError(f"{ask_id} is {state} ({detail}): an answer is final; nothing was changed")
        now = time.time()
        record = {"decision": decision, "at": now,
                  "expires_at": (now + expires_s) if (decision == "approved" and expires_s) else None,
                  "refuse_if_moved": bool(refuse_if_moved and decision == "approved"),
                  "workspace": workspace_fingerprint(root) if (refuse_if_moved and decision == "approved") else None}
        record["signature"] = sign(signed_body(card, record))
        card["decision"] = record
        book.save(card)
    for run in card.get("runs") or [card.get("run")]:
        directory = run_dir(root, run)
        if (directory / "events.jsonl").exists():
            StepLog(directory).emit(
                "human_decided", ask=card["id"], decision=decision, signature=record["signature"],
                at=now, expires_at=record["expires_at"], refuse_if_moved=record["refuse_if_moved"],
                action=card.get("action"), cwd=card.get("cwd"),
            )
    return card


def _void_if_ledger_broken(book: AskBook, answering: str) -> None:
    """A person answering while the spent ledger is cut or altered: every earlier approval is void
    (which were spent is unknown), the broken ledger is set aside, and a new one starts."""
    _spent, problems = book.spent_ids()
    if not problems:
        return
    void_approvals(book, f"{LEDGER_BROKEN}: voided when the person next answered", keep=answering)
    book.spent_ledger().restart()


def void_approvals(book: AskBook, reason: str, keep: str | None = None) -> int:
    """Every approval not yet known as spent made void (which were spent is unknown): how many."""
    voided = 0
    for other in book.cards():
        if other["id"] != keep and (other.get("decision") or {}).get("decision") == "approved" \
                and not other.get("stale") and not other.get("question"):  # a question's answer is never spent
            other["stale"] = {"at": time.time(), "reason": reason, "refused": "APPROVAL_STALE"}
            book.save(other)
            voided += 1
    return voided
