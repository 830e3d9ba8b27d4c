"""One's own runs -> signed records -> one's own author ref, `refs/vacant/authors/<fingerprint>`.

Contract:
- Records are made from the step log and the last Stop report of each run in this workspace,
  keeping only what `records.py` documents; a run whose id is not a plain id is skipped and said.
- Making the records is deterministic (no clock, Ed25519 signatures are deterministic), so
  publishing the same run twice yields the same blobs, the same names, and no new entries.
- The ref moves by compare-and-swap and only ever gains entries; a run that grew after it was
  published gets a new run record (`through_seq` higher) next to the old one, never in place of it.
- A small cache (`.git/vacant/share/published.json`) skips runs whose files did not change since they
  were published; deleting it costs time, never correctness.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vacant.attribute.stop import read_coverage
from vacant.core import events
from vacant.core.locations import WorkspaceError, list_runs, state_dir
from vacant.share.cache import load_json, save_json
from vacant.share.gitstore import AUTHORS, GitStore
from vacant.share.lines import line_key, run_lines
from vacant.share.records import (
    ENTRY,
    KIND_DIRS,
    WRITTEN_FORMAT,
    Cell,
    Envelope,
    FindingEntry,
    ReadCoverage,
    RecordError,
    ReviewRecord,
    RunRecord,
    StepEntry,
    blob_of,
    canonical,
    parse_typed,
    signed_bytes,
    to_json,
)
from vacant.share.index import Row, chain_rows, manifest_body
from vacant.share.signing import Signer, TeamKey, TeamKeys
from vacant.share.team import check_blob, placement, valid_manifests, shape_of
from vacant.store.loaded import load_run
from vacant.store.reputation import cell_key

CAS_ATTEMPTS = 20


@dataclass
class Made:
    """The records of the workspace's runs: tree path -> blob bytes, and what was skipped, why."""
    blobs: dict[str, bytes] = field(default_factory=dict)
    runs: int = 0
    reviews: int = 0
    skipped: list[str] = field(default_factory=list)


def entry_path(kind: str, blob: bytes) -> str:
    name = hashlib.sha256(blob).hexdigest()
    return f"{KIND_DIRS[kind]}/{name[:2]}/{name[2:]}"


def seal(signer: Signer, kind: str, body: Any) -> bytes:
    """The record blob: body, author and signature, canonical."""
    version = WRITTEN_FORMAT[kind]
    data = to_json(body, version)
    signature = signer.sign(signed_bytes(kind, signer.fingerprint, data, version))
    return blob_of(Envelope(version, kind, signer.fingerprint, data, signature))


def _cell(actor: dict[str, Any]) -> Cell:
    return Cell(*cell_key(actor))


def _finding(item: dict[str, Any]) -> FindingEntry:
    origin = item.get("lineage_source")
    return FindingEntry(
        id=item["id"], source=item["source"], name=str(item["name"]), level=item["level"], step=item.get("step"),
        flip_step=item.get("flip_step"), path=item.get("path"), line=item.get("line"),
        evidence_sha256=hashlib.sha256(canonical(item.get("evidence") or {})).hexdigest(),
        origin=origin.split(":", 1)[0] if isinstance(origin, str) and origin else None)


def run_records(root: Path, run_dir: Path, key: str | None, only: str | None = None,
                store: GitStore | None = None) -> tuple[RunRecord, list[ReviewRecord]]:
    """The run record and review records of one recorded run (RecordError if it cannot be
    shared); line data keyed by `key` for every path it changed, or for the path `only` (with
    `store`, committed baselines named by blob id: vacant/share/lines.py)."""
    run = load_run(root, run_dir)
    view = run.view
    if not view.records:
        raise RecordError("empty step log")
    start = next((r for r in view.records if r["type"] == "run_start"), {})
    run_id = str(start.get("run") or run_dir.name)
    cells: list[Cell] = []
    steps = []
    for step in view.ordered():
        cell = None
        if step.actor:
            actor = _cell(step.actor)
            if actor not in cells:
                cells.append(actor)
            cell = cells.index(actor)
        steps.append(StepEntry(step.number, step.tool, cell, step.outcome, sorted(set(step.changed_paths()))))
    try:
        report = json.loads((run_dir / "report.json").read_text())
    except (OSError, ValueError):
        report = {}
    coverage = read_coverage(view)
    record = RunRecord(
        run=run_id, platform=str(start.get("platform") or "unknown"), commit=start.get("commit"),
        started=float(view.records[0].get("ts") or 0.0), through_seq=int(view.records[-1].get("seq") or 0),
        cells=cells, steps=steps, reads=len(view.of_type("read")),
        read_coverage=ReadCoverage(coverage["state"], coverage["why"][:1000]),
        findings=[_finding(item) for item in report.get("findings", [])],
        line_key=key, lines=run_lines(run, key, only, store))
    reviews = [ReviewRecord(run_id, int(r["seq"]), _cell(r["cell"]), float(r["score"]), float(r["weight"]), r["finding"])
               for r in view.of_type("review")]
    # the typed records accept what the remote would: a record we could not read back is not shared
    parse_typed(RunRecord, to_json(record), "run")
    for review in reviews:
        parse_typed(ReviewRecord, to_json(review), "review")
    return record, reviews


def run_stamp(run_dir: Path) -> list[int]:
    """What says a run changed since it was published: its files' sizes and times, and the run
    record's format (a newer format publishes every run again, once)."""
    stamp = [WRITTEN_FORMAT["run"]]
    for name in ("events.jsonl", "report.json"):
        try:
            info = (run_dir / name).stat()
            stamp += [info.st_size, info.st_mtime_ns]
        except OSError:
            stamp += [0, 0]
    return stamp


