"""The ask book: one card per ACT action that waits for a person, under `asks/` in the state directory.

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

The recorder consults the book (`consult()`) for every ACT call the gate classifies; the
person answers with `vacant approve` / `vacant decline`, recorded as `human_decided` in the step
log of every run that asked. The hot-path part of this module is stdlib + xxhash only.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections import namedtuple
from pathlib import Path

from vacant.core import events
from vacant.core.atomic import atomic_write
from vacant.core.calls import HookCall
from vacant.core.docgen import GeneratedDoc
from vacant.core.keys import sign, verify_signature
from vacant.core.ledger import Ledger
from vacant.core.locations import run_dir, runs_dir, state_dir
from vacant.core.redact import redact
from vacant.policy.gate.askprint import git_head, moved_since, workspace_fingerprint
from vacant.policy.gate.decided import DECIDED_MISSING, decided_by_person
from vacant.policy.gate.rules import MODE_REFUSAL
from vacant.policy.shipped import CODE_RULES, DEFAULT_RULES
from vacant.core.filelock import file_lock
from vacant.store.steplog import StepLog

__all__ = ["git_head", "moved_since", "workspace_fingerprint"]  # their home is askprint.py

PREFIX = "ask#"
ID_PATTERN = re.compile(r"^ask#([1-9][0-9]*)$")
LOCK_TIMEOUT_S = 20.0

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

FATES = {
    "awaiting-human": "Nobody has answered yet. Silence is never a decline: nothing times out or ages the card.",
    "approved": "The person approved; the same action (same normal form, same working directory) passes once.",
    "declined": "The person declined; the action does not run (an agent-relayed decline closes nothing).",
    "stale": "The approval can no longer be used: it expired, the workspace moved since "
             "(--refuse-if-moved), or its signature does not verify. The gate refuses with APPROVAL_STALE.",
    "spent": "The approval was used by exactly one call; the card forwards to that step and its settled outcome.",
}
CODES = {
    "NEEDS_CONFIRM": "An ACT action with no approval: a card awaits the person (askId).",
    "APPROVAL_STALE": "The approval went stale (see the card); a new card awaits the person (askId).",
    "DECLINED": "The person declined this action (askId names their answer).",
}


SPENT_CLEARED = ("its approval was already spent (the signed spent ledger says so) although the card no longer "
                 "shows it: the card was edited")


LEDGER_BROKEN = "the signed ledger of spent approvals was cut or altered, so no approval can be trusted unspent"


class AskError(ValueError):
    """A person-facing problem with an ask command (one sentence saying what to do)."""


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


def how_to_act(ask_id: str) -> str:
    return (
        f"Tell the person what you want to run and why, then stop and let them answer {ask_id} from their own "
        f"shell: `vacant approve {ask_id}` or `vacant decline {ask_id}` (`vacant ask {ask_id}` shows the card). "
        "If they approve, make exactly the same call again (same command, same working directory): it runs once. "
        "Do not run `vacant approve` yourself: it is refused."
    )


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
    if decision["decision"] == "declined":
        return "declined", f"declined by the person at {_when(decision['at'])}"
    if not signature_ok(card):
        return "stale", "its signature does not verify with the person's key (the card was edited): answer again"
    if decision.get("expires_at") is not None and now >= decision["expires_at"]:
        return "stale", f"the approval expired at {_when(decision['expires_at'])}"
    if decision.get("refuse_if_moved") and root is not None:
        moved = moved_since(root, decision.get("workspace"))
        if moved:
            return "stale", f"the workspace moved since the approval ({moved}) and it was given with --refuse-if-moved"
    until = f", until {_when(decision['expires_at'])}" if decision.get("expires_at") is not None else ""
    return "approved", f"approved by the person at {_when(decision['at'])}{until}; the same action passes once"


def _when(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))


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


def consult(root: Path, run_id: str, key: str, call: HookCall, action) -> Held | None:
    """Consult the book for one ACT action: None when an approval is spent on it (the step then
    starts), else what to deny it with. The caller records the denied call; the book only keeps
    its cards."""
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
            if state == "approved":
                card["spent"] = {"at": time.time(), "run": run_id, "key": key, "tool_use_id": call.key,
                                 "agent_id": call.agent_id}
                book.spent_ledger().append({"ask": card["id"], "fingerprint": card["fingerprint"],
                                            "at": card["spent"]["at"], "run": run_id, "key": key})
                book.save(card)
                return None
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
    for other in book.cards():
        if other["id"] != answering and (other.get("decision") or {}).get("decision") == "approved" \
                and not other.get("stale"):
            other["stale"] = {"at": time.time(), "reason": f"{LEDGER_BROKEN}: voided when the person next answered",
                              "refused": "APPROVAL_STALE"}
            book.save(other)
    book.spent_ledger().restart()


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
    summary["input"] = _brief(step.get("input"))
    return summary


def _brief(value: object, width: int = 100) -> str:
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


# -- the generated doc ----------------------------------------------------------------------------


def render_doc() -> str:
    lines = [
        "# The gate's closed lists",
        "",
        DOC.header(),
        "See docs/GATE.md for how the gate works.",
        "",
        "## Fates of a card",
        "",
        "| fate | meaning |",
        "|---|---|",
    ]
    lines += [f"| `{name}` | {meaning} |" for name, meaning in FATES.items()]
    lines += ["", "## Codes of a denied ACT action", "", "| code | meaning |", "|---|---|"]
    lines += [f"| `{name}` | {meaning} |" for name, meaning in CODES.items()]
    lines += ["", "## Shipped ACT rules", "",
              "Remove one with `remove = [\"NAME\"]` in `[gate]`; regexes are searched in each simple command "
              "of a shell line, in its normal form (whitespace and quoting normalised).", "",
              "| name | matches | may change |", "|---|---|---|"]
    for rule in DEFAULT_RULES:
        pattern = rule.command.pattern.replace("|", "\\|")
        lines.append(f"| `{rule.name}` | `{pattern}` | {rule.why} |")
    for name, why in CODE_RULES.items():
        lines.append(f"| `{name}` | (in code, see docs/GATE.md) | {why} |")
    lines += ["", "## Fixed sentences", "",
              "`why` of every needs-confirm payload (byte-identical on every call):", "", "> " + WHY, "",
              "`why` of a declined action:", "", "> " + DECLINED_WHY, "",
              "Writing an arm without a mode line:", "", "> " + MODE_REFUSAL.format(path="arms/x.sh"), ""]
    return "\n".join(lines)



DOC = GeneratedDoc('ASKS.md', render_doc, ("vacant/policy/gate/asks.py", "vacant/policy/gate/gate.py"))
