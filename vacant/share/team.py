"""Reading the team's records: every author ref, each record verified, the union deduplicated.

Contract:
- A record counts only if its name is the sha256 of its bytes, its bytes are the canonical
  documented shape, it sits under its own author's ref, its author is a trusted key (committed
  `.vacant-team-keys` at HEAD), and its Ed25519 signature verifies. Anything else is a `Rejected`
  with its reason, kept out of every figure.
- The same review counts once (by `body_id`), whoever published it and however many refs hold it.
  For a run, the record covering the most of its step log (`through_seq`) is the one shown.
- Refs under `refs/vacant/authors/` whose name is not a fingerprint are listed, never read.
- A cache of verified blobs (`.vacant/share/verified.json`, by git object id) spares re-checking
  signatures on every read; whether the author is trusted is decided at every read, so removing
  a key from the team file takes effect at once. The cache is a speed-up for the person who owns
  the state directory, not a trust anchor.
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
from vacant.share.records import RecordError, body_id, parse_blob, signed_bytes
from vacant.share.signing import TEAM_KEYS_FILE, TeamKeys, parse_team_keys

FINGERPRINT = re.compile(r"^[0-9a-f]{32}$")
DIR_KINDS = {"runs": "run", "reviews": "review"}
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
    data = store.file_at_head(TEAM_KEYS_FILE)
    return parse_team_keys(data.decode(errors="replace") if data is not None else "")


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
    path = cache_path(root)
    cache: dict[str, list[Any]] = load_json(path, {})
    size = len(cache)
    placed: list[tuple[str, str, str, str]] = []  # (ref, author, tree path, blob oid)
    for author, commit in author_refs(store, view, prefix).items():
        ref = prefix + author
        for entry in store.list_tree(commit):
            match = ENTRY.match(entry.path)
            if not match or entry.mode != "100644" or entry.type != "blob":
                view.rejected.append(Rejected(ref, entry.path, entry.oid, "unexpected entry: not runs|reviews/<2 hex>/<62 hex>"))
            elif DIR_KINDS[match.group(1)] in kinds:
                placed.append((ref, author, entry.path, entry.oid))
    fresh = [oid for _, _, _, oid in placed if oid not in cache]
    blobs = store.read_blobs(sorted(set(fresh)))
    for ref, author, tree_path, oid in placed:
        verdict: list[Any] | str | None = cache.get(oid)
        if verdict is None:
            data = blobs.get(oid)
            named = data is None or hashlib.sha256(data).hexdigest() == tree_path.replace("/", "")[-64:]
            verdict = _check_blob(view.keys, data, cache, oid) if named else MISNAMED
        reason = verdict if isinstance(verdict, str) else _placement(view.keys, verdict, author, tree_path)
        if reason or not isinstance(verdict, list):
            view.rejected.append(Rejected(ref, tree_path, oid, reason or "unreadable"))
            continue
        _count(view, Counted(verdict[3], verdict[1], oid, verdict[4]), verdict[2])
    if len(cache) != size:
        save_json(path, cache)
    return view


def _check_blob(keys: TeamKeys, data: bytes | None, cache: dict[str, list[Any]], oid: str) -> list[Any] | str:
    """Verify one blob's shape and signature; cache the verdict when it does not depend on trust."""
    if data is None:
        return "object missing from the repository"
    try:
        envelope, body = parse_blob(data)
    except RecordError as error:
        return f"malformed: {error}"
    if envelope.author not in keys.keys:
        return f"unknown key {envelope.author} (not in {TEAM_KEYS_FILE} at HEAD)"
    if not keys.verify(envelope.author, signed_bytes(envelope.kind, envelope.author, envelope.body), envelope.sig):
        return f"bad signature: edited after signing, or not signed by {envelope.author}"
    summary = envelope.body if envelope.kind == "review" else {"run": body.run, "through_seq": body.through_seq}
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
        if held is not None and (held.body["through_seq"], held.oid) >= (counted.body["through_seq"], counted.oid):
            return
        view.runs[run] = counted
