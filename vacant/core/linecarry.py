"""Line authorship carried from one version of a file to the next: the one algorithm behind
`vacant blame` (on the lines' text, vacant/show/blame.py) and `vacant blame --team` (on keyed line
hashes from the shared run records, vacant/share/teamblame.py), so both say the same thing.

Items are any hashable values compared by equality only (text lines, or line hashes): the result
depends only on which items are equal, so a sequence of hashes gives the same authors as the
text it was made from (up to a hash collision).

Items are compared as `line_item` makes them: a line without its whitespace (git blame's `-w`),
so a re-indented or re-wrapped-in-spaces line keeps its author.

Rules: between two versions a line diff (difflib, no junk heuristic) keeps the author of every
unchanged item; an item the diff sees deleted in one place and inserted in another (moved) keeps
its author too: it is matched to a removed equal item, the nearest one by position, the rule flags
follow when their lines move (vacant.policy.contract.flags.nearest_block). Within a run, an item a
recorded change writes that the run's baseline held and the run had removed (a revert to the
baseline's text) gets the author it had at the baseline back: it is not the change's. Every other
new item is the changing author's.

`Carried` walks a file through its versions: a run's baseline (no author: `baseline` for the
first run considered, else the change since the previous version is `outside`), then each
recorded change (its author), then the file as it is now (`outside`). A version whose content is
not known (None) makes the next known version's items all `unknown`.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, NamedTuple, TypeVar

from vacant.core.cells import shown
from vacant.core.findings import split_lines

# who wrote a line (docs/VIEW.md): a recorded step, one of several open steps, an out-of-band
# change set, there at the first run's start, written while no considered run recorded, or not known
ORIGINS = ("step", "group", "out_of_band", "baseline", "outside", "unknown")

# a run's starting commit (None: not known) -> the names the blamed file may have had when it ran,
# oldest first and its name now last (git's renames: vacant.show.gitblame.name_at_start)
NamesFor = Callable[[str | None], list[str]]



def author_label(origin: str, run: str | None, step: int | None, tool: str | None, actor: dict[str, Any] | None,
                 open_steps: tuple[int, ...], unknown: str) -> str:
    """How blame's text output names a line's author; `unknown` says why an `unknown` line is."""
    if origin == "step":
        who = "/".join(shown(actor, k) for k in ("agent_definition", "model"))
        return f"{(run or '')[:8]} step {step} {tool} {who}"
    if origin == "group":
        return f"{(run or '')[:8]} one of steps {','.join(map(str, open_steps))}"
    if origin == "out_of_band":
        return f"{(run or '')[:8]} out-of-band (step {step})"
    return {"baseline": "baseline", "outside": "outside any run", "unknown": f"unknown ({unknown})"}[origin]


# what `-w` ignores (git's isspace: space, tab, line feed, vertical tab, form feed, carriage return)
_WHITESPACE = str.maketrans("", "", " \t\n\v\f\r")


@functools.lru_cache(maxsize=1 << 16)  # a file's versions repeat most of its lines
def line_item(text: str) -> str:
    """What a line is compared as: its text without whitespace (git blame -w), so a change of
    indentation or spacing alone keeps the line's author."""
    return text.translate(_WHITESPACE)


A = TypeVar("A")
T = TypeVar("T", bound=Hashable)


class Opcode(NamedTuple):
    tag: str  # equal, replace, delete, insert (difflib's)
    i1: int
    i2: int
    j1: int
    j2: int


