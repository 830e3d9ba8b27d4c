"""What can be asked about: a card or step named by any id, the lists of pending steps and awaiting cards, a card's view."""

from __future__ import annotations

import json
import re
from pathlib import Path

from vacant.core import events
from vacant.core.locations import run_dir, runs_dir
from vacant.policy.gate.asks.book import ID_PATTERN, AskBook, AskError, fate

class UnknownId(AskError):
    def __init__(self, ask_id: str, lists: dict[str, list[dict]]) -> None:
        self.ask_id = ask_id
        self.lists = lists
        super().__init__(f"nothing is called {ask_id!r}")


class AmbiguousId(AskError):
    def __init__(self, ask_id: str, matches: list[str]) -> None:
        self.ask_id = ask_id
        self.matches = matches
        super().__init__(f"{ask_id!r} names {len(matches)} things ({', '.join(matches)}): use one of those ids")


# -- answering any id -----------------------------------------------------------------------------


def _run_steps(directory: Path) -> list[dict]:
    """Each step of a run with its state: pending, awaiting-settlement or settled."""
    path = directory / "events.jsonl"
    if not path.exists():
        return []
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        records = events.load(path)
    steps: dict[int, dict] = {}
    for record in records:
        kind = record.get("type")
        if kind == "step_start":
            steps[record["step"]] = {"id": f"{directory.name}#{record['step']}", "run": directory.name,
                                     "step": record["step"], "key": record.get("key"), "tool": record.get("tool"),
                                     "input": record.get("input"), "state": "pending", "outcome": None,
                                     "exit_code": None, "attributions": []}
        elif kind == "step_end" and record.get("step") in steps:
            step = steps[record["step"]]
            step.update(state="awaiting-settlement", outcome=record.get("outcome"), exit_code=record.get("exit_code"),
                        detail=record.get("detail"))
        elif kind == "stop":
            for step in steps.values():
                if step["state"] == "awaiting-settlement":
                    step["state"] = "settled"
        elif kind == "attribution" and record.get("step") in steps:
            steps[record["step"]]["attributions"].append(
                {"finding": record.get("finding"), "level": record.get("level")})
    return [steps[number] for number in sorted(steps)]


def all_steps(root: Path) -> list[dict]:
    base = runs_dir(root)
    if not base.is_dir():
        return []
    out: list[dict] = []
    for directory in sorted(base.iterdir()):
        if directory.is_dir():
            out += _run_steps(directory)
    return out


def _step_summary(step: dict) -> dict:
    summary = {key: step[key] for key in ("id", "run", "step", "tool", "state", "outcome")}
    summary["input"] = brief(step.get("input"))
    return summary


def brief(value: object, width: int = 100) -> str:
    """A step's input on one line of at most `width` characters (its command or file, else its JSON)."""
    if isinstance(value, dict):
        value = value.get("command", value.get("file_path", value))
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def lists(root: Path) -> dict[str, list[dict]]:
    """What can be asked about: pending steps, steps awaiting settlement, cards awaiting a person."""
    steps = all_steps(root)
    cards = [card_view(card, root, check_moved=False) for card in AskBook(root).cards()]
    return {
        "pending_steps": [_step_summary(s) for s in steps if s["state"] == "pending"],
        "steps_awaiting_settlement": [_step_summary(s) for s in steps if s["state"] == "awaiting-settlement"],
        "cards_awaiting_a_person": [c for c in cards if c["fate"] == "awaiting-human"],
    }


def card_view(card: dict, root: Path, check_moved: bool = True, steps: list[dict] | None = None) -> dict:
    state, detail = fate(card, root=root if check_moved else None)
    view = {"id": card["id"], "kind": "card", "fate": state, "detail": detail, "action": card.get("action"),
            "receipts": card.get("receipts"), "asked": card.get("asked", 1), "runs": card.get("runs", []),
            "created": card.get("created")}
    if card.get("question"):
        view["question"] = card["question"]
    decision = card.get("decision")
    if decision:
        view["decision"] = {k: decision.get(k) for k in ("decision", "at", "expires_at", "refuse_if_moved")}
        view["decision"]["signed"] = bool(decision.get("signature"))
    if card.get("replaces"):
        view["replaces"] = card["replaces"]
    if card.get("stale"):
        view["stale"] = {k: card["stale"].get(k) for k in ("at", "reason", "refused", "next")}
    if card.get("spent"):
        spent = card["spent"]
        step = _find_step(root, spent.get("run"), spent.get("key"), steps)
        view["spent"] = {"at": spent.get("at"), "run": spent.get("run"), "key": spent.get("key"),
                         "step": step}
    return view


def _find_step(root: Path, run: str | None, key: str | None, steps: list[dict] | None = None) -> dict | None:
    if run is None or key is None:
        return None
    candidates = steps if steps is not None else _run_steps(run_dir(root, run))
    for step in candidates:
        if step["run"] == run_dir(root, run).name and step["key"] == key:
            return {k: step.get(k) for k in ("id", "step", "state", "outcome", "exit_code", "attributions")}
    return None


def resolve(root: Path, ask_id: str) -> dict:
    """The card or step named exactly `ask_id` (UnknownId / AmbiguousId otherwise)."""
    found: list[dict] = []
    book = AskBook(root)
    if ID_PATTERN.match(ask_id):
        card = book.get(ask_id)
        if card is not None:
            found.append(card_view(card, root))
    steps = all_steps(root)
    by_step = re.match(r"^step#([1-9][0-9]*)$", ask_id)
    for step in steps:
        if step["id"] == ask_id or (by_step and step["step"] == int(by_step.group(1))):
            cards = [c["id"] for c in book.cards() if (c.get("spent") or {}).get("key") == step["key"]
                     and (c.get("spent") or {}).get("run") == step["run"]]
            found.append({"id": step["id"], "kind": "step", **{k: step.get(k) for k in (
                "run", "step", "tool", "state", "outcome", "exit_code", "attributions")},
                "input": step.get("input"), "authorised_by": cards})
    if not found:
        raise UnknownId(ask_id, lists(root))
    if len(found) > 1:
        raise AmbiguousId(ask_id, [item["id"] if item["kind"] == "step" else f"card {item['id']}" for item in found])
    return found[0]
