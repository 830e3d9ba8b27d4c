"""A contract the agent changed is a question for the person: the checks and guards of vacant.toml
an agent's step added, edited or removed during the run.

The run's recorded states say who last wrote each item: a change of vacant.toml made by an agent's
step (any step but an out-of-band change set, which is the person's: their editor, their own
`vacant contract add` at a terminal) makes the item as it then stands a proposal. An item whose
last writer was the person, or that is as it was at the baseline, is nobody's question. Until the
person accepts a proposal (asks/questions.py), the Stop runs the contract as the person set it:
an added item does not run, an edited or removed one runs as it was at the baseline.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from vacant.attribute.replay import Timeline
from vacant.policy.contract.contract import CHECK_TABLES, CONTRACT_FILE, Check, Contract
from vacant.store.objects import ObjectStore
from vacant.store.run import RunView

PERSON = "person"  # an out-of-band change set: the person's own edit
Items = dict[str, tuple[str, dict[str, Any]]]  # name -> (its table, the item as written)


class Proposal(NamedTuple):
    """One check or guard as an agent's step left it, against the person's version at the baseline."""

    name: str
    change: str  # added, edited, removed
    table: str | None  # where the agent put it (None: removed)
    item: dict[str, Any] | None  # as the agent wrote it (None: removed)
    baseline_table: str | None  # where the person had it (None: added)
    baseline: dict[str, Any] | None  # as the person had it (None: added)
    step: int | None  # the agent's step that last wrote it

    def facts(self) -> list[Any]:
        """What the person's answer is about: this exact change (and nothing else)."""
        return [self.name, self.table, self.item, self.baseline_table, self.baseline]

    def describe(self) -> str:
        where = f" at step {self.step}" if self.step is not None else ""
        kind = (self.table or self.baseline_table or "check").rstrip("s")
        return f"{self.change} {kind} {self.name!r} in {CONTRACT_FILE}{where}"


def items_of(text: bytes | None) -> Items | None:
    """The checks and guards of one vacant.toml, by name (None: absent or not TOML)."""
    if text is None:
        return {}
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    try:
        raw = tomllib.loads(text.decode("utf-8", errors="replace"))
    except ValueError:
        return None
    found: Items = {}
    for table in CHECK_TABLES:
        entries = raw.get(table, [])
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, dict) and isinstance(entry.get("name"), str):
                found.setdefault(entry["name"], (table, entry))
    return found


def of_run(view: RunView, timeline: Timeline, store: ObjectStore) -> list[Proposal]:
    """Each item that differs from the baseline and whose last writer was an agent's step."""
    baseline = items_of(timeline.content(store, 0, CONTRACT_FILE)) or {}
    current: Items = dict(baseline)
    writer: dict[str, int | str | None] = {}  # name -> its last writer: an agent's step, PERSON, None (not known)
    for index in range(1, timeline.last + 1):
        change = timeline.change(index)
        if CONTRACT_FILE not in (*change["added"], *change["changed"], *change["removed"]):
            continue
        items = items_of(timeline.content(store, index, CONTRACT_FILE))
        if items is None:  # not TOML there: the Stop says so (contract_error); nothing to compare
            continue
        step = view.steps.get(change.get("step"))
        for name in set(items) | set(current):
            if items.get(name) != current.get(name):
                writer[name] = PERSON if step is not None and step.out_of_band else (step.number if step else None)
        current = items
    return [_proposal(name, current.get(name), baseline.get(name), writer[name])  # type: ignore[arg-type]
            for name in sorted(writer) if writer[name] != PERSON and current.get(name) != baseline.get(name)]


def _proposal(name: str, now: tuple[str, dict[str, Any]] | None, before: tuple[str, dict[str, Any]] | None,
              step: int | None) -> Proposal:
    change = "added" if before is None else "removed" if now is None else "edited"
    return Proposal(name, change, now[0] if now else None, now[1] if now else None,
                    before[0] if before else None, before[1] if before else None, step)


def as_person_set(contract: Contract, pending: list[Proposal]) -> Contract:
    """The contract with each proposal not (yet) accepted put back as the person had it."""
    if not pending:
        return contract
    names = {proposal.name for proposal in pending}
    tables: dict[str, list[Check]] = {table: [item for item in getattr(contract, table) if item.name not in names]
                                      for table in CHECK_TABLES}
    for proposal in pending:
        if proposal.baseline is not None and proposal.baseline_table in tables:
            try:
                tables[proposal.baseline_table].append(Check(**proposal.baseline))
            except ValueError:  # the person's own item did not read: it did not run at the baseline either
                continue
    return contract.model_copy(update=tables)


def toml_of(table: str | None, item: dict[str, Any] | None) -> str | None:
    """The item as a TOML table, to show the person (None: there is none)."""
    if item is None or table is None:
        return None
    lines = [f"[[{table}]]"]
    for key, value in item.items():
        if isinstance(value, (str, int, float, bool)):
            lines.append(f"{key} = {_toml_value(value)}")
    return "\n".join(lines)


def _toml_value(value: str | int | float | bool) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        import json

        return json.dumps(value)
    return repr(value)
