"""docs/SHARE.md, generated from the shared records' typed definitions (vacant/share/records.py)
and the prose below (`python -m vacant.gendocs --write`; a test fails when the doc drifts)."""

from __future__ import annotations

import inspect
from dataclasses import MISSING, fields

from vacant.core.docgen import GeneratedDoc
from vacant.share.records import (
    LINE_HASH_HEX,
    MAX_RECORD_HASHES,
    MAX_VERSION_LINES,
    Cell,
    Envelope,
    FindingEntry,
    Hunk,
    LineEdit,
    ManifestRecord,
    ReviewIndex,
    PathLines,
    ReadCoverage,
    ReviewRecord,
    RunIndex,
    RunRecord,
    StepEntry,
    _since,
)

# -- the generated doc ----------------------------------------------------------------------------

DOC_HEAD = """Each record is one git blob: the canonical JSON (sorted keys, no spaces, ASCII) of an `Envelope`
plus a newline. Its name in the tree is the sha256 of those bytes, so a record's name says what it
holds. Each author's records live on their own ref, `refs/vacant/authors/<fingerprint>`, a chain
of commits whose tree is `runs/`, `reviews/` and `manifests/`, each `<2 hex>/<62 hex>`. Merging two
versions of a ref is the union of their entries; the figures count each review once by what it
says (its run, seq, cell, score, weight and finding), whoever signed it and however often it was
merged.

The signature is Ed25519 over `b"vacant-share-record\\x00"` followed by the canonical JSON of
`{"v", "kind", "author", "body"}`. Trusted keys are the lines `ed25519 <base64 key> <name>` of the
files `.vacant-team-keys/<name>.pub` (one per person) at the repository root, or of an older single
`.vacant-team-keys` file, read from the committed `HEAD` version. A record is rejected (left out of every
figure, listed by `vacant sync --status`) when its name is not the hash of its bytes, its bytes
are not canonical (a format 2 manifest: its envelope; its body is the bytes its signature covers),
its shape is not the one below, it sits under another author's ref, its author is not a trusted
key, or its signature does not verify.
"""


LINES_DOC = """## Line data and its privacy

A run record of format 2 says, for every path the run changed, which lines each recorded change
wrote, without the lines: `line_key` is the repository's root commit (the smallest id of
`git rev-list --max-parents=0 HEAD`), and a line's hash is the first {hex} hex digits of BLAKE2b
(digest 8 bytes) keyed with that commit id's raw bytes, over the line's text as `vacant blame`
compares it (UTF-8, undecodable bytes replaced, without its line ending or any whitespace, as
`git blame -w` compares lines). From `base` (or the
committed blob `base_blob`) and each edit's `hunks`, any clone rebuilds the hash sequence of every version of the path and carries
authorship through it exactly as `vacant blame` does on the text (vacant/core/linecarry.py), so
`vacant blame FILE --team` names, line by line, the steps of runs recorded on other machines.

Limits, said plainly:
- Privacy: the key is not a secret from anyone who has the repository; it only stops tables
  computed in advance for every repository. Whoever has the repository and the records can test
  a guess for a line: a short or predictable line (`}}`, `DEBUG = True`, a weak password written
  into a file) can be confirmed. The records never hold a line's text.
- Bounds: a path with a version over {version_lines:,} lines, or with a NUL byte (binary), and
  the paths past {record:,} line hashes in one record (paths taken in sorted order) carry no line
  data (`omitted` says why); they, and every path of a format 1 record, are blamed file-level.
- A clone that lacks a record's `base_blob` (the run started from a commit never pushed, or
  rebased away) blames that run file-level until it fetches the commit.
- A clone whose root commit differs (a shallow clone keys by its cut-off commit, a history with
  several roots by the smallest) hashes differently: records keyed otherwise are blamed
  file-level there. CI that publishes line data should fetch the full history.
"""


