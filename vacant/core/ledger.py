"""Append-only, hash-chained, HMAC-signed ledgers: the record of what only a person may do.

The flags a person filed (`flags/ledger.jsonl`) and the approvals the gate spent
(`asks/spent.jsonl`) are kept as ledgers in the state directory. Each entry carries `seq`, the
sha256 of the entry before it (`prev`) and an HMAC (`sig`, the user's key, vacant.core.keys), so an
edited, inserted, removed or reordered entry fails verification. The ledger's tip (seq and hash)
is also kept next to the key (`~/.config/vacant/anchors/<workspace>.json`), a directory the gate
refuses to let an agent touch: a ledger cut short, emptied or deleted no longer matches its
anchor. What an agent with the person's key in hand can do is a documented limit (docs/TRUST.md).
Stdlib only (the gate's side runs on the hot path).
"""

from __future__ import annotations

import json
import os
import time
from collections import namedtuple
from pathlib import Path

from vacant.core.sha import sha256

from vacant.core.keys import canonical, sign, verify_signature
from vacant.core.locations import user_config_dir, workspace_key
from vacant.core import tally

TYPE_CHECKING = False  # typing's, without importing typing: 15 ms CPU of a gated ACT call (hook/lean.py)
if TYPE_CHECKING:
    from typing import Any

GENESIS = "0" * 64
READ_CAP = 64 << 20  # a ledger is small; anything bigger is read this far and reported

# A problem found while reading a ledger: what kind (altered, cut, missing), and one sentence.
LedgerProblem = namedtuple("LedgerProblem", "kind detail")


def entry_hash(entry: dict[str, Any]) -> str:
    return sha256(canonical(entry)).hexdigest()


class Ledger:
    def __init__(self, path: Path, root: Path, name: str) -> None:
        self.path = Path(path)
        self.root = Path(root)
        self.name = name  # which ledger of the workspace (its anchor's key)

    # -- the anchor (next to the key, out of the agent's reach) ----------------------------------

    def _anchor_path(self) -> Path:
        return user_config_dir() / "anchors" / f"{workspace_key(self.root)}.json"

    def _anchors(self) -> dict[str, Any]:
        try:
            data = json.loads(self._anchor_path().read_bytes())
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def anchor(self) -> dict[str, Any] | None:
        found = self._anchors().get(self.name)
        return found if isinstance(found, dict) else None

    def _set_anchor(self, seq: int, tip: str) -> None:
        path = self._anchor_path()
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        anchors = self._anchors()
        anchors[self.name] = {"seq": seq, "hash": tip, "ledger": str(self.path)}
        temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        temp.write_text(json.dumps(anchors, sort_keys=True))
        os.replace(temp, path)

    # -- reading ---------------------------------------------------------------------------------

    def read(self) -> tuple[list[dict[str, Any]], list[LedgerProblem]]:
        """The entries that verify, in order, and every problem found (never raises on bad data)."""
        problems: list[LedgerProblem] = []
        try:
            with open(self.path, "rb") as handle:
                data = handle.read(READ_CAP)
        except FileNotFoundError:
            data = b""
        except OSError as error:
            return [], [LedgerProblem("missing", f"{self.path} cannot be read ({error.strerror})")]
        entries: list[dict[str, Any]] = []
        prev, seq = GENESIS, 0
        for number, raw in enumerate(data.split(b"\n"), start=1):
            if not raw.strip():
                continue
            try:
                entry = json.loads(raw)
            except ValueError:
                problems.append(LedgerProblem("altered", f"{self.path.name} line {number} is not a ledger entry"))
                continue
            if not isinstance(entry, dict) or not verify_signature(_body(entry), entry.get("sig")):
                problems.append(LedgerProblem("altered", f"{self.path.name} line {number} does not verify "
                                                         "(edited, or not written by vacant)"))
                continue
            if entry.get("prev") != prev or entry.get("seq") != seq + 1:
                problems.append(LedgerProblem("altered", f"{self.path.name} line {number}: entry {entry.get('seq')} "
                                                         f"does not follow entry {seq} (removed, inserted or reordered)"))
            entries.append(entry)
            prev, seq = entry_hash(entry), int(entry.get("seq") or 0)
        anchor = self.anchor()
        if anchor is not None and (anchor.get("seq"), anchor.get("hash")) != (seq, prev):
            if int(anchor.get("seq") or 0) > seq:
                problems.append(LedgerProblem("cut", f"{self.path.name} ends at entry {seq} but {anchor.get('seq')} "
                                                     "were written (entries were removed, or the file deleted)"))
            else:
                problems.append(LedgerProblem("altered", f"{self.path.name} does not end where vacant left it "
                                                         f"(entry {seq}, anchored {anchor.get('seq')})"))
        return entries, problems

    # -- writing ---------------------------------------------------------------------------------

    def append(self, fields: dict[str, Any]) -> dict[str, Any]:
        """Append one signed entry (the caller holds whatever lock orders its writers)."""
        entries, _problems = self.read()
        tip = entries[-1] if entries else None
        anchored = int((self.anchor() or {}).get("seq") or 0)  # a cut ledger never heals by appending
        seq = max(int(tip["seq"]) if tip else 0, anchored) + 1
        entry = {"seq": seq, "prev": entry_hash(tip) if tip else GENESIS, **fields}
        entry["sig"] = sign(_body(entry))
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps(entry, sort_keys=True, ensure_ascii=False).encode("utf-8", "surrogateescape") + b"\n"
        with tally.held(self.root):  # the append and its note in the record's tally, seen together
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, line)
            finally:
                os.close(fd)
            self._set_anchor(entry["seq"], entry_hash(entry))
            tally.note_ledger(self.root, self.path.parent.parent, self.name)
        return entry


    def restart(self) -> Path | None:
        """Set a broken ledger aside (kept as evidence, never deleted) and start a new one. Only a
        person's own command calls this, after voiding what the broken ledger vouched for."""
        aside = None
        with tally.held(self.root):
            if self.path.exists():
                aside = self.path.with_name(f"{self.path.stem}.broken-{time.time_ns()}{self.path.suffix}")
                os.rename(self.path, aside)
            self._set_anchor(0, GENESIS)
            tally.note_ledger(self.root, self.path.parent.parent, self.name)
        return aside


def _body(entry: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in entry.items() if key != "sig"}