def opcodes(old: Sequence[T], new: Sequence[T]) -> list[Opcode]:
    """difflib's opcodes (autojunk off) for old -> new. An edit is usually local: the common head
    and tail are kept as they are, and only the middle goes through the (quadratic at worst)
    matcher."""
    head, limit = 0, min(len(old), len(new))
    while head < limit and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < limit - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    found = [Opcode("equal", 0, head, 0, head)] if head else []
    matcher = difflib.SequenceMatcher(None, old[head:len(old) - tail], new[head:len(new) - tail], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        found.append(Opcode(tag, i1 + head, i2 + head, j1 + head, j2 + head))
    if tail:
        found.append(Opcode("equal", len(old) - tail, len(old), len(new) - tail, len(new)))
    return found


def carry(old: Sequence[T], authors: Sequence[A], new: Sequence[T], author: A) -> list[A]:
    """The authors of `new`'s items: kept for unchanged and moved items, `author` for the rest."""
    return carry_detail(old, authors, new, author)[0]


_UNSET = object()


def carry_detail(old: Sequence[T], authors: Sequence[A], new: Sequence[T],
                 author: A) -> tuple[list[A], set[int], list[int]]:
    """`carry`, and what it did: the old positions kept (unchanged or moved) and the new
    positions given to `author`."""
    if list(old) == list(new):
        return list(authors), set(range(len(old))), []
    result: list[Any] = [_UNSET] * len(new)  # not None: None may be an author (no one, in an export)
    kept: set[int] = set()
    removed: dict[T, list[int]] = {}
    inserted: list[int] = []
    for tag, i1, i2, j1, j2 in opcodes(old, new):
        if tag == "equal":
            result[j1:j2] = authors[i1:i2]
            kept.update(range(i1, i2))
            continue
        for i in range(i1, i2):
            removed.setdefault(old[i], []).append(i)
        inserted.extend(range(j1, j2))
    fresh = []
    for j in inserted:
        candidates = removed.get(new[j])
        if candidates:  # moved: the nearest removed copy of the same item (as flags relocate)
            best = min(candidates, key=lambda i: (abs(i - j), i))
            candidates.remove(best)
            result[j] = authors[best]
            kept.add(best)
        else:
            result[j] = author
            fresh.append(j)
    return [author if item is _UNSET else item for item in result], kept, fresh


class Hunk(NamedTuple):
    """Items old[start:end] replaced by `items` (positions in the old version)."""
    start: int
    end: int
    items: list[Any]


def hunks(old: Sequence[T], new: Sequence[T]) -> list[Hunk]:
    """An edit script turning old into new (sorted, non-overlapping, old positions)."""
    return [Hunk(op.i1, op.i2, list(new[op.j1:op.j2])) for op in opcodes(old, new) if op.tag != "equal"]


def apply_hunks(old: Sequence[T], script: Sequence[Hunk]) -> list[T] | None:
    """`old` with the hunks applied; None when they are not sorted, overlap, or fall outside it
    (a script that does not fit the version it claims to edit)."""
    out: list[T] = []
    at = 0
    for start, end, items in script:
        if not at <= start <= end <= len(old):
            return None
        out += old[at:start]
        out += items
        at = end
    return out + list(old[at:])


def text_lines(data: bytes | None) -> list[str]:
    """A file's lines as blame numbers them: UTF-8 (undecodable bytes replaced), split as
    vacant.core.findings.split_lines, with a fast path for text without carriage returns."""
    if not data:
        return []
    text = data.decode("utf-8", errors="replace")
    if "\r" in text:
        return split_lines(text)
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


@dataclass(frozen=True)
class Origins(Generic[A]):
    """The authors a walk gives lines no recorded change explains."""
    baseline: A
    outside: A
    unknown: A


@dataclass
class Carried(Generic[T, A]):
    """A file walked through its versions: the items of the last one and their authors.

    Hand-over (`vacant blame --team`): when a run's baseline comes from another machine than the
    version before it, the two may have worked side by side, each from an older commit. Then the
    recorded authors of the items that baseline lacks are kept aside (`dropped`), and an item that
    later reappears with nobody's change (`outside`) gets its author back, the latest first: a
    line one machine wrote survives a merge with another machine's run. And an item the baseline
    has that a recorded change had removed (the other machine never saw that removal) gets back
    the author it had (`removed`). A walk over one machine's runs has no hand-over and is exactly
    local blame's."""
    origins: Origins[A]
    items: list[T] | None = None  # None: no version seen yet
    authors: list[A] = field(default_factory=list)
    gap: bool = False  # the last version's content was not known
    dropped: dict[T, list[A]] = field(default_factory=dict)
    removed: dict[T, list[A]] = field(default_factory=dict)
    base: dict[T, list[A]] = field(default_factory=dict)  # the current run's baseline: item -> authors


    def advance(self, new: Sequence[T] | None, author: A | None, handover: bool = False) -> None:
        """The next version: `new` None when its content is not known; `author` None for a run's
        baseline (the file as the run found it); `handover`: that baseline is another machine's."""
        if new is None:
            self.items, self.authors, self.gap, self.base = [], [], True, {}
            return
        if self.gap:
            authors = [self.origins.unknown] * len(new)
        elif author is None:
            authors = ([self.origins.baseline] * len(new) if self.items is None
                       else self._outside(self.items, self.authors, new, handover))
        else:
            old = self.items or []
            authors, kept, fresh = carry_detail(old, self.authors, new, author)
            for i, item in enumerate(old):
                if i not in kept:
                    self.removed.setdefault(item, []).append(self.authors[i])
            self._reverted(new, authors, fresh)
        if author is None:
            self.base = {}
            for item, who in zip(new, authors):
                self.base.setdefault(item, []).append(who)
        self.items, self.authors, self.gap = list(new), authors, False

    def _reverted(self, new: Sequence[T], authors: list[A], fresh: list[int]) -> None:
        """Fresh items the run's baseline held more often than the version still does (the run
        removed them, and a change wrote the same text back) get their baseline authors again."""
        wanted = {new[j] for j in fresh if new[j] in self.base}
        if not wanted:
            return
        mine = set(fresh)
        present: dict[T, int] = {}
        for j, item in enumerate(new):
            if item in wanted and j not in mine:
                present[item] = present.get(item, 0) + 1
        for j in fresh:
            had = self.base.get(new[j])
            count = present.get(new[j], 0)
            if had and count < len(had):
                authors[j] = had[count]
                present[new[j]] = count + 1

    def finish(self, current: Sequence[T]) -> list[A]:
        """The authors of the file as it is now (whatever changed since the last version: outside)."""
        if self.gap:
            return [self.origins.unknown] * len(current)
        if self.items is None:
            return [self.origins.outside] * len(current)
        return self._outside(self.items, self.authors, current, False)

    def _outside(self, old: list[T], authors: list[A], new: Sequence[T], handover: bool) -> list[A]:
        """A change nobody recorded: carried, with dropped authors given back to what reappears."""
        result, kept, fresh = carry_detail(old, authors, new, self.origins.outside)
        for j in fresh:
            waiting = (self.removed.get(new[j]) if handover else None) or self.dropped.get(new[j])
            if waiting:
                result[j] = waiting.pop()
        if handover:
            plain = (self.origins.baseline, self.origins.outside, self.origins.unknown)
            for i, item in enumerate(old):
                if i not in kept and authors[i] not in plain:
                    self.dropped.setdefault(item, []).append(authors[i])
        return result