def make_records(root: Path, signer: Signer, cache: dict[str, Any], store: GitStore) -> Made:
    """Records of the runs that changed since the cache last saw them (cache updated in place)."""
    made = Made()
    key = line_key(store)
    seen = cache.setdefault(signer.fingerprint, {})
    for run_dir in list_runs(root):
        stamp = run_stamp(run_dir)
        if seen.get(run_dir.name) == stamp:
            continue
        try:
            record, reviews = run_records(root, run_dir, key, store=store)
        except (RecordError, KeyError, TypeError, ValueError, events.VocabularyError, WorkspaceError,
                OSError) as error:
            made.skipped.append(f"{run_dir.name}: {error}")
            continue
        blob = seal(signer, "run", record)
        made.blobs[entry_path("run", blob)] = blob
        for review in reviews:
            blob = seal(signer, "review", review)
            made.blobs[entry_path("review", blob)] = blob
        made.runs += 1
        made.reviews += len(reviews)
        seen[run_dir.name] = stamp
    return made


def add_entries(store: GitStore, signer: Signer, blobs: dict[str, bytes], message: str) -> int:
    """Add `path -> blob` entries to the signer's ref (a commit on top of it), with a manifest
    indexing them, by CAS; how many were new. The manifest claims the whole ref when, with it, the
    chain of the author's manifests indexes every record there (vacant/share/index.py)."""
    ref = AUTHORS + signer.fingerprint
    for _ in range(CAS_ATTEMPTS):
        old = store.refs(ref).get(ref)
        listing = store.list_tree(old) if old else []
        current = {e.path: e.oid for e in listing}
        new_paths = [path for path in blobs if path not in current]
        if not new_paths:
            return 0
        regular = all(e.mode == "100644" and e.type == "blob" and ENTRY.match(e.path) for e in listing)
        files = {**current, **dict(zip(new_paths, store.write_blobs([blobs[path] for path in new_paths])))}
        after, rows, whole = _chain(store, signer, current, regular)
        rows += [_row(path, files[path], blobs[path]) for path in new_paths]
        trees: dict[str, str] | None = None
        if whole:
            trees = {}
            store.write_tree({p: o for p, o in files.items() if not p.startswith("manifests/")}, trees)
        manifest = seal(signer, "manifest", manifest_body(rows, after, trees))
        files[entry_path("manifest", manifest)] = store.write_blobs([manifest])[0]
        commit = store.commit(store.write_tree(files), [old] if old else [], f"{message}: {len(new_paths)} record(s)")
        if store.update_ref(ref, commit, old):
            return len(new_paths)
    raise RuntimeError(f"{ref} kept moving while vacant wrote to it ({CAS_ATTEMPTS} attempts): run it again")


def _row(path: str, oid: str, blob: bytes) -> Row:
    """The index row of a record: what a reader of its ref keeps of it (vacant/share/team.py)."""
    _, kind, _, _, _, summary = shape_of(blob)
    return Row(kind, path.replace("/", "")[-64:], oid, summary)


def _chain(store: GitStore, signer: Signer, current: dict[str, str], regular: bool) -> tuple[list[str], list[Row], bool]:
    """What a new manifest on a ref holding `current` comes after, the rows it must index besides
    the new records (those no intact chain of the author's own manifests indexes), and whether the
    ref is regular and every such record verified, so the new manifest may claim the whole ref."""
    keys = TeamKeys({signer.fingerprint: TeamKey(signer.fingerprint, signer.public_raw, "own")}, [])
    listed = [(path, oid) for path, oid in current.items() if path.startswith("manifests/") and ENTRY.match(path)]
    valid = valid_manifests(keys, signer.fingerprint, listed, store.read_blobs(sorted({o for _, o in listed})), [])
    chained = {name: body for name, body in valid.items() if body.get("after") is not None}
    named = {earlier for body in chained.values() for earlier in body["after"]}
    heads = sorted(name for name in chained if name not in named)
    reached: dict[tuple[str, str], Row] = {}
    for head in heads:
        rows = chain_rows(head, chained)
        if rows is None:  # a gap in the chain: a new one starts here, indexing the whole ref again
            heads, reached = [], {}
            break
        reached.update(((row.name, row.oid), row) for row in rows)
    whole = regular
    missing = [(path, oid) for path, oid in current.items() if ENTRY.match(path) and not path.startswith("manifests/")
               and (path.replace("/", "")[-64:], oid) not in reached]
    blobs = store.read_blobs(sorted({oid for _, oid in missing}))
    rows = []
    for path, oid in missing:
        data = blobs.get(oid)
        verdict = check_blob(keys, data, {}, oid) if data is not None else "missing"
        if isinstance(verdict, str) or placement(keys, verdict, signer.fingerprint, path) is not None:
            whole = False  # someone else's bytes on one's own ref: never indexed, so no claim on the whole ref
            continue
        rows.append(Row(verdict[2], verdict[0], oid, verdict[4]))
    return heads, rows, whole


def cache_path(root: Path) -> Path:
    return state_dir(root) / "share" / "published.json"


def publish(root: Path, store: GitStore, signer: Signer) -> Made:
    """Put this workspace's new or grown runs on one's own author ref."""
    path = cache_path(root)
    cache = load_json(path, {})
    if not store.refs(AUTHORS + signer.fingerprint):
        cache.pop(signer.fingerprint, None)  # the ref is gone (deleted, a new clone): publish everything again
    made = make_records(root, signer, cache, store)
    if made.blobs:
        add_entries(store, signer, made.blobs, "vacant: records")
    save_json(path, cache)
    return made
