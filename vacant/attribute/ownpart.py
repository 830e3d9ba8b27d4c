"""The part of a recorded change a step's own write accounts for, file by file.

A step's own write is what re-running its command on the state before it wrote (a shell step:
vacant/attribute/rerun.py), or what its input says it wrote (a file tool:
vacant/attribute/toolwrites.py). Each file the recorded change touched is one of:

* `same`: the own write is the recorded file, byte for byte (or but for line endings);
* `foreign`: the own write left the file as it was before the step, yet it changed: someone else
  changed it;
* `split`: the recorded file is the own write plus lines the own write never wrote (someone
  else's lines, next to the step's own): the recorded text, diffed against the own write, differs
  only in lines the own write did not write;
* `clash`: the recorded file and the own write differ inside lines the own write wrote: a command
  whose output varies (a date, a random value), or another writer on the same lines. Which of
  them wrote the recorded text there is not known.

A file that is not UTF-8 text is compared whole: `same`, `foreign`, or else `clash`.
"""

from __future__ import annotations

import difflib

from vacant.core.findings import split_lines

SAME, FOREIGN, SPLIT, CLASH = "same", "foreign", "split", "clash"


def same_bytes(a: bytes | None, b: bytes | None) -> bool:
    """Equal, or equal once CRLF line endings are read as LF (an editor tool may keep a file's)."""
    if a is None or b is None:
        return a is b
    return a == b or a.replace(b"\r\n", b"\n") == b.replace(b"\r\n", b"\n")


def compare(before: bytes | None, recorded: bytes | None, own: bytes | None) -> str:
    """How the recorded content of one file relates to the step's own write of it (module
    docstring); None is a file that is not there."""
    if same_bytes(own, recorded):
        return SAME
    if same_bytes(own, before):
        return FOREIGN
    lines = [_lines(data) for data in (before, recorded, own)]
    if any(text is None for text in lines):
        return CLASH
    old, new, mine = lines
    assert old is not None and new is not None and mine is not None
    return SPLIT if not _touches(_written(old, mine), mine, new) else CLASH


def _lines(data: bytes | None) -> list[str] | None:
    """The file's lines, [] for a file that is not there, None for one that is not UTF-8 text."""
    if data is None:
        return []
    try:
        return split_lines(data.decode("utf-8"))
    except UnicodeDecodeError:
        return None


def _written(before: list[str], own: list[str]) -> set[int]:
    """The indexes of the own write's lines that are not lines of `before` (what it wrote)."""
    written: set[int] = set()
    for tag, _i1, _i2, j1, j2 in difflib.SequenceMatcher(a=before, b=own, autojunk=False).get_opcodes():
        if tag != "equal":
            written.update(range(j1, j2))
    return written


def _touches(written: set[int], own: list[str], recorded: list[str]) -> bool:
    """Whether the recorded text differs from the own write inside a line the own write wrote
    (replaced or dropped there); a line inserted next to one is someone else's line, not a clash."""
    for tag, i1, i2, _j1, _j2 in difflib.SequenceMatcher(a=own, b=recorded, autojunk=False).get_opcodes():
        if tag in ("replace", "delete") and written.intersection(range(i1, i2)):
            return True
    return False


def has_line(content: bytes | None, text: str) -> bool:
    """Whether a file holds a line whose text (outer whitespace stripped) is `text`'s: a located
    finding's id is its check, its path and that text (vacant/core/findings.py), so a state
    whose file holds no such line cannot show the finding."""
    if content is None:
        return False
    wanted = text.strip()
    return any(line.strip() == wanted for line in split_lines(content.decode("utf-8", "replace")))
