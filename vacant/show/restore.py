"""`vacant restore RUN --step K [--before] --to DIR`: a recorded workspace state, byte for byte.

The state *after* step K is the workspace as the step log knew it when step K ended: the baseline
with every change recorded before K's `step_end` applied (changes of steps running in parallel
with K included, as they were on disk then). *Before* step K: every change recorded before K's
`step_start`. Shell steps are scanned in full, so a file a Bash command made is restored like any
other.

Safety: DIR must be new or an empty directory, and neither the live workspace, nor inside it, nor
inside vacant's state directory. Nothing existing is deleted or overwritten. Files whose content
was over the object-store cap were hashed, not kept: they are listed as not restorable and left
out (their directories are still made).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vacant.core.locations import state_dir
from vacant.store.loaded import LoadedRun, load_run
from vacant.store.states import Manifest, ReconstructionError, materialize


@dataclass
class Restored:
    run: str
    step: int
    when: str  # "after" | "before"
    to: str
    files: int
    bytes: int
    unrestorable: list[dict[str, Any]] = field(default_factory=list)  # {"path", "size"}

    def to_json(self) -> dict[str, Any]:
        return {"run": self.run, "step": self.step, "when": self.when, "to": self.to, "files": self.files,
                "bytes": self.bytes, "unrestorable": self.unrestorable}


def _seq_of(run: LoadedRun, step: int, kind: str) -> int | None:
    return next((r["seq"] for r in run.view.records if r["type"] == kind and r.get("step") == step), None)


def state_at(run: LoadedRun, step: int, before: bool) -> Manifest:
    """The manifest before step `step` started, or after it ended (see the module docstring)."""
    if step not in run.view.steps:
        numbers = sorted(run.view.steps)
        span = f"steps {numbers[0]}..{numbers[-1]}" if numbers else "no steps"
        raise ReconstructionError(f"run {run.id} has no step {step} (it has {span}): `vacant log {run.id}` lists them")
    limit = _seq_of(run, step, "step_start") if before else _seq_of(run, step, "step_end")
    if limit is None:  # a step never closed: everything recorded for it (its changes) counts
        own = [c["seq"] for c in run.changes if c["step"] == step]
        limit = (max(own) + 1) if own else (_seq_of(run, step, "step_start") or 0)
    manifest = dict(run.baseline)
    for change in run.changes:
        if change["seq"] >= limit:
            break
        for rel in change["removed"]:
            manifest.pop(rel, None)
        manifest.update(change["added"])
        manifest.update(change["changed"])
    return manifest


def check_target(root: Path, target: Path) -> Path:
    """The absolute target directory, refused when it could touch anything of the person's."""
    resolved = Path(os.path.abspath(target)).resolve()
    live = Path(root).resolve()
    for guarded, what in ((live, "the live workspace"), (state_dir(root).resolve(), "vacant's state directory")):
        if resolved == guarded or guarded in resolved.parents:
            raise ReconstructionError(f"refusing to restore into {what} ({guarded}) or a directory inside it: "
                                      "give --to a new directory elsewhere")
    if os.path.lexists(resolved) and not resolved.is_dir():
        raise ReconstructionError(f"{target} exists and is not a directory: give --to a new or empty directory")
    if resolved.is_dir() and any(resolved.iterdir()):
        raise ReconstructionError(f"{target} is not empty: restore never overwrites; give a new or empty directory")
    return resolved


def restore(root: Path, run_dir: Path, step: int, target: Path, before: bool = False) -> Restored:
    run = load_run(root, run_dir)
    manifest = state_at(run, step, before)
    directory = check_target(root, target)
    directory.mkdir(parents=True, exist_ok=True)
    missing = set(materialize(manifest, directory, run.store, current={}, live=root))
    files = [rel for rel, entry in manifest.items() if entry[0] in ("f", "l") and rel not in missing]
    return Restored(
        run=run.id, step=step, when="before" if before else "after", to=str(directory), files=len(files),
        bytes=sum(manifest[rel][1] for rel in files),
        unrestorable=[{"path": rel, "size": manifest[rel][1]} for rel in sorted(missing)],
    )


def render(result: Restored) -> str:
    lines = [f"restored run {result.run} {result.when} step {result.step} into {result.to}: "
             f"{result.files} file(s), {result.bytes} bytes"]
    for item in result.unrestorable:
        lines.append(f"  not restorable (over the object-store cap, hashed only): {item['path']} ({item['size']} bytes)")
    return "\n".join(lines)