INDEX_DOC = """## Reading at scale: manifest indexes

A format 2 `ManifestRecord` indexes the records its publication added (`RunIndex`, `ReviewIndex`:
what a reader keeps of each, with the record's name and git blob id) and names the author's
manifests it came after. When, with it, the manifests reachable through `after` index every
record on the author's ref, and the ref holds nothing else, it also says so (`whole`) with the git
tree ids of `runs/` and `reviews/`. A reader then checks the top of the ref's tree, reads and
verifies its manifests (one signature each) and, when one's claim is exactly the ref's `runs/` and
`reviews/`, counts the indexes reachable from it: no record is read and the ref is not listed.
Otherwise (a union nobody signed, an entry vacant did not write, a manifest missing or edited)
the ref is listed, and a record an index names with its exact blob id is counted from the index,
any other verified alone; the author's next publication indexes again what its chain lacks, and
claims the whole ref again when every record on it verifies. The two ways give the same view (a
test holds them to it on generated histories). A manifest's index is signed by its author like
any record: it counts for that author's own records only.
"""


CACHE_DOC = """## Reading at scale: the sealed team cache

Verifying a record costs tens of microseconds (reading it from git, hashing it, checking its
shape; one signature per publication), so a clone verifies each state of the refs once and keeps
what it found, sealed, in its state directory (`share/team/`, `share/authors/`, `share/verified/`;
docs/STORAGE.md): the figures' inputs, the view (when a command reads it), and for a ref that had
to be listed, its snapshot and the verdicts by blob id. A record's shape is checked by one regex
generated from the checks above when its strings need no escape (vacant/share/quickread.py), a
format 2 manifest's by walking its keys in order, its lists of ids checked on their bytes
(vacant/share/quickindex.py), else by the typed parser, which is the definition: neither quick
reader accepts anything the parser refuses.

- **What it is keyed by**: every `refs/vacant/authors/*` ref's name and commit, and the team
  keys' entries at `HEAD` (mode, blob id, path), plus the cache's format. A sync, a rewritten or
  deleted ref, or a commit that adds or removes a key gives another key, and the cache is built
  again from the refs: only the records of refs that moved are read again (per-author snapshots,
  keyed by the ref's commit and the author's trust, and verdicts by blob id per author).
- **What it holds**: only the verdicts of the build: each counted record's summary and each
  rejected record's reason. A record whose signature failed was never counted and is not counted
  from the cache either.
- **Why it is believed**: each file is a header `vacant-sealed <format> <mac>` and its JSON; the
  MAC is HMAC-SHA256 under the person's own key (`~/.config/vacant/key`) over the key above and the
  bytes. A file edited, truncated, replaced by garbage, sealed by someone else or for other refs
  reads as no cache and is rebuilt; it is never an error. Without a usable key nothing is cached.
- **When it is built**: `vacant sync` ends by verifying what it fetched, so the next `vacant
  reputation` (answered before the command line is imported: `vacant/__main__.py`) reads only the
  folded figures' inputs (per-cell sums and each team review's run and finding, by cell, score and weight) and `blame --team`
  the view. Refs moved by hand (`git fetch`) are verified by the first command that reads them.
- **The path index**: each run's verdict lists the paths the record says it changed (its steps and
  line data, up to `MAX_INDEXED_PATHS` of vacant/share/team.py; a record with more is always
  read), so `blame FILE --team` reads only the run records that changed FILE.
"""


def render_doc() -> str:
    lines = ["# Shared records (`vacant sync`)", "", DOC.header(), "", DOC_HEAD]
    for cls in (Envelope, RunRecord, ReviewRecord, ManifestRecord, RunIndex, ReviewIndex, Cell, StepEntry, FindingEntry, ReadCoverage,
                PathLines, LineEdit, Hunk):
        lines += [f"## `{cls.__name__}`", ""]
        if cls.__doc__ and not cls.__doc__.startswith(cls.__name__ + "("):
            lines += [inspect.cleandoc(cls.__doc__), ""]
        lines += ["| key | type | meaning |", "|---|---|---|"]
        for f in fields(cls):
            assert (f.default is MISSING) == (_since(f) == 1)  # only a later format's keys may be absent
            since = f" (format {_since(f)}; absent before)" if _since(f) > 1 else ""
            lines.append(f"| `{f.name}` | {f.metadata['check'].describe} | {f.metadata['doc']}{since} |")
        lines.append("")
    lines += [LINES_DOC.format(hex=LINE_HASH_HEX, version_lines=MAX_VERSION_LINES, record=MAX_RECORD_HASHES),
              INDEX_DOC, CACHE_DOC]
    return "\n".join(lines)


DOC = GeneratedDoc("SHARE.md", render_doc, ("vacant/share/records.py", "vacant/share/sharedoc.py"))
