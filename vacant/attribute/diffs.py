"""The lines a step changed at a finding's location, as a short unified diff for people.

Rebuilt from the recorded states (the state before the change and after it), so it shows what
the step did even when a later step changed the file again. Bounded: a window of context around
the finding's line, at most MAX_LINES lines; binary or unrecorded content gives no diff.
"""

from __future__ import annotations

import difflib

from vacant.attribute.replay import Timeline
from vacant.store.objects import ObjectStore

CONTEXT = 2
MAX_LINES = 24


def _lines(data: bytes | None) -> list[str] | None:
    if data is None:
        return []
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", "replace").splitlines()


def step_diff(timeline: Timeline, store: ObjectStore, index: int | None, path: str | None,
              line: int | None) -> str | None:
    """The change at state `index` to `path`, the hunk holding `line` first (or the first hunks
    when the finding has no line); None when there is nothing to show."""
    if index is None or index < 1 or path is None:
        return None
    old = _lines(timeline.content(store, index - 1, path))
    new = _lines(timeline.content(store, index, path))
    if old is None or new is None or old == new:
        return None
    hunks = _hunks(old, new)
    if line is not None:
        hunks.sort(key=lambda hunk: 0 if hunk[0] <= line <= hunk[1] else 1)
    out = [f"--- {path} (before the step)", f"+++ {path} (after it)"]
    for _, _, text in hunks:
        out += text
        if len(out) >= MAX_LINES:
            return "\n".join(out[:MAX_LINES] + ["… (cut)"])
    return "\n".join(out)


def _hunks(old: list[str], new: list[str]) -> list[tuple[int, int, list[str]]]:
    """(first new line, last new line, unified lines) per hunk."""
    found = []
    for group in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_grouped_opcodes(CONTEXT):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        text = [f"@@ -{i1 + 1},{i2 - i1} +{j1 + 1},{j2 - j1} @@"]
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                text += [" " + s for s in old[a1:a2]]
                continue
            text += ["-" + s for s in old[a1:a2]] + ["+" + s for s in new[b1:b2]]
        found.append((j1 + 1, max(j2, j1 + 1), text))
    return found
