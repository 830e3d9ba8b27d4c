"""git plumbing for shared records: blobs, trees, commits and refs, under `refs/vacant/` only.

Contract:
- Nothing here touches the working tree, the index, HEAD or any branch: objects are written with
  hash-object and mktree, commits with commit-tree, refs with update-ref. Every ref write goes
  through `_guard`, which refuses any name outside `refs/vacant/` or that git itself would refuse.
- `update_ref` is a compare-and-swap on the old value: two writers never lose each other's work.
- `push` never forces; it reports each ref's outcome so the caller can merge and retry.
- Commands run with a fixed identity and no signing, prompts or pager, so a CI machine without
  `user.name` works and a credential prompt cannot hang it.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Iterator
from typing import IO, NamedTuple

from vacant.core import children

NAMESPACE = "refs/vacant/"
AUTHORS = NAMESPACE + "authors/"  # one ref per signing key: refs/vacant/authors/<fingerprint>
_SAFE_REF = re.compile(r"^refs/vacant/[A-Za-z0-9][A-Za-z0-9/_.-]*$")
NETWORK_TIMEOUT_S = 600.0
LOCAL_TIMEOUT_S = 300.0


class GitError(RuntimeError):
    """A git command failed; the message carries git's own words."""


class TreeEntry(NamedTuple):  # a tuple, not a dataclass: a team's trees list tens of thousands
    mode: str
    type: str
    oid: str
    path: str


_TREE_LINE = re.compile(r"([^ \0]*) ([^ \0]*) ([^\t\0]*)\t([^\0]*)\0")  # `ls-tree -z`: mode type oid TAB path NUL


@dataclass(frozen=True)
class PushResult:
    ref: str
    flag: str  # git's porcelain flag: ' ' fast-forward, '*' new, '=' up to date, '!' rejected
    summary: str

    @property
    def ok(self) -> bool:
        return self.flag in (" ", "*", "=")


