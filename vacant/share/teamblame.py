"""`vacant blame FILE --team`: for every line of FILE as it is now, the step that last wrote it,
from this machine's runs and the verified run records of the team (`vacant sync`).

Contract:
- Only runs that changed FILE are considered (a run record lists its changed paths), local and
  synced alike, oldest first by when they started (the recording machine's clock), then run id.
  A run known both here and from the team is read from here (the log is at least as far on).
- Machines work side by side: where a run's baseline comes from another source (this machine,
  or another signing key) than the run before it, the lines that baseline lacks keep their
  authors aside, and a line that comes back unchanged outside any run (a merge) gets its author
  back (vacant.core.linecarry.Carried). Runs of one source walk exactly as local blame does.
- Each considered run's versions of FILE are rebuilt as keyed line hashes (vacant/share/lines.py:
  local runs from the object store, synced ones from their records' edit scripts) and walked with
  the same algorithm as `vacant blame` (vacant.core.linecarry), so a fresh clone names the same
  step for each line as the machine that recorded it did over the same runs.
- A considered run without usable line data for FILE (a format 1 record, a path over the caps, a
  binary file, hashes keyed by another root commit, an edit script that does not fit) is blamed
  file-level: its steps that changed FILE are listed under `file_level`, and the lines after it
  that no later version explains are `unknown`, as local blame does after a version it lost.
- Records with a bad signature or an unknown key are not read at all (vacant/share/team.py), so
  they can explain no line.

JSON (`--json`): the shape is SHAPES["blame --team"] in vacant/show/shapes.py (docs/VIEW_JSON.md).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from vacant.core import events
from vacant.core.linecarry import (
    Carried,
    Hunk,
    NamesFor,
    Origins,
    apply_hunks,
    author_label,
    text_lines,
)
from vacant.core.locations import WorkspaceError
from vacant.share.gitstore import GitStore
from vacant.share.lines import digest_for, line_key
from vacant.share.publish import run_records as local_record
from vacant.share.records import MAX_VERSION_LINES, LineEdit, PathLines, RunRecord
from vacant.share.team import read_team, run_records


@dataclass(frozen=True)
class Source:
    """Where a run's record came from: this machine, or the team under a trusted key."""
    source: str
    key: str | None = None  # the signer's fingerprint (team)
    key_name: str | None = None  # its name in .vacant-team-keys


@dataclass(frozen=True)
class TeamAuthor:
    origin: str
    run: str | None = None
    step: int | None = None
    tool: str | None = None
    actor: dict[str, Any] | None = field(default=None, compare=False, hash=False)
    open_steps: tuple[int, ...] = ()
    source: Source | None = None

    def to_json(self) -> dict[str, Any]:
        where = self.source or Source("")
        return {"origin": self.origin, "run": self.run, "step": self.step, "tool": self.tool, "actor": self.actor,
                "open_steps": list(self.open_steps), "source": where.source or None, "key": where.key,
                "key_name": where.key_name}

    def label(self) -> str:
        """As local blame labels it, with the signing key's name for a team run: `[ann]`."""
        who = f" [{self.source.key_name or (self.source.key or '')[:8]}]" if self.source and self.source.key else ""
        return author_label(self.origin, self.run, self.step, self.tool, self.actor, self.open_steps,
                            "no line data") + who


BASELINE, OUTSIDE, UNKNOWN = TeamAuthor("baseline"), TeamAuthor("outside"), TeamAuthor("unknown")


@dataclass(frozen=True)
class Considered:
    record: RunRecord
    source: Source
    why: str | None  # null: line data used; else why the run is blamed file-level


@dataclass
class TeamBlame:
    path: str
    line_key: str | None
    considered: list[Considered]
    texts: list[str]
    authors: list[TeamAuthor]
    rejected: int
    findings: dict[int, list[str]] = field(default_factory=dict)  # line -> ids, filled by the caller

    def file_level(self) -> list[dict[str, Any]]:
        """The steps of runs blamed file-level that changed the path."""
        found = []
        for item in self.considered:
            if item.why is None:
                continue
            for step in item.record.steps:
                if self.path in step.changed:
                    author = step_author(item.record, item.source, step.n)
                    found.append({**author.to_json(), "why": item.why})
        return found

    def to_json(self) -> dict[str, Any]:
        runs = [{"run": c.record.run, "source": c.source.source, "key": c.source.key, "key_name": c.source.key_name,
                 "commit": c.record.commit, "started": c.record.started, "line_data": c.why is None, "why": c.why}
                for c in self.considered]
        lines = [{"line": n, "text": text, **author.to_json(), "findings": self.findings.get(n, [])}
                 for n, (text, author) in enumerate(zip(self.texts, self.authors), start=1)]
        return {"path": self.path, "line_key": self.line_key, "runs": runs, "lines": lines,
                "file_level": self.file_level(), "rejected": self.rejected}


