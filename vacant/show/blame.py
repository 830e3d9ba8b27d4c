"""`vacant blame`: for every line of a file as it is now, the recorded step that last wrote it.

Authorship is carried along the file's versions: the baseline of the first run considered, then
the file after each recorded change to it, then the file as it is now, by vacant.core.linecarry
(the one algorithm `vacant blame --team` also runs, on line hashes): between two versions a line
diff (difflib, no junk heuristic) keeps the author of every unchanged line; a line that the diff
sees deleted in one place and inserted in another (moved) keeps its author too: it is matched by
exact text to a removed line, the nearest one by position, the rule flags follow when their lines
move (vacant.policy.contract.flags.nearest_block). Every other new line is the changing step's.

Origins: `step` (a recorded tool step), `group` (a change seen while several steps were open: the
owner is unknown, `open_steps` lists them), `out_of_band` (an out-of-band change set recorded
inside a run), `baseline` (there at the first considered run's start), `outside` (written when no
considered run was recording: between runs, or after the last), `unknown` (a version of the file
was over the object-store cap, so the lines it brought cannot be told apart).

Lines are compared without their whitespace (vacant.core.linecarry.line_item, git blame's `-w`):
a re-indented line keeps its author. Within a run, a line written back to the text the run's
baseline had (a revert) is not the writing step's: it keeps the author it had at the baseline.

Renames: a file git follows through renames (`git log --follow -M`, as `git blame` does; a staged
`git mv` too) is read, in each run, under the names it may have had when that run started (a
rename the run's starting commit already held is not undone), so the agent's lines survive a
person's rename, and a new file later written under the old name lends the renamed one nothing.

Limits: a line is text split on '\\n' (undecodable bytes replaced). Identical lines are told apart
by the diff's alignment only. A step that deletes a line and another step that writes the same
text back: the later step is the author (it wrote the line that stands).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vacant.core.linecarry import Carried, NamesFor, Origins, author_label, line_item, text_lines
from vacant.core.locations import STATE_DIR_NAME, WorkspaceError, state_dir
from vacant.policy.contract.flags import nearest_block, standing_flags
from vacant.store.loaded import (
    LoadedRun,
    Unrestorable,
    file_bytes,
    load_run,
    path_entries,
)


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
        return {"origin": self.origin, "run": self.run, "step": self.step, "tool": self.tool, "actor": self.actor,
                "agent_id": self.agent_id, "open_steps": list(self.open_steps)}

    def label(self) -> str:
        return author_label(self.origin, self.run, self.step, self.tool, self.actor, self.open_steps, "over size cap")


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
    starts: dict[str, str | None] = field(default_factory=dict)  # run -> HEAD when it started

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "runs": self.runs, "lines": [line.to_json() for line in self.lines]}


BASELINE = Author("baseline")
OUTSIDE = Author("outside")
UNKNOWN = Author("unknown")


def step_author(run: LoadedRun, change: dict[str, Any]) -> Author:
    owner = run.view.steps.get(change["step"]) if change["step"] is not None else None
    if owner is None:
        return Author("group", run.id, open_steps=tuple(change.get("open_steps") or ()))
    if owner.out_of_band:
        return Author("out_of_band", run.id, owner.number, owner.tool)
    return Author("step", run.id, owner.number, owner.tool, owner.actor, owner.agent_id)


def path_versions(run: LoadedRun, path: str) -> list[tuple[list[str] | None, Author | None]]:
    """The path's versions along one run, as `Carried.advance` takes them: its lines (None when the
    store did not keep that version) and who made it (None for the baseline)."""
    found: list[tuple[list[str] | None, Author | None]] = []
    for change, entry in path_entries(run, path):
        try:
            lines: list[str] | None = [line_item(text) for text in text_lines(file_bytes(run.store, entry))]
        except Unrestorable:
            lines = None
        found.append((lines, None if change is None else step_author(run, change)))
    return found


def walk() -> Carried[str, Author]:
    return Carried(Origins(BASELINE, OUTSIDE, UNKNOWN))


def recorded(run: LoadedRun, path: str) -> bool:
    """Whether the run knew `path`: there at its start, or changed by it."""
    return path in run.baseline or any(path in change[kind] for change in run.changes
                                       for kind in ("added", "changed", "removed"))


def blame_file(root: Path, path: str, run_dirs: list[Path], content: bytes | None = None,
               names_for: NamesFor | None = None) -> Blame:
    """Blame the workspace file `path` (workspace-relative) over the runs `run_dirs`, in order;
    `content`: the file's bytes to blame (default: as it is now in the workspace). `names_for`:
    the names the file may have had when a run started at a commit, oldest first and `path` last
    (git's renames, vacant.show.gitblame.name_at_start): a run is read under the ones it recorded,
    so a file renamed after the run keeps the run's lines."""
    current = text_lines((Path(root) / path).read_bytes() if content is None else content)
    carried = walk()
    reports = []
    starts: dict[str, str | None] = {}
    for run_dir in run_dirs:
        run = load_run(root, run_dir)
        starts[run.id] = run.start().get("commit")
        names = names_for(starts[run.id]) if names_for is not None else [path]
        for name in [name for name in names if recorded(run, name)] or [path]:
            for lines, author in path_versions(run, name):
                carried.advance(lines, author)
        report = run.latest_report()
        if report:
            reports.append(report)
    authors = carried.finish([line_item(text) for text in current])
    marks = finding_marks(root, path, current, reports)
    rows = [BlameLine(n, text, author, marks.get(n, [])) for n, (text, author) in enumerate(zip(current, authors), 1)]
    return Blame(path, [run_dir.name for run_dir in run_dirs], rows, starts)


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


def named_path(root: Path, raw: str, cwd: Path) -> str:
    """The workspace-relative posix path of a file named for a commit (it need not exist now)."""
    root = Path(root).resolve()
    candidate = Path(os.path.normpath(Path(raw) if Path(raw).is_absolute() else Path(cwd).resolve() / raw))
    if root not in candidate.parents:
        raise WorkspaceError(f"{raw} is outside the workspace {root}: blame names a file inside it")
    rel = candidate.relative_to(root)
    if rel.parts[0] in (STATE_DIR_NAME, ".git"):
        raise WorkspaceError(f"{raw} is vacant's or git's own state: blame a file of the work")
    return rel.as_posix()
