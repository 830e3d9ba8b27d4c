"""A recorded run as one Agent Trace record (https://agent-trace.dev, spec version 0.1.0): the
files the run changed -> one conversation per agent that wrote lines in them -> the line ranges it
wrote, with the contributor (type and model id) and a content hash per range.

Mapping:
  version        the spec version this writer follows (SPEC_VERSION)
  id, timestamp  a UUID derived from the run id (the same run gives the same id); the run's end
  vcs            git and the workspace's HEAD commit, when the workspace is a git checkout
  tool           vacant, the tool that generated the record
  conversation   one per agent of the run (main, each sub-agent): contributor `ai` with the model
                 as `provider/model`; lines of an out-of-band change set or of a change made while
                 several steps were open: contributor `unknown`
  range          1-based inclusive lines of the file at the run's final recorded state;
                 content_hash `sha256:<hex>` of those lines joined by newlines
  metadata       `dev.vacant`: run, session, platform, the steps behind each conversation, files skipped

Limits: line numbers refer to the run's final recorded state, which is the committed tree of
`vcs.revision` only if the run's changes were committed as they stood (`dev.vacant.ranges_at`
says so). Baseline lines carry no range. The record holds paths, line numbers, model ids and
hashes; no file content leaves.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from vacant import __version__
from vacant.export.authorship import GROUP, FileAuthors, Skipped, authors
from vacant.export.model import MAIN, ExportError, RunModel
from vacant.store.objects import ObjectStore

SPEC_VERSION = "0.1.0"
NAMESPACE = uuid.UUID("3f0c1c52-4f5e-4d47-9a43-5b1f6c1d0a11")  # vacant's namespace for record ids
UNKNOWN = "unknown"  # the conversation key of lines no single agent is known to have written
GIT_TIMEOUT_S = 10


def record(model: RunModel, store: ObjectStore, workspace: Path) -> dict[str, Any]:
    """The run's Agent Trace record (a JSON-ready dict)."""
    files, skipped = authors(model, store)
    trace: dict[str, Any] = {
        "version": SPEC_VERSION,
        "id": str(uuid.uuid5(NAMESPACE, model.run)),
        "timestamp": datetime.fromtimestamp(model.end, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    revision = git_revision(workspace)
    if revision:
        trace["vcs"] = {"type": "git", "revision": revision}
    trace["tool"] = {"name": "vacant", "version": __version__}
    trace["files"] = [_file(model, authored) for authored in files]
    trace["metadata"] = {"dev.vacant": _metadata(model, files, skipped)}
    return trace


def _conversation_key(model: RunModel, step: int) -> str:
    if step == GROUP:
        return UNKNOWN
    call = model.calls.get(step)
    return call.agent if call is not None and call.agent is not None else UNKNOWN


def _contributor(model: RunModel, key: str) -> dict[str, str]:
    if key == UNKNOWN:
        return {"type": "unknown"}
    contributor = {"type": "ai"}
    model_id = model.model_id(model.agents[key].model if key in model.agents else None)
    if model_id:
        contributor["model_id"] = model_id[:250]
    return contributor


def _file(model: RunModel, authored: FileAuthors) -> dict[str, Any]:
    grouped: dict[str, list[dict[str, Any]]] = {}
    for span in authored.spans:
        digest = hashlib.sha256(span.text.encode("utf-8", "surrogateescape")).hexdigest()
        grouped.setdefault(_conversation_key(model, span.step), []).append(
            {"start_line": span.start, "end_line": span.end, "content_hash": f"sha256:{digest}"})
    order = sorted(grouped, key=lambda key: (key == UNKNOWN, key != MAIN, key))
    return {"path": authored.path,
            "conversations": [{"contributor": _contributor(model, key), "ranges": grouped[key]} for key in order]}


def _metadata(model: RunModel, files: list[FileAuthors], skipped: list[Skipped]) -> dict[str, Any]:
    steps: dict[str, set[int]] = {}
    for authored in files:
        for span in authored.spans:
            if span.step != GROUP:
                steps.setdefault(_conversation_key(model, span.step), set()).add(span.step)
    agents = {key: {"agent_definition": agent.definition, "model": agent.model, "steps": sorted(steps.get(key, ()))}
              for key, agent in model.agents.items() if key in steps}
    return {
        "run": model.run, "session": model.session, "platform": model.platform,
        "ranges_at": "the run's final recorded state",
        "agents": agents,
        "skipped": [{"path": item.path, "why": item.why} for item in skipped],
    }


def git_revision(workspace: Path) -> str | None:
    """HEAD's commit when `workspace` is inside a git checkout with a commit, else None."""
    try:
        done = subprocess.run(["git", "-C", str(workspace), "rev-parse", "--verify", "-q", "HEAD"],
                              capture_output=True, text=True, timeout=GIT_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    revision = done.stdout.strip()
    return revision if done.returncode == 0 and len(revision) == 40 else None


def write(trace: dict[str, Any], target: Path) -> None:
    """Write the record to a new file; never overwrite one (an existing path is refused)."""
    data = json.dumps(trace, indent=1).encode() + b"\n"
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        raise ExportError(f"{target} already exists: vacant never overwrites a file; name a new one") from None
    except OSError as error:
        raise ExportError(f"cannot create {target}: {error.strerror}") from None
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)
