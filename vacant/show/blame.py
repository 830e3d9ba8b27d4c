"""`vacant blame`: for every line of a file as it is now, the recorded step that last wrote it.

Authorship is carried along the file's versions: the baseline of the first run considered, then
the file after each recorded change to it, then the file as it is now. Between two versions a line
diff (difflib, no junk heuristic) keeps the author of every unchanged line; a line that the diff
sees deleted in one place and inserted in another (moved) keeps its author too: it is matched by
exact text to a removed line, the nearest one by position, the rule flags follow when their lines
move (vacant.flags.nearest_block). Every other new line is the changing step's.

Origins: `step` (a recorded tool step), `group` (a change seen while several steps were open: the
owner is unknown, `open_steps` lists them), `out_of_band` (an out-of-band change set recorded
inside a run), `baseline` (there at the first considered run's start), `outside` (written when no
considered run was recording: between runs, or after the last), `unknown` (a version of the file
was over the object-store cap, so the lines it brought cannot be told apart).

Limits: a line is text split on '\\n' (undecodable bytes replaced). Identical lines are told apart
by the diff's alignment only. A step that deletes a line and another step that writes the same
text back: the later step is the author (it wrote the line that stands).
"""

from __future__ import annotations

import difflib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from vacant.core.findings import split_lines
from vacant.core.locations import STATE_DIR_NAME, WorkspaceError, state_dir
from vacant.policy.flags import nearest_block, standing_flags
from vacant.show.loaded import (
    LoadedRun,
    Unrestorable,
    file_bytes,
    load_run,
    path_entries,
)

ORIGINS = ("step", "group", "out_of_band", "baseline", "outside", "unknown")


@dataclass(frozen=True)
class Author:
    origin: str
    run: str | None = None
    step: int | None = None
    tool: str | None = None
    actor: dict[str, Any] | None = field(default=None, compare=False, hash=False)
    agent_id: str | None = None
    open_steps: tuple[int, ...] = ()

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["open_steps"] = list(self.open_steps)
        return data

    def label(self) -> str:
        if self.origin == "step":
            who = "/".join(str((self.actor or {}).get(k) or "?") for k in ("agent_definition", "model"))
            return f"{(self.run or '')[:8]} step {self.step} {self.tool} {who}"
        if self.origin == "group":
            return f"{(self.run or '')[:8]} one of steps {','.join(map(str, self.open_steps))}"
        if self.origin == "out_of_band":
            return f"{(self.run or '')[:8]} out-of-band (step {self.step})"
        return {"baseline": "baseline", "outside": "outside any run", "unknown": "unknown (over size cap)"}[self.origin]


@dataclass
class BlameLine:
    line: int
    text: str
    author: Author
    findings: list[str]

    def to_json(self) -> dict[str, Any]:
        return {"line": self.line, "text": self.text, **self.author.to_json(), "findings": self.findings}


@dataclass
class Blame:
    path: str
    runs: list[str]
    lines: list[BlameLine]

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "runs": self.runs, "lines": [line.to_json() for line in self.lines]}


BASELINE = Author("baseline")
OUTSIDE = Author("outside")
UNKNOWN = Author("unknown")


def carry(old: list[str], authors: list[Author], new: list[str], author: Author) -> list[Author]:
    """The authors of `new`'s lines: kept for unchanged and moved lines, `author` for the rest."""
    if old == new:
        return list(authors)
    # an edit is usually local: the common head and tail are kept as they are, and only the
    # middle goes through the (quadratic at worst) matcher
    head, limit = 0, min(len(old), len(new))
    while head < limit and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < limit - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    result: list[Author | None] = [None] * len(new)
    result[:head] = authors[:head]
    if tail:
        result[len(new) - tail:] = authors[len(old) - tail:]
    matcher = difflib.SequenceMatcher(None, old[head:len(old) - tail], new[head:len(new) - tail], autojunk=False)
    removed: dict[str, list[int]] = {}
    inserted: list[int] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        i1, i2, j1, j2 = i1 + head, i2 + head, j1 + head, j2 + head
        if tag == "equal":
            result[j1:j2] = authors[i1:i2]
            continue
        for i in range(i1, i2):
            removed.setdefault(old[i], []).append(i)
        inserted.extend(range(j1, j2))
    for j in inserted:
        candidates = removed.get(new[j])
        if candidates:  # moved: the nearest removed copy of the same text (as flags relocate)
            best = min(candidates, key=lambda i: (abs(i - j), i))
            candidates.remove(best)
            result[j] = authors[best]
        else:
            result[j] = author
    return [item if item is not None else author for item in result]


