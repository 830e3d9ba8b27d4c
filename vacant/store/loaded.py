"""One recorded run loaded for reading back: its steps, its object store, its baseline manifest,
and a file's content along the run without folding every full manifest (a 1,000-step run over a
large tree stays cheap: only the entries of the one path asked for are followed). Shown by
vacant/show (blame, restore, the run view) and turned into shared line data by vacant/share."""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vacant.core.locations import WorkspaceError, state_dir
from vacant.store.objects import ObjectStore
from vacant.store.run import RunView
from vacant.store.states import Manifest, load_manifest

Entry = list[Any]  # [kind, size, mtime_ns, key, mode], as the hasher records it


@dataclass
class LoadedRun:
    root: Path
    run_dir: Path
    view: RunView
    store: ObjectStore
    baseline: Manifest

    @property
    def id(self) -> str:
        return self.run_dir.name

    @property
    def changes(self) -> list[dict[str, Any]]:
        return self.view.of_type("change")

    def start(self) -> dict[str, Any]:
        return next(record for record in self.view.records if record["type"] == "run_start")

    def reports(self) -> list[dict[str, Any]]:
        """Every Stop report of the run, in order (reports/NNNN.json)."""
        directory = self.run_dir / "reports"
        found = []
        for path in sorted(directory.glob("[0-9]*.json")) if directory.is_dir() else ():
            try:
                found.append(json.loads(path.read_text()))
            except (OSError, ValueError):
                continue  # a torn report is skipped; the others still show
        return found

    def latest_report(self) -> dict[str, Any] | None:
        return latest_report(self.run_dir)


def latest_report(run_dir: Path) -> dict[str, Any] | None:
    """The run's latest Stop report (report.json), or None when there is none or it is torn."""
    try:
        report: dict[str, Any] | None = json.loads((Path(run_dir) / "report.json").read_text())
        return report
    except (OSError, ValueError):
        return None


def load_run(root: Path, run_dir: Path) -> LoadedRun:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a torn last line is reported by `vacant verify`, not here
        view = RunView.load(run_dir)
    store = ObjectStore(state_dir(root) / "objects")
    starts = view.of_type("run_start")
    if not starts:
        raise WorkspaceError(f"run {run_dir.name} has no run_start record: its log is empty or cut")
    return LoadedRun(Path(root), Path(run_dir), view, store, load_manifest(store, starts[0]["baseline"]))


def path_entries(run: LoadedRun, path: str) -> list[tuple[dict[str, Any] | None, Entry | None]]:
    """The path's entry at the baseline, then after each change that touched it:
    [(None, baseline entry), (change, entry or None when removed), ...]."""
    entries: list[tuple[dict[str, Any] | None, Entry | None]] = [(None, run.baseline.get(path))]
    for change in run.changes:
        if path in change["removed"]:
            entries.append((change, None))
        elif path in change["added"]:
            entries.append((change, change["added"][path]))
        elif path in change["changed"]:
            entries.append((change, change["changed"][path]))
    return entries


class Unrestorable(Exception):
    """A file's content was hashed but not stored (over the object-store cap)."""


def file_bytes(store: ObjectStore, entry: Entry | None) -> bytes | None:
    """A regular file's bytes; None when there is no such file; raises Unrestorable when the
    content was not kept."""
    if entry is None or entry[0] != "f":
        return None
    if not store.has(entry[3]):
        raise Unrestorable(entry[3])
    return store.get(entry[3])