def step_author(record: RunRecord, source: Source, step: int | None, open_steps: list[int] | None = None) -> TeamAuthor:
    """Who made a change of `record`, as vacant.show.blame.step_author names it."""
    entry = next((s for s in record.steps if s.n == step), None) if step is not None else None
    if entry is None:
        return TeamAuthor("group", record.run, open_steps=tuple(open_steps or ()), source=source)
    if entry.tool == "oob":
        return TeamAuthor("out_of_band", record.run, entry.n, entry.tool, source=source)
    actor = asdict(record.cells[entry.cell]) if entry.cell is not None and entry.cell < len(record.cells) else None
    return TeamAuthor("step", record.run, entry.n, entry.tool, actor, source=source)


def versions(item: Considered, lines: PathLines, base: list[str] | None) -> list[tuple[list[str] | None, TeamAuthor | None]]:
    """The path's versions along one run, rebuilt from its line data and its baseline's hashes:
    (hashes or None when not kept, who made it or None for the baseline)."""
    found: list[tuple[list[str] | None, TeamAuthor | None]] = [(base, None)]
    previous: list[str] = base or []
    for edit in lines.edits:
        new = _rebuild(previous, edit)
        found.append((new, step_author(item.record, item.source, edit.step, edit.open_steps)))
        previous = new or []
    return found


def _rebuild(previous: list[str], edit: LineEdit) -> list[str] | None:
    """The next version's hashes; None when not kept, or when the script does not fit (then the
    run is blamed file-level), which includes growing past what a writer records (bounded memory)."""
    if edit.hunks is None:
        return None
    new = apply_hunks(previous, [Hunk(h.start, h.end, h.lines) for h in edit.hunks])
    return new if new is not None and len(new) <= MAX_VERSION_LINES else None


def _base(lines: PathLines, blobs: dict[str, bytes], key: str) -> tuple[list[str] | None, str | None]:
    """The baseline's hashes: listed, or hashed here from the committed blob the record names
    (a why when this clone lacks it)."""
    if lines.base_blob is None:
        return lines.base, None
    data = blobs.get(lines.base_blob)
    if data is None:
        return None, f"its baseline, blob {lines.base_blob[:12]}, is not in this clone (fetch the run's commit)"
    digest = digest_for(key)
    return [digest(text) for text in text_lines(data)], None


def _why(record: RunRecord, path: str, key: str | None) -> tuple[str | None, PathLines | None]:
    if record.lines is None:
        return "format-1 record (no line data)", None
    lines = next((item for item in record.lines if item.path == path), None)
    if key is None:
        return "this repository has no commit to key line hashes with", None
    if record.line_key != key:
        return "line hashes keyed by another root commit", None
    if lines is None:
        return "no line data for this path", None
    if lines.omitted is not None:
        return f"omitted: {lines.omitted}", None
    return None, lines


def changed(record: RunRecord, path: str) -> bool:
    return any(path in step.changed for step in record.steps) or any(item.path == path for item in record.lines or ())


def blame_records(path: str, runs: list[tuple[RunRecord, Source]], current: bytes, key: str | None,
                  blobs: dict[str, bytes] | None = None, names_for: NamesFor | None = None) -> TeamBlame:
    """Blame the file whose bytes are `current` through the records `runs` (any order); `blobs`:
    the committed baselines the records name by blob id, as this clone has them; `names_for`: the
    names the file may have had when a run started (vacant.show.blame.blame_file's)."""
    carried: Carried[str, TeamAuthor] = Carried(Origins(BASELINE, OUTSIDE, UNKNOWN))
    considered = []
    previous: Source | None = None
    for record, source in sorted(runs, key=lambda pair: (pair[0].started, pair[0].run)):
        names = [name for name in (names_for(record.commit) if names_for else [path]) if changed(record, name)]
        if not names:
            continue
        item = Considered(record, source, None)
        for name in names:  # a hand-over: the first baseline of a run another machine recorded
            item = _carry(carried, item, name, key, blobs or {}, previous not in (None, source) and name == names[0])
        considered.append(item)
        previous = source
    texts = text_lines(current)
    digest = digest_for(key) if key is not None else None
    hashed = [digest(text) for text in texts] if digest else [f"#{n}" for n in range(len(texts))]
    return TeamBlame(path, key, considered, texts, carried.finish(hashed), 0)