def step_author(run: LoadedRun, change: dict[str, Any]) -> Author:
    owner = run.view.steps.get(change["step"]) if change["step"] is not None else None
    if owner is None:
        return Author("group", run.id, open_steps=tuple(change.get("open_steps") or ()))
    if owner.out_of_band:
        return Author("out_of_band", run.id, owner.number, owner.tool)
    return Author("step", run.id, owner.number, owner.tool, owner.actor, owner.agent_id)


def _lines(data: bytes | None) -> list[str]:
    """As vacant.findings.split_lines, with a fast path for text without carriage returns."""
    if not data:
        return []
    text = data.decode("utf-8", errors="replace")
    if "\r" in text:
        return split_lines(text)
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def blame_run(run: LoadedRun, path: str, lines: list[str] | None, authors: list[Author],
              gap: bool = False) -> tuple[list[str], list[Author], bool]:
    """Carry authorship through one run. `lines` None: this is the first run considered (its
    baseline lines are `baseline`); else the file as the previous run considered left it. After a
    version the store did not keep (`gap`), the next version's lines are all `unknown`."""
    first = lines is None
    for change, entry in path_entries(run, path):
        try:
            new = _lines(file_bytes(run.store, entry))
        except Unrestorable:
            lines, authors, gap = [], [], True
            continue
        if gap:
            authors = [UNKNOWN] * len(new)
        elif change is None:
            authors = [BASELINE] * len(new) if first else carry(lines or [], authors, new, OUTSIDE)
        else:
            authors = carry(lines or [], authors, new, step_author(run, change))
        lines, gap = new, False
    return lines or [], authors, gap


def blame_file(root: Path, path: str, run_dirs: list[Path]) -> Blame:
    """Blame the workspace file `path` (workspace-relative) over the runs `run_dirs`, in order."""
    current_bytes = (Path(root) / path).read_bytes()
    lines: list[str] | None = None
    authors: list[Author] = []
    gap = False
    reports = []
    for run_dir in run_dirs:
        run = load_run(root, run_dir)
        lines, authors, gap = blame_run(run, path, lines, authors, gap)
        report = run.latest_report()
        if report:
            reports.append(report)
    current = _lines(current_bytes)
    if gap:
        authors = [UNKNOWN] * len(current)
    else:
        authors = carry(lines, authors, current, OUTSIDE) if lines is not None else [OUTSIDE] * len(current)
    marks = finding_marks(root, path, current, reports)
    rows = [BlameLine(n, text, author, marks.get(n, [])) for n, (text, author) in enumerate(zip(current, authors), 1)]
    return Blame(path, [run_dir.name for run_dir in run_dirs], rows)


def finding_marks(root: Path, path: str, current: list[str], reports: list[dict[str, Any]]) -> dict[int, list[str]]:
    """Line -> ids of the findings standing on it now: each report finding on this file found
    again by its exact text (nearest its recorded line), and each standing human flag."""
    marks: dict[int, list[str]] = {}
    seen: set[str] = set()
    for report in reports:
        for item in report.get("findings", []):
            if item.get("path") != path or not item.get("text") or item["id"] in seen:
                continue
            index = nearest_block(current, [item["text"]], item.get("line") or 1)
            if index is not None:
                seen.add(item["id"])
                marks.setdefault(index + 1, []).append(item["id"])
    for flag, finding in standing_flags(root):
        if flag.path != path or finding.id in seen or finding.line is None:
            continue
        seen.add(finding.id)
        for line in range(finding.line, finding.line + flag.end - flag.start + 1):
            marks.setdefault(line, []).append(finding.id)
    return marks


def workspace_path(root: Path, raw: str, cwd: Path) -> str:
    """The workspace-relative posix path of a file named on the command line."""
    root = Path(root).resolve()
    candidate = (Path(raw) if Path(raw).is_absolute() else Path(cwd) / raw)
    try:
        real = candidate.resolve(strict=True)
    except (OSError, RuntimeError):
        raise WorkspaceError(f"no such file: {raw}") from None
    if not (real == root or root in real.parents):
        raise WorkspaceError(f"{raw} is outside the workspace {root}: blame names a file inside it")
    if not real.is_file():
        raise WorkspaceError(f"{raw} is not a regular file: blame reads the lines of a file")
    rel = real.relative_to(root)
    if rel.parts[0] in (STATE_DIR_NAME, ".git") or state_dir(root).resolve() in real.parents:
        raise WorkspaceError(f"{raw} is vacant's or git's own state: blame a file of the work")
    return rel.as_posix()


def render(blame: Blame) -> str:
    width = max((len(line.author.label()) for line in blame.lines), default=0)
    digits = len(str(len(blame.lines)))
    out = []
    for line in blame.lines:
        marks = f" [{','.join(line.findings)}]" if line.findings else ""
        out.append(f"{line.author.label():<{width}} {line.line:>{digits}}) {line.text}{marks}")
    return "\n".join(out)
