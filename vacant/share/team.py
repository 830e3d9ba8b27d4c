"""Reading the team's records: every author ref, each record verified, the union deduplicated.

Contract:
- A record counts only if its name is the sha256 of its bytes, its bytes are the canonical
  documented shape, it sits under its own author's ref, its author is a trusted key (committed
  `.vacant-team-keys` at HEAD), and its Ed25519 signature verifies. Anything else is a `Rejected`
  with its reason, kept out of every figure.
- The same review counts once (by `body_id`), whoever published it and however many refs hold it.
  For a run, the record covering the most of its step log (`through_seq`) is the one shown.
- Refs under `refs/vacant/authors/` whose name is not a fingerprint are listed, never read.
- Two caches spare re-checking signatures on every read: verified blobs by git object id
  (`.git/vacant/share/verified.json`) and, per author ref, what its commit held
  (`.git/vacant/share/authors/`), used only while the ref names the same commit and the author's
  trust at HEAD is unchanged, so removing a key from the team file takes effect at once. Both are
  speed-ups for the person who owns the state directory, not trust anchors; deleting them costs
  time only.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from vacant.core.locations import state_dir
from vacant.share.gitstore import GitStore
from vacant.share.publish import AUTHORS, ENTRY, load_json, save_json
from vacant.share.records import (
    RecordError,
    RunRecord,
    body_id,
    parse_blob,
    signed_bytes,
)
from vacant.share.signing import TEAM_KEY_SUFFIX, TEAM_KEYS_FILE, TeamKeys, parse_team_keys

FINGERPRINT = re.compile(r"^[0-9a-f]{32}$")
DIR_KINDS = {"runs": "run", "reviews": "review", "manifests": "manifest"}
MISNAMED = "content does not match its name (edited after it was written)"


@dataclass(frozen=True)
class Rejected:
    ref: str
    path: str
    oid: str
    reason: str

    def to_json(self) -> dict[str, str]:
        return asdict(self)


@dataclass(frozen=True)
class Counted:
    """A verified record: who signed it and what it says (a review's body, a run's summary)."""
    id: str
    author: str
    oid: str
    body: dict[str, Any]


@dataclass
class TeamView:
    keys: TeamKeys
    reviews: dict[str, Counted] = field(default_factory=dict)
    runs: dict[str, Counted] = field(default_factory=dict)
    rejected: list[Rejected] = field(default_factory=list)
    ignored_refs: list[str] = field(default_factory=list)
    per_author: dict[str, int] = field(default_factory=dict)  # reviews counted, by signer


def team_keys(store: GitStore) -> TeamKeys:
    """The keys committed at HEAD: each `.vacant-team-keys/<name>.pub` (one file per person, so two
    people adding theirs never conflict), or the older single `.vacant-team-keys` file."""
    data = store.file_at_head(TEAM_KEYS_FILE)
    if data is not None:
        return parse_team_keys(data.decode(errors="replace"))
    keys = TeamKeys({}, [])
    for path in store.files_at_head(TEAM_KEYS_FILE):
        if not path.endswith(TEAM_KEY_SUFFIX):
            continue  # a README beside the keys, say
        blob = store.file_at_head(path)
        one = parse_team_keys(blob.decode(errors="replace") if blob is not None else "", source=path)
        keys.keys.update(one.keys)
        keys.problems += one.problems
    return keys


def cache_path(root: Path) -> Path:
    return state_dir(root) / "share" / "verified.json"


def author_refs(store: GitStore, view: TeamView, prefix: str = AUTHORS) -> dict[str, str]:
    """Fingerprint -> commit for every well-named author ref; the others go to `ignored_refs`."""
    found = {}
    for ref, oid in sorted(store.refs(prefix).items()):
        name = ref[len(prefix):]
        if FINGERPRINT.match(name):
            found[name] = oid
        else:
            view.ignored_refs.append(ref)
    return found


def read_team(root: Path, store: GitStore, kinds: tuple[str, ...] = ("run", "review"),
              prefix: str = AUTHORS) -> TeamView:
    view = TeamView(team_keys(store))
    cache = _OidCache(cache_path(root))
    for author, commit in author_refs(store, view, prefix).items():
        trusted = author in view.keys.keys
        snap_path = snapshot_dir(root) / f"{author}.{'-'.join(sorted(kinds))}.json"
        snap = load_json(snap_path, None)
        if not isinstance(snap, dict) or snap.get("commit") != commit or snap.get("trusted") != trusted:
            snap = {"commit": commit, "trusted": trusted, **_read_author(store, view.keys, cache, author, commit, kinds)}
            save_json(snap_path, snap)
        for kind, record_id, oid, body in snap["counted"]:
            _count(view, Counted(record_id, author, oid, body), kind)
        view.rejected += [Rejected(prefix + author, path, oid, reason) for path, oid, reason in snap["rejected"]]
    cache.save()
    return view


def snapshot_dir(root: Path) -> Path:
    """One file per author ref and kinds read: what its commit held, verified (valid while the
    ref names the same commit and the author's trust is unchanged)."""
    return state_dir(root) / "share" / "authors"


class _OidCache:
    """Verified blobs by git object id, loaded only when some author ref has to be read again."""

    def __init__(self, path: Path) -> None:
        self.path, self.entries, self.size = path, None, 0

    def get(self) -> dict[str, list[Any]]:
        if self.entries is None:
            self.entries = load_json(self.path, {})
            self.size = len(self.entries)
        return self.entries

    def save(self) -> None:
        if self.entries is not None and len(self.entries) != self.size:
            save_json(self.path, self.entries)


def _read_author(store: GitStore, keys: TeamKeys, oid_cache: _OidCache, author: str, commit: str,
                 kinds: tuple[str, ...]) -> dict[str, list[Any]]:
    """Every entry of one author's commit: counted [kind, id, oid, body] or rejected [path, oid, reason].
    The author's valid manifests are read first; a record they list needs no signature check of its own."""
    rejected: list[Any] = []
    manifests, placed = [], []
    for entry in store.list_tree(commit):
        match = ENTRY.match(entry.path)
        if not match or entry.mode != "100644" or entry.type != "blob":
            rejected.append([entry.path, entry.oid, "unexpected entry: not runs|reviews|manifests/<2 hex>/<62 hex>"])
        elif match.group(1) == "manifests":
            manifests.append((entry.path, entry.oid))
        elif DIR_KINDS[match.group(1)] in kinds:
            placed.append((entry.path, entry.oid))
    cache = oid_cache.get()
    blobs = store.read_blobs(sorted({oid for _, oid in manifests + placed if oid not in cache}))
    vouched: set[str] = set()
    for _, _, _, body in _verify(keys, cache, blobs, author, manifests, set(), rejected):
        vouched.update(body["records"])
    return {"counted": _verify(keys, cache, blobs, author, placed, vouched, rejected), "rejected": rejected}


def _verify(keys: TeamKeys, cache: dict[str, list[Any]], blobs: dict[str, bytes], author: str,
            placed: list[tuple[str, str]], vouched: set[str], rejected: list[Any]) -> list[Any]:
    counted = []
    for tree_path, oid in placed:
        verdict: list[Any] | str | None = cache.get(oid)
        if verdict is None:
            data = blobs.get(oid)
            name = tree_path.replace("/", "")[-64:]
            named = data is None or hashlib.sha256(data).hexdigest() == name
            verdict = _check_blob(keys, data, cache, oid, author if name in vouched else None) if named else MISNAMED
        reason = verdict if isinstance(verdict, str) else _placement(keys, verdict, author, tree_path)
        if reason or not isinstance(verdict, list):
            rejected.append([tree_path, oid, reason or "unreadable"])
        else:
            counted.append([verdict[2], verdict[3], oid, verdict[4]])
    return counted


def _check_blob(keys: TeamKeys, data: bytes | None, cache: dict[str, list[Any]], oid: str,
                vouched_by: str | None = None) -> list[Any] | str:
    """Verify one blob's shape and signature; cache the verdict when it does not depend on trust.
    `vouched_by`: a valid manifest of that author lists these exact bytes, which stands in for the
    record's own signature only when the record names the same author."""
    if data is None:
        return "object missing from the repository"
    try:
        envelope, body = parse_blob(data)
    except RecordError as error:
        return f"malformed: {error}"
    if envelope.author not in keys.keys:
        return f"unknown key {envelope.author} (not in {TEAM_KEYS_FILE} at HEAD)"
    signed = signed_bytes(envelope.kind, envelope.author, envelope.body, envelope.v)
    if vouched_by != envelope.author and not keys.verify(envelope.author, signed, envelope.sig):
        return f"bad signature: edited after signing, or not signed by {envelope.author}"
    summary = ({"run": body.run, "through_seq": body.through_seq, "lines": bool(body.lines), "paths": _paths(body)}
               if envelope.kind == "run" else envelope.body)
    verdict = [hashlib.sha256(data).hexdigest(), envelope.author, envelope.kind, body_id(envelope.kind, envelope.body),
               summary]
    cache[oid] = verdict
    return verdict


def _placement(keys: TeamKeys, verdict: list[Any], author: str, tree_path: str) -> str | None:
    sha, signer, kind = verdict[0], verdict[1], verdict[2]
    directory, fan, rest = tree_path.split("/")
    if fan + rest != sha:
        return MISNAMED
    if DIR_KINDS[directory] != kind:
        return f"a {kind} record under {directory}/"
    if signer != author:
        return f"signed by {signer}, found under another author's ref"
    if signer not in keys.keys:
        return f"unknown key {signer} (not in {TEAM_KEYS_FILE} at HEAD)"
    return None


def _count(view: TeamView, counted: Counted, kind: str) -> None:
    if kind == "review":
        if counted.id in view.reviews:
            return
        view.reviews[counted.id] = counted
        view.per_author[counted.author] = view.per_author.get(counted.author, 0) + 1
    else:
        run = counted.body["run"]
        held = view.runs.get(run)
        if held is not None and _rank(held) >= _rank(counted):
            return
        view.runs[run] = counted


def _rank(counted: Counted) -> tuple[int, bool, str]:
    """Which record of a run is shown: the one covering the most of its log, then one with line
    data (a run published again by a newer vacant), then a fixed choice. Verdicts cached before
    format 2 have no `lines` key: they were all format 1, without line data."""
    return counted.body["through_seq"], bool(counted.body.get("lines")), counted.oid


MAX_INDEXED_PATHS = 2000  # a run that changed more is not indexed (read whatever path is asked)


def _paths(body: RunRecord) -> list[str] | None:
    """The path index of a run record: every path it says it changed (steps and line data)."""
    found = {path for step in body.steps for path in step.changed} | {item.path for item in body.lines or ()}
    return sorted(found) if len(found) <= MAX_INDEXED_PATHS else None


def touches(counted: Counted, path: str) -> bool:
    """Whether a verified run record may have changed `path`, by the index its verdict holds (a
    verdict cached before the index, or a run over the cap, is read: never a guess)."""
    paths = counted.body.get("paths")
    return paths is None or path in paths


def run_records(store: GitStore, view: TeamView, path: str | None = None) -> list[RunRecord]:
    """The typed record shown for each run (verified when `view` was read), oldest first: what a
    reader of another machine's runs (who changed which path, from which commit) starts from.
    `path`: only the records whose path index says they changed it are read."""
    chosen = [counted for counted in view.runs.values() if path is None or touches(counted, path)]
    blobs = store.read_blobs([counted.oid for counted in chosen])
    found = [parse_blob(blobs[counted.oid])[1] for counted in chosen if counted.oid in blobs]
    return sorted(found, key=lambda record: (record.started, record.run))