def _carry(carried: Carried[str, TeamAuthor], item: Considered, path: str, key: str | None,
           blobs: dict[str, bytes], handover: bool) -> Considered:
    """Carry the lines through one run's versions of `path`; the run as considered (with why it is
    blamed file-level, when it is)."""
    record, source = item.record, item.source
    why, lines = _why(record, path, key)
    if lines is not None and key is not None:
        base, missing = _base(lines, blobs, key)
        rebuilt = versions(item, lines, base)
        if missing is not None:
            why = missing
        elif any(new is None and author is not None and edit.hunks is not None
                 for (new, author), edit in zip(rebuilt[1:], lines.edits)):
            why = "an edit script that does not fit its version"
        else:
            for new, author in rebuilt:  # the baseline comes first: a hand-over when another machine's
                carried.advance(new, author, handover=author is None and handover)
    if why is not None:
        carried.advance(None, None)  # what this run did to the lines is not known
    return item if item.why is not None or why is None else Considered(record, source, why)


@dataclass
class TeamRuns:
    """The runs blame can read, read once: this machine's and the team's verified records."""
    store: GitStore
    key: str | None
    runs: dict[str, tuple[RunRecord, Source]]
    rejected: int

    def blame(self, path: str, current: bytes, names_for: NamesFor | None = None, names: Iterable[str] = ()) -> TeamBlame:
        """The file `path` whose bytes are `current`, blamed through these runs; `names_for` and
        `names` (every name it may have had): git's renames of it."""
        wanted = {path, *names}
        named = sorted({lines.base_blob for record, _ in self.runs.values() for lines in record.lines or ()
                        if lines.path in wanted and lines.base_blob})
        blame = blame_records(path, list(self.runs.values()), current, self.key, self.store.read_blobs(named),
                              names_for)
        blame.rejected = self.rejected
        return blame


def team_runs(root: Path, store: GitStore, local_runs: list[Path], only: str | None = None,
              earlier: tuple[str, ...] = ()) -> TeamRuns:
    """This machine's runs `local_runs` (of the workspace `root`) and the team's verified run
    records; `only`: that path alone (the team's records whose path index says they changed it, or
    one of its `earlier` names, and the local runs' line data for it)."""
    key = line_key(store)
    runs: dict[str, tuple[RunRecord, Source]] = {}
    view = read_team(root, store)  # every kind: the rejected count is the one `vacant sync --status` gives
    signers = {counted.body["run"]: counted.author for counted in view.runs.values()}
    for record in run_records(store, view, only, earlier):  # the path index: only the records that changed it
        signer = signers[record.run]
        trusted = view.keys.keys.get(signer)
        runs[record.run] = (record, Source("team", signer, trusted.name if trusted else None))
    for run_dir in local_runs:
        try:
            record, _ = local_record(root, run_dir, key, only=None if earlier else only)
        except (ValueError, KeyError, TypeError, OSError, WorkspaceError, events.VocabularyError):
            continue  # a run that cannot be read is left out here, as `vacant sync` skips it
        runs[record.run] = (record, Source("local"))
    return TeamRuns(store, key, runs, len(view.rejected))


def team_blame(root: Path, store: GitStore, path: str, local_runs: list[Path], current: bytes,
               names_for: NamesFor | None = None, earlier: tuple[str, ...] = ()) -> TeamBlame:
    """This machine's runs `local_runs` (of the workspace `root`) and the team's verified run
    records, blamed on the file `path` whose bytes are `current` (`names_for`, `earlier`: git's
    renames of it)."""
    return team_runs(root, store, local_runs, path, earlier).blame(path, current, names_for, earlier)


def file_level_text(blame: TeamBlame) -> str:
    """What the text output says after the lines: the runs blamed file-level, the records rejected."""
    out = [""]
    for step in blame.file_level():
        out.append(f"file-level: {step['run']} step {step['step']} ({step['tool']}) changed {blame.path}; {step['why']}")
    if blame.rejected:
        out.append(f"{blame.rejected} team record(s) rejected and left out (vacant sync --status says why)")
    return "\n".join(out) if len(out) > 1 else ""
