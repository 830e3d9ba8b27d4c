"""Who wrote each line of the files a run changed, at the run's final recorded state.

Each file's versions are followed through the run's change records in order by the walk
`vacant blame` runs (vacant.core.linecarry.Carried, the one algorithm for both, with blame's line
numbering and its whitespace-blind comparison): lines a change keeps, re-indents or moves keep
their author, lines it inserts or replaces belong to the change's step (or to nobody known, for a
change seen while several steps were open), and a line written back to the text the baseline had
is the baseline's. Lines that were there at the baseline have no author here.

Limits: text files only (a NUL byte in the first 8 KiB, or content above the object-store cap,
skips the file, with the reason).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vacant.core.linecarry import Carried, Origins, line_item, text_lines
from vacant.export.model import Change, RunModel
from vacant.store.objects import ObjectStore
from vacant.store.states import load_manifest

GROUP = -1  # the author of a line written while several steps were open (owner unknown)
BINARY_PROBE = 8192


@dataclass(frozen=True)
class Span:
    """Lines start..end (1-based, inclusive) of the final text, all written by `step`."""
    start: int
    end: int
    step: int  # a step number, or GROUP
    text: str  # those lines, newline-joined (for a content hash; never exported as such)


@dataclass(frozen=True)
class FileAuthors:
    path: str
    spans: list[Span]


@dataclass(frozen=True)
class Skipped:
    path: str
    why: str


def authors(model: RunModel, store: ObjectStore) -> tuple[list[FileAuthors], list[Skipped]]:
    """Line authors of every file the run left changed and present at its end."""
    manifest = load_manifest(store, model.baseline)
    lines: dict[str, list[tuple[str, int | None]]] = {}
    walks: dict[str, Carried[str, int | None]] = {}
    skipped: dict[str, str] = {}
    for step, change in _changes_in_order(model):
        for rel in change.removed:  # gone: a later version starts from nothing
            lines.pop(rel, None)
            skipped.pop(rel, None)
            walks.setdefault(rel, _walk(b"")).advance([], step)
        for rel in (*change.added, *change.changed):
            if rel in skipped:
                continue
            text, why = _text(store, change.entries.get(rel))
            if text is None:
                lines.pop(rel, None)
                if why:
                    skipped[rel] = why
                continue
            if rel not in walks:
                walks[rel] = _walk(_text(store, manifest.get(rel))[0])
            after = text_lines(text)
            walks[rel].advance([line_item(line) for line in after], step)
            lines[rel] = list(zip(after, walks[rel].authors))
    found = [FileAuthors(rel, _spans(owned)) for rel, owned in sorted(lines.items())]
    return [f for f in found if f.spans], [Skipped(rel, why) for rel, why in sorted(skipped.items())]


def _changes_in_order(model: RunModel) -> list[tuple[int, Change]]:
    """(owner step or GROUP, change) for every change record, in log order."""
    items = [(call.step, change) for call in model.calls.values() for change in call.changes]
    items += [(GROUP, change) for change in model.group_changes]
    return sorted(items, key=lambda item: item[1].seq)


def _text(store: ObjectStore, entry: tuple[Any, ...] | list[Any] | None) -> tuple[bytes | None, str | None]:
    if not entry or entry[0] != "f":
        return None, None
    if not store.has(entry[3]):
        return None, "content above the object-store cap was not kept"
    data = store.get(entry[3])
    if b"\0" in data[:BINARY_PROBE]:
        return None, "binary file"
    return data, None


def _walk(baseline: bytes | None) -> Carried[str, int | None]:
    """`vacant blame`'s walk over one run (vacant.core.linecarry), from the file at the baseline:
    whatever was there has no author (None)."""
    walk: Carried[str, int | None] = Carried(Origins(None, None, None))
    walk.advance([line_item(line) for line in text_lines(baseline)], None)
    return walk


def _spans(owned: list[tuple[str, int | None]]) -> list[Span]:
    spans: list[Span] = []
    run_start = 0
    for index in range(1, len(owned) + 1):
        if index == len(owned) or owned[index][1] != owned[run_start][1]:
            owner = owned[run_start][1]
            if owner is not None:
                text = "\n".join(line for line, _ in owned[run_start:index])
                spans.append(Span(run_start + 1, index, owner, text))
            run_start = index
    return spans
