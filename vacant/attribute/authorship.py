"""Who wrote it: whether the step a finding flipped at wrote the change that carries the finding.

A level that carries consequences (`provable`, `lineage_*`) needs evidence that the step wrote
the change, not only that the change was seen while the step ran (a person's editor, a formatter
on save, a process started earlier in the background write then too). The evidence is the
step's own write:

* a file tool (write, edit, patch): what its recorded input says it wrote, rebuilt on the file as
  the step found it (vacant/attribute/toolwrites.py); any other difference in its files is
  someone else's;
* a shell step: what its command writes when re-run behind the wall on the recorded state just
  before it (vacant/attribute/rerun.py).

Each file of the recorded change is then `same`, `foreign`, `split` or `clash` against the own
write (vacant/attribute/ownpart.py), and the finding is checked on the recorded state with the
step's files as its own write left them (the state before it plus the reproduced part):

* the own write is the whole change, or the finding shows on that state: `own`, the level
  stands (a generator that stamps the time writes other bytes when re-run, yet what it writes
  still shows the finding);
* it does not show there, and where the files the verdict rests on (a located finding's own file,
  else every file the own write did not reproduce) `clash`, the own write does not vary (a file
  tool's input is exact; a shell command is re-run a second time and must leave them exactly as
  the first re-run did): `not_own`, the change was made during the step by someone else: out of
  band, actor nobody (`gap`, `during_step`), never sent to the agent;
* anything else (the command must not or cannot be re-run, its re-run did not run as the step
  had, its output varies there, the check failed on that state for something else): `unknown`,
  `heuristic` at most, with the reason in one sentence.

A located finding's id holds its line's text, so a state whose file lacks that line cannot show it
(no check run is needed to say so).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from vacant.attribute import rerun as again
from vacant.attribute.at_change import Attribution
from vacant.attribute.lineage import Source, contains
from vacant.attribute.ownpart import CLASH, SAME, compare, has_line
from vacant.attribute.replay import Timeline
from vacant.attribute.toolwrites import patch_in_command, written
from vacant.attribute.verify import CLEAN, PRESENT, UNKNOWN
from vacant.core import levels
from vacant.core.findings import Finding
from vacant.policy.contract.checks import Site
from vacant.store.objects import ObjectStore
from vacant.store.run import RunView, Step
from vacant.store.hasher import Entry
from vacant.store.states import Manifest, file_entry

OWN, NOT_OWN, NOT_KNOWN = "own", "not_own", "unknown"
TOOL_KINDS = ("write", "edit", "patch")
RERUN_WROTE = "what its command wrote when re-run on the state before it"
INPUT_WROTE = "what its input says it wrote"
StatusOf = Callable[[Manifest], str]  # the finding's status (verify.PRESENT/CLEAN/UNKNOWN) on a constructed state
NOT_A_FILE = b"\xff"  # what a directory, a link or a special file reads as (never UTF-8 text)


@dataclass(frozen=True)
class Authorship:
    """The verdict on step `step` and a change it flipped at: `own`, `not_own` or `unknown`,
    why (one sentence), and the evidence (what was re-run or rebuilt, each file's comparison)."""

    verdict: str
    step: Step
    why: str
    evidence: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Span:
    """The step's part of the recorded change up to the flip: the state just before the step
    (`before`, an index), and the paths its own changes touched."""

    before: int
    own: tuple[str, ...]


@dataclass
class Authors:
    """Authorship for the findings of one Stop; each shell step is re-run at most once per span."""

    view: RunView
    timeline: Timeline
    store: ObjectStore
    root: Path
    site: Site | None
    scratch: Path  # a directory of the re-runs' own
    deadline: float
    done: dict[tuple[int, Span, int], again.Rerun | str] = field(default_factory=dict)  # re-runs, or why none
    seconds: float = 0.0  # spent re-running
    rebuilt: again.Rebuilt | None = None  # the re-runs' scratch directory, once one ran

    def of(self, index: int, finding: Finding, status_of: StatusOf) -> Authorship | None:
        """The verdict on the owner of change `index`; None when it is no shell or file tool step
        (an out-of-band change set, a change while several steps were open, another tool)."""
        step = self.view.steps.get(self.timeline.change(index)["step"])
        if step is None or step.out_of_band or step.kind not in ("shell", *TOOL_KINDS):
            return None
        span = self._span(step, index)
        if isinstance(span, str):
            return Authorship(NOT_KNOWN, step, span)
        patch = patch_in_command(again.command_of(step) or "") if step.kind == "shell" else None
        if patch is not None:  # Codex's apply_patch run through the shell: a patch tool, not a program
            return self._tool(step, span, index, finding, status_of, "patch", {"patch": patch})
        if step.kind == "shell":
            return self._shell(step, span, index, finding, status_of)
        return self._tool(step, span, index, finding, status_of, str(step.kind), step.intent or {})

    @property
    def runs(self) -> int:
        return sum(1 for run in self.done.values() if isinstance(run, again.Rerun))

    # -- the step's part of the change -------------------------------------------------------

    def _span(self, step: Step, index: int) -> Span | str:
        """The state before the step and its own paths up to change `index`; a sentence when
        another writer's change to the same paths was recorded in between."""
        before = sum(1 for change in self.timeline.changes if change["seq"] < step.seq)
        own: set[str] = set()
        others: set[str] = set()
        for number in range(before + 1, index + 1):
            change = self.timeline.change(number)
            (own if change["step"] == step.number else others).update(_paths(change))
        if own & others:
            return f"another writer's change to {', '.join(sorted(own & others))} was recorded while it ran"
        return Span(before, tuple(sorted(own)))

    def _unkept(self, span: Span) -> list[str]:
        """The files of the state before the step that the store does not hold (not rebuilt)."""
        state = self.timeline.states[span.before]
        return sorted(path for path, entry in state.items() if entry[0] == "f" and not self.store.has(entry[3]))

    def _content(self, manifest: Manifest, path: str) -> bytes | None:
        entry = manifest.get(path)
        if entry is None:
            return None
        if entry[0] != "f":
            return NOT_A_FILE + f"{entry[0]}:{entry[3]}".encode()
        return self.store.get(entry[3]) if self.store.has(entry[3]) else NOT_A_FILE + b"unkept"

    def _compare(self, span: Span, index: int, mine: Manifest) -> dict[str, str]:
        before, recorded = self.timeline.states[span.before], self.timeline.states[index]
        return {path: compare(self._content(before, path), self._content(recorded, path), self._content(mine, path))
                for path in span.own}

    # -- a shell step: its re-run ------------------------------------------------------------

    def _shell(self, step: Step, span: Span, index: int, finding: Finding, status_of: StatusOf) -> Authorship:
        run = self._rerun(step, span)
        if isinstance(run, str):
            return Authorship(NOT_KNOWN, step, run, {"rerun": {"refused": run}})
        compared = self._compare(span, index, run.entries)
        evidence = {"rerun": {**run.evidence(), "files": compared}}
        if all(how == SAME for how in compared.values()):
            return Authorship(OWN, step, "its re-run on the state before it wrote the same change", evidence)
        if run.timed_out:
            return Authorship(NOT_KNOWN, step, f"its re-run did not finish within its cap of {run.cap:.0f} s", evidence)
        if step.exit_code is not None and run.exit_code != step.exit_code:
            return Authorship(NOT_KNOWN, step, f"its re-run exited {run.exit_code} where the step exited "
                                               f"{step.exit_code}: it did not run as it had", evidence)
        unkept = self._unkept(span)
        if unkept:  # `[store] exclude`, over the size cap: what it wrote otherwise may be for want of them
            return Authorship(NOT_KNOWN, step, f"its re-run wrote otherwise than the record on a state without "
                                               f"{len(unkept)} file(s) vacant does not keep (e.g. {unkept[0]}), so "
                                               "what it would write with them is not known", evidence)
        mine = self._with(index, span, run.entries)
        return self._judge(step, finding, mine, compared, status_of, evidence, RERUN_WROTE,
                           lambda paths: self._steady(step, span, run, paths, evidence))

    def _steady(self, step: Step, span: Span, first: again.Rerun, paths: list[str], evidence: dict[str, Any]) -> bool:
        """Whether a second re-run leaves `paths` exactly as the first did: the command's output
        there does not vary, so what the record holds there beyond it is someone else's."""
        second = self._rerun(step, span, attempt=2)
        steady = isinstance(second, again.Rerun) and second.exit_code == first.exit_code and all(
            _same_entry(first.entries.get(path), second.entries.get(path)) for path in paths)
        evidence["rerun"]["steady"] = steady
        return steady

    def _rerun(self, step: Step, span: Span, attempt: int = 1) -> again.Rerun | str:
        key = (step.number, span, attempt)
        if key not in self.done:
            why = again.refusal(step, self.root, self.site, self.deadline - time.monotonic())
            if why is not None or self.site is None:
                self.done[key] = why or "the wall cannot run here"
            else:
                started = time.monotonic()
                self.done[key] = self._run_again(step, span)
                self.seconds += time.monotonic() - started
        return self.done[key]

    def _run_again(self, step: Step, span: Span) -> again.Rerun | str:
        """The re-run, or why it could not be made (the state before the step could not be rebuilt)."""
        command = again.command_of(step)
        assert command is not None and self.site is not None  # refusal() said so
        state = self.timeline.states[span.before]
        try:
            return again.rerun(command, step, state, span.own, self.store, self.site, self._rebuilt())
        except (OSError, RuntimeError) as error:
            self.rebuilt = None  # whatever it holds now, the next re-run rebuilds it whole
            return f"its re-run could not be made ({type(error).__name__}: {error})"

    def _rebuilt(self) -> again.Rebuilt:
        if self.rebuilt is None:
            self.rebuilt = again.Rebuilt(self.scratch, self.store, self.root)
        return self.rebuilt

    # -- a file tool: its input --------------------------------------------------------------

    def _tool(self, step: Step, span: Span, index: int, finding: Finding, status_of: StatusOf, kind: str,
              intent: dict[str, Any]) -> Authorship:
        before = self.timeline.states[span.before]
        cwd = os.path.join(self.root, step.cwd or ".")
        wrote = written(kind, intent, self.root, cwd, lambda path: self._content(before, path))
        if wrote.why is not None:
            return Authorship(NOT_KNOWN, step, wrote.why)
        mine = self._own_entries(span, index, wrote.files)
        compared = self._compare(span, index, mine)
        evidence = {"input": {"files": compared}}
        if all(how == SAME for how in compared.values()):
            return Authorship(OWN, step, "its input accounts for the whole change", evidence)
        return self._judge(step, finding, self._with(index, span, mine), compared, status_of, evidence, INPUT_WROTE,
                           lambda _paths: True)  # an input says exactly what it wrote

    def _own_entries(self, span: Span, index: int, files: dict[str, bytes | None]) -> Manifest:
        """The step's paths as its input wrote them (a path it did not name: as before the step;
        a directory: as recorded)."""
        before, recorded = self.timeline.states[span.before], self.timeline.states[index]
        mine: Manifest = {}
        for path in span.own:
            entry: Entry | None = recorded.get(path) if _is_dir(recorded.get(path)) else before.get(path)
            if path in files:
                content = files[path]
                old = recorded.get(path) or before.get(path)
                entry = None if content is None else file_entry(content, self.store, old[4] if old else 0o644)
            if entry is not None:
                mine[path] = entry
        return mine

    # -- lineage_internal: the producing step's write of the value ----------------------------

    def wrote_value(self, number: int, path: str, value: set[str]) -> Authorship | None:
        """Whether step `number` wrote `value` into `path` (the file a later step copied it from):
        its own write (its input, or its command re-run on the state before it) holds the value.
        `not_own`: the value is in lines the own write left as they were, or never wrote (someone
        else put it there while the step ran); None: no shell or file tool step, or it recorded
        no change to `path` (its grade stands, as for other tools)."""
        step = self.view.steps.get(number)
        if step is None or step.out_of_band or step.kind not in ("shell", *TOOL_KINDS):
            return None
        index = next((i for i in range(self.timeline.last, 0, -1) if self.timeline.change(i)["step"] == number
                      and path in _paths(self.timeline.change(i)) and path not in self.timeline.change(i)["removed"]),
                     None)
        if index is None:
            return None
        span = self._span(step, index)
        if isinstance(span, str):
            return Authorship(NOT_KNOWN, step, span)
        mine = self._own_write(step, span, index)
        if isinstance(mine, str):
            return Authorship(NOT_KNOWN, step, mine)
        own, how = mine
        evidence = {"path": path, "files": {path: how.get(path)}}
        if contains(_decode(self._content(own, path)), value):
            return Authorship(OWN, step, f"its own write put the value into {path}", evidence)
        if how.get(path) == CLASH and step.kind == "shell":
            return Authorship(NOT_KNOWN, step, f"its command, re-run, wrote {path} otherwise inside lines it writes "
                                               "(its output varies), so whether it wrote the value is not known",
                              evidence)
        return Authorship(NOT_OWN, step, f"the value in {path} is not in what step {number} ({step.tool}) wrote "
                                         "itself: someone else put it there while it ran", evidence)

    def _own_write(self, step: Step, span: Span, index: int) -> tuple[Manifest, dict[str, str]] | str:
        """The step's own write of its paths (its re-run's, or its input's) and each file's
        comparison with the record; a sentence when it cannot be had."""
        patch = patch_in_command(again.command_of(step) or "") if step.kind == "shell" else None
        if step.kind == "shell" and patch is None:
            run = self._rerun(step, span)
            if isinstance(run, str):
                return run
            if run.timed_out or (step.exit_code is not None and run.exit_code != step.exit_code):
                return "its re-run did not run as the step had"
            if self._unkept(span):
                return "its re-run ran on a state without files vacant does not keep"
            return run.entries, self._compare(span, index, run.entries)
        kind, intent = ("patch", {"patch": patch}) if patch is not None else (str(step.kind), step.intent or {})
        before = self.timeline.states[span.before]
        wrote = written(kind, intent, self.root, os.path.join(self.root, step.cwd or "."),
                        lambda path: self._content(before, path))
        if wrote.why is not None:
            return wrote.why
        own = self._own_entries(span, index, wrote.files)
        return own, self._compare(span, index, own)

    # -- the verdict -------------------------------------------------------------------------

    def _with(self, index: int, span: Span, mine: Manifest) -> Manifest:
        """The recorded state at `index` with the step's paths as its own write left them."""
        state = dict(self.timeline.states[index])
        for path in span.own:
            if path in mine:
                state[path] = mine[path]
            else:
                state.pop(path, None)
        return state

    def _judge(self, step: Step, finding: Finding, mine: Manifest, compared: dict[str, str], status_of: StatusOf,
               evidence: dict[str, Any], what: str, steady: Callable[[list[str]], bool]) -> Authorship:
        """The verdict when the own write (`what`: RERUN_WROTE or INPUT_WROTE) is not the whole
        change (module docstring); `steady(paths)`: whether the own write of those paths does not
        vary (asked before calling someone else's what the record holds inside lines it wrote)."""
        others = ", ".join(sorted(path for path, how in compared.items() if how != SAME))
        status = self._status(finding, mine, status_of)
        evidence["own_write_shows_it"] = status
        if status == PRESENT:
            return Authorship(OWN, step, f"it shows on the state before the step plus {what} (the rest of the change "
                                         f"to {others} was not the step's)", evidence)
        if status == UNKNOWN:
            return Authorship(NOT_KNOWN, step, f"on the state before the step plus {what}, the check failed for "
                                               "something else, so whether the step's part causes this is not known",
                              evidence)
        clashes = [path for path in _relevant(finding, compared) if compared[path] == CLASH]
        if clashes and not steady(clashes):
            return Authorship(NOT_KNOWN, step, f"its command, re-run twice on the state before it, did not write "
                                               f"{', '.join(clashes)} the same way both times (its output varies), so "
                                               "whose the recorded lines are is not known", evidence)
        return Authorship(NOT_OWN, step, f"made during step {step.number} ({step.tool}) by someone else: the change to "
                                         f"{others} is not {what}, and without it this does not show", evidence)

    def _status(self, finding: Finding, state: Manifest, status_of: StatusOf) -> str:
        """The finding's status on a constructed state; a located finding whose line is not in
        its file there is absent without a check run."""
        located = finding.source == "check" and finding.test is None and finding.line is not None
        if located and finding.path and finding.text.strip():
            if not has_line(self._content(state, finding.path), finding.text):
                return CLEAN
        return status_of(state)


def not_reproduced(found: Authorship) -> list[str]:
    """The files of the step's change its own write did not account for (someone else's part)."""
    files = (found.evidence.get("rerun") or found.evidence.get("input") or {}).get("files") or {}
    return sorted(path for path, how in files.items() if how != SAME)


def _paths(change: dict[str, Any]) -> set[str]:
    return set(change["added"]) | set(change["changed"]) | set(change["removed"])


def _relevant(finding: Finding, compared: dict[str, str]) -> list[str]:
    """The files the verdict rests on: a located finding's own file (its line must be there for it
    to show), else every file the own write did not reproduce."""
    located = finding.source != "check" or (finding.test is None and finding.line is not None and finding.text.strip())
    if located and finding.path in compared:
        return [str(finding.path)]
    return sorted(path for path, how in compared.items() if how != SAME)


def _same_entry(a: Entry | None, b: Entry | None) -> bool:
    """The same kind and content (a file's bytes, a link's target; a directory is a directory)."""
    if a is None or b is None:
        return a is b
    return bool(a[0] == b[0] and (a[0] == "d" or a[3] == b[3]))


def _decode(data: bytes | None) -> str:
    return "" if data is None else data.decode("utf-8", "replace")


def _is_dir(entry: Entry | None) -> bool:
    return entry is not None and entry[0] == "d"


def settle_producer(attribution: Attribution, found: Authorship, path: str, flip: Step) -> Attribution:
    """A lineage_internal grade whose producing step `found.step` wrote the value into `path`:
    `own` keeps it; `not_own` means the value came from outside the run (someone wrote it there
    while the step ran), so it is `lineage_exact` at the flip step with that write as its source
    (the actor untouched); `unknown` is `heuristic` at most, pointing at the producing step."""
    producer = {"verdict": found.verdict, "step": found.step.number, "why": found.why, **found.evidence}
    evidence = {**attribution.evidence, "producer_authorship": producer}
    if found.verdict == OWN:
        return replace(attribution, evidence=evidence)
    evidence["why"] = f"the value came from {path}, written during step {found.step.number}: {found.why}"
    if found.verdict == NOT_OWN:
        return replace(attribution, level=levels.LINEAGE_EXACT, step=flip, actor=flip.actor, final_level=None,
                       evidence=evidence, source=Source("external", "out-of-band", path, None, None), first_hop=None)
    return replace(attribution, level=levels.HEURISTIC, final_level=None, source=None, first_hop=None,
                   evidence=evidence)


def settle(attribution: Attribution, found: Authorship) -> Attribution:
    """The grade the authorship supports: `own` keeps it; `not_own` is out of band during the
    step (`gap`, actor nobody); `unknown` is `heuristic` at most, pointing at the step."""
    step = found.step
    evidence = {**attribution.evidence, "authorship": {"verdict": found.verdict, "why": found.why, **found.evidence}}
    if found.verdict == OWN:
        return replace(attribution, evidence=evidence)
    evidence["why"] = found.why
    if found.verdict == NOT_OWN:
        evidence["during_step"] = step.number
        return replace(attribution, level=levels.GAP, step=step, actor=None, source=None, first_hop=None,
                       final_level=None, flip_step=step.number, evidence=evidence)
    return replace(attribution, level=levels.HEURISTIC, step=step, actor=step.actor, source=None, first_hop=None,
                   final_level=None, flip_step=step.number, evidence=evidence)
