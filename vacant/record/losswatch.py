"""The record's losses, watched at every hook call (vacant/core/tally.py holds the tally).

The recorder hands each call's run.json bytes here under the workspace lock: `check` compares the
record with the tally and returns what was lost (the ledgers reset or cut, a run deleted, this
run's run.json edited or gone, the tally itself gone or edited). While anything is lost, an ACT
call is denied naming it (`held`), the call that first sees it and the run's Stop say it to the
person, and the step log holds a `record_problem` event (kind `record-lost`) for the Stop's report. A workspace whose
install record has no `tally` (installed before it) is not watched until the person runs
`vacant init` again. Stdlib only (hot path).
"""

from __future__ import annotations

from vacant.core import tally

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hook path
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

LOST = "record-lost"  # the kind of the record_problem event, and of the report's record problem
HELD = ("Not run: vacant's record of this workspace was changed by something other than vacant: {what}. "
        "An action that needs the person's answer cannot be checked against a record that lost what the "
        "person decided, so nothing that acts runs until the person looks (`vacant doctor` names it; "
        "`vacant init` again accepts the record as it is).")
SAID = "vacant: the record of this workspace lost something since vacant last wrote it: {what} (`vacant doctor`)."


class LossWatch:
    """One call's view of the record's tally: checked once (`check`), noted after the save."""

    def __init__(self, root: Path, state: Path, install: dict[str, Any] | None) -> None:
        self.root, self.state = root, state
        self.watched = bool((install or {}).get("tally"))
        self.key: bytes | None = None
        self.data: dict[str, Any] | None = None
        self.losses: list[str] = []

    def check(self, run_name: str, run_raw: bytes | None) -> list[str]:
        """Every loss of the record (empty when nothing is lost, or the workspace is not watched)."""
        if not self.watched:
            return []
        try:
            self.key = tally.person_key()
        except tally.NoKey as error:
            self.losses = [f"the person's key cannot be read ({error}), so the record cannot be checked"]
            return self.losses
        self.losses, self.data = tally.check(self.root, self.state, self.key, run_name, run_raw)
        return self.losses

    def run_bytes(self, run: dict[str, Any]) -> bytes | None:
        """run.json's bytes, sealed with the key when watched (None: write it plain)."""
        return tally.sealed_json(run, self.key) if self.key is not None and self.watched else None

    def saved(self, run_name: str) -> None:
        """After run.json was written: the run registered and runs/ as it is now."""
        if self.key is not None and self.data is not None:
            tally.note_runs(self.root, self.state, self.data, self.key, run_name)

    def held(self) -> str | None:
        """The deny reason for an ACT call while anything is lost, else None."""
        return HELD.format(what="; ".join(self.losses)) if self.losses else None

    def said(self, losses: list[str]) -> str:
        return SAID.format(what="; ".join(losses))