class GitStore:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat", "LC_ALL": "C",
                    "GIT_AUTHOR_NAME": "vacant", "GIT_AUTHOR_EMAIL": "vacant@localhost",
                    "GIT_COMMITTER_NAME": "vacant", "GIT_COMMITTER_EMAIL": "vacant@localhost"}
        self._zero: str | None = None

    def git(self, *args: str, data: bytes | None = None, network: bool = False,
            ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess[bytes]:
        # fetch and push keep the terminal (ssh may ask for a passphrase); an interrupt kills them all the same
        proc = children.run(["git", "-C", str(self.root), *args], input=data, env=self.env,
                            timeout=NETWORK_TIMEOUT_S if network else LOCAL_TIMEOUT_S, own_group=not network)
        if proc.returncode not in ok:
            words = proc.stderr.decode(errors="replace").strip() or proc.stdout.decode(errors="replace").strip()
            raise GitError(f"git {args[0]} failed ({proc.returncode}): {words[:500]}")
        return proc

    def is_repository(self) -> bool:
        return self.git("rev-parse", "--git-dir", ok=(0, 128)).returncode == 0

    @property
    def zero(self) -> str:
        if self._zero is None:
            fmt = self.git("rev-parse", "--show-object-format", ok=(0, 128)).stdout.decode().strip()
            self._zero = "0" * (64 if fmt == "sha256" else 40)
        return self._zero

    # -- reading ------------------------------------------------------------------------------

    def refs(self, prefix: str) -> dict[str, str]:
        """Every ref under `prefix` -> the object it names."""
        out = self.git("for-each-ref", "--format=%(objectname) %(refname)", prefix).stdout.decode()
        pairs = (line.split(" ", 1) for line in out.splitlines() if line)
        return {name: oid for oid, name in pairs}

    def delete_namespace(self) -> list[str]:
        """Every local ref under refs/vacant/ deleted in one transaction (each only if it still names
        what was read: a sync meanwhile wins); the names deleted. The remote's copies stay."""
        found = self.refs(NAMESPACE)
        if found:
            script = "".join(f"delete {name} {oid}\n" for name, oid in sorted(found.items()))
            self.git("update-ref", "--stdin", data=script.encode())
        return sorted(found)

    def list_tree(self, commit: str) -> list[TreeEntry]:
        """Every blob (and other leaf) under the commit's tree, with its full path."""
        out = self.git("ls-tree", "-r", "-z", "--full-tree", commit).stdout
        return list(map(TreeEntry._make, _TREE_LINE.findall(out.decode(errors="replace"))))

    def read_blobs(self, oids: list[str]) -> dict[str, bytes]:
        """The bytes of each blob, in one `cat-file --batch --buffer`; a missing object is left out."""
        return dict(self.stream_blobs(oids))

    def stream_blobs(self, oids: list[str]) -> Iterator[tuple[str, bytes]]:
        """`read_blobs` as (id, bytes) in the order asked, each given as soon as git has written it,
        so its reader works while git inflates the next (a team's manifests are megabytes). Leaving
        the loop early kills git."""
        if not oids:
            return
        with self._batch(["cat-file", "--batch", "--buffer"], "".join(f"{oid}\n" for oid in oids).encode()) as out:
            yield from _batch_blobs(out)

    def read_objects(self, names: list[str]) -> list[tuple[str, bytes] | None]:
        """Each named object's type and bytes (None where it is missing), in the order asked, in one
        `cat-file --batch`; a name is anything cat-file takes (`<commit>^{tree}`, an object id)."""
        if not names:
            return []
        out = self._batch_output(["cat-file", "--batch", "--buffer"], "".join(f"{name}\n" for name in names).encode())
        found: list[tuple[str, bytes] | None] = []
        position = 0
        while position < len(out) and len(found) < len(names):
            end = out.index(b"\n", position)
            header = out[position:end].decode(errors="replace").split(" ")
            position = end + 1
            if len(header) != 3 or header[-1] == "missing":
                found.append(None)
                continue
            size = int(header[2])
            found.append((header[1], out[position:position + size]))
            position += size + 1
        return found + [None] * (len(names) - len(found))

    def _batch_output(self, args: list[str], request: bytes) -> bytes:
        """The output of a local git command fed `request`, read to its end in one blocking read (a
        poll loop woke for every few KB git wrote)."""
        with self._batch(args, request) as out:
            return out.read()

    @contextlib.contextmanager
    def _batch(self, args: list[str], request: bytes) -> Iterator[IO[bytes]]:
        """A local git command's output, to read, the command fed `request` from a temporary file
        (fed through a pipe, ids were written 512 bytes a poll, which cost more than git's own
        reading at tens of thousands of records); a watchdog kills git at the timeout, and leaving
        early kills it too. Raises GitError when git failed."""
        with tempfile.TemporaryFile() as source, tempfile.TemporaryFile() as errors:
            source.write(request)
            source.seek(0)
            proc = children.spawn(["git", "-C", str(self.root), *args], stdin=source, stdout=subprocess.PIPE,
                                  stderr=errors, env=self.env)
            watchdog = threading.Timer(LOCAL_TIMEOUT_S, children.kill_group, (proc.pid,))
            try:
                watchdog.start()
                assert proc.stdout is not None  # a PIPE
                yield proc.stdout
                watchdog.cancel()  # before the wait: a pid not yet reaped is never someone else's
                proc.wait()
            finally:
                watchdog.cancel()
                children.release(proc)
            if proc.returncode != 0:
                errors.seek(0)
                said = errors.read().decode(errors="replace").strip()[:500]
                raise GitError(f"git {args[0]} failed ({proc.returncode}): {said or 'killed at the timeout'}")

    def file_at_head(self, path: str) -> bytes | None:
        proc = self.git("cat-file", "blob", f"HEAD:{path}", ok=(0, 128))
        return proc.stdout if proc.returncode == 0 else None

    def files_at_head(self, directory: str) -> list[str]:
        """The paths of the files directly in `directory` at HEAD (none when it is not a directory there)."""
        proc = self.git("ls-tree", "-z", "HEAD", "--", directory.rstrip("/") + "/", ok=(0, 128))
        if proc.returncode != 0:
            return []
        entries = (line.split("\t", 1) for line in proc.stdout.decode(errors="replace").split("\0") if line)
        return sorted(path for meta, path in entries if meta.split()[1] == "blob")

    def is_ancestor(self, older: str, newer: str) -> bool:
        return self.git("merge-base", "--is-ancestor", older, newer, ok=(0, 1)).returncode == 0

    # -- writing objects ------------------------------------------------------------------------

    def write_blobs(self, blobs: list[bytes]) -> list[str]:
        """Store blobs as git objects (one `hash-object --stdin-paths`); their ids, in order."""
        if not blobs:
            return []
        with tempfile.TemporaryDirectory(prefix="vacant-share-") as scratch:
            paths = []
            for number, blob in enumerate(blobs):
                path = Path(scratch) / str(number)
                path.write_bytes(blob)
                paths.append(str(path))
            out = self.git("hash-object", "-w", "--no-filters", "--stdin-paths",
                           data=("\n".join(paths) + "\n").encode()).stdout.decode().split()
        if len(out) != len(blobs):
            raise GitError(f"git hash-object wrote {len(out)} of {len(blobs)} objects")
        return out

    def write_tree(self, files: dict[str, str], tops: dict[str, str] | None = None) -> str:
        """A tree (with subtrees) holding `path -> blob id`; one `mktree --batch` for all levels.
        `tops`, when given, gets the id of each top-level subtree by name."""
        nested: dict = {}
        for path, oid in files.items():
            parts = path.split("/")
            node = nested
            for part in parts[:-1]:
                node = node.setdefault(part, {})
            node[parts[-1]] = oid
        proc = children.spawn(["git", "-C", str(self.root), "mktree", "--batch", "-z"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env)
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None  # all PIPEs
        try:
            try:
                root = _write_node(proc.stdin, proc.stdout, nested, tops)
            finally:
                proc.stdin.close()
                error = proc.stderr.read()
                if proc.wait(timeout=LOCAL_TIMEOUT_S) != 0:
                    raise GitError(f"git mktree failed: {error.decode(errors='replace')[:500]}")
        finally:
            children.release(proc)
        return root

    def commit(self, tree: str, parents: list[str], message: str) -> str:
        args = ["commit-tree", "--no-gpg-sign", tree]
        for parent in parents:
            args += ["-p", parent]
        return self.git(*args, "-m", message).stdout.decode().strip()

    def update_ref(self, ref: str, new: str, old: str | None) -> bool:
        """Set `ref` to `new` only if it still is `old` (None: only if it does not exist)."""
        _guard(self, ref)
        proc = self.git("update-ref", "-m", "vacant sync", ref, new, old or self.zero, ok=(0, 1, 128))
        return proc.returncode == 0

    # -- the network ----------------------------------------------------------------------------

    def fetch(self, remote: str, refspecs: list[str]) -> None:
        for spec in refspecs:
            _guard(self, spec.lstrip("+").split(":", 1)[1].replace("*", "x"))
        self.git("fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules",
                 remote, *refspecs, network=True)

    def push(self, remote: str, updates: dict[str, str]) -> list[PushResult]:
        """Push `ref -> oid` without force; one result per ref (rejections are results, not errors)."""
        if not updates:
            return []
        for ref in updates:
            _guard(self, ref)
        specs = [f"{oid}:{ref}" for ref, oid in sorted(updates.items())]
        proc = self.git("push", "--porcelain", "--no-follow-tags", remote, *specs,
                        network=True, ok=(0, 1))
        results = []
        for line in proc.stdout.decode(errors="replace").splitlines():
            parts = line.split("\t")
            if len(parts) >= 2 and ":" in parts[1] and len(parts[0]) == 1:
                results.append(PushResult(parts[1].split(":", 1)[1], parts[0], parts[2] if len(parts) > 2 else ""))
        if proc.returncode != 0 and not any(not r.ok for r in results):
            raise GitError(f"git push failed: {proc.stderr.decode(errors='replace').strip()[:500]}")
        return results


def _write_node(stdin: IO[bytes], stdout: IO[bytes], node: dict, tops: dict[str, str] | None = None) -> str:
    """Write the subtrees first (mktree needs their ids), then this tree; its id."""
    lines = []
    for name, value in sorted(node.items()):
        if isinstance(value, dict):
            oid = _write_node(stdin, stdout, value)
            if tops is not None:
                tops[name] = oid
            lines.append(f"040000 tree {oid}\t{name}")
        else:
            lines.append(f"100644 blob {value}\t{name}")
    stdin.write(("\0".join(lines) + "\0\0").encode() if lines else b"\0")
    stdin.flush()
    return stdout.readline().decode().strip()


def _guard(store: GitStore, ref: str) -> None:
    """Refuse to name anything outside vacant's own namespace (whatever a record or remote says)."""
    if not _SAFE_REF.match(ref) or ".." in ref or "//" in ref or ref.endswith((".lock", "/", ".")):
        raise GitError(f"refusing to write ref {ref!r}: vacant writes only under {NAMESPACE}")
    if store.git("check-ref-format", ref, ok=(0, 1)).returncode != 0:
        raise GitError(f"refusing to write ref {ref!r}: git calls it malformed")


def _batch_blobs(out: IO[bytes]) -> Iterator[tuple[str, bytes]]:
    """The blobs of a `cat-file --batch` output as it is written (other objects and missing ones
    left out); ends at the output's end."""
    while header_line := out.readline():
        header = header_line.decode(errors="replace").rstrip("\n").split(" ")
        if len(header) != 3 or header[1] == "missing":
            continue
        size = int(header[2])
        data = out.read(size + 1)
        if len(data) != size + 1:
            return  # cut short: git was killed (the caller sees its exit status)
        if header[1] == "blob":
            yield header[0], data[:size]
