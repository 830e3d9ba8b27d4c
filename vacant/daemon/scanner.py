"""A Scanner whose full-workspace scan costs what changed, not the size of the tree.

`scan(None)` first syncs with the kernel (the cookie rule), then scans only the dirty paths the
watcher reported (a dirty directory is walked whole), against the same index, with the same
ignore and racy-git rules as `vacant.store.hasher.Scanner`: the result equals what a full scan
would have found (a differential test holds it to that). It falls back to a real full scan, and
records a `rescan` event saying why, when the dirty set cannot be trusted: the daemon just
started (changes made while no daemon ran), the kernel queue overflowed, the watch limit was hit,
the cookie did not come back, or too many paths changed; the event goes to the step log the
caller passes (`scan(log=...)`: the recorder's, for the call being answered). An ignore file among the dirty paths
also means a full scan (which paths count changed), but nothing was lost, so nothing is recorded.
Scoped scans (`scan(paths)`) are the hasher's own. The index is reloaded whenever another
process rewrote it (a fallback hook, the Stop pipeline).
"""

from __future__ import annotations

import gc
import os
import threading
import time
from collections.abc import Iterable
from pathlib import Path

from vacant.core.locations import ensure_state_dir
from vacant.daemon.watcher import Watcher
from vacant.store.hasher import IGNORE_FILES, Index, Scanner, ScanResult
from vacant.store.objects import ObjectStore
from vacant.store.steplog import StepLog

Signature = tuple


def _signature(path: Path) -> Signature:
    try:
        st = os.stat(path)
    except OSError:
        return ()
    return (st.st_ino, st.st_size, st.st_mtime_ns)


class WatchedScanner:
    def __init__(self, root: Path, watcher: Watcher, state: Path | None = None) -> None:
        self.root = Path(root)
        self.state = Path(state) if state is not None else ensure_state_dir(self.root)
        self.watcher = watcher
        self.store = ObjectStore(self.state / "objects")
        self.index_path = self.state / "index"
        self.index = Index.load(self.index_path)
        self._seen_signature = self._signatures()
        self.pending_loss: str | None = "daemon started: changes made while no daemon ran"
        self.lock = threading.RLock()
        self.last_rescan: dict[str, object] | None = None
        self.scans = {"watched": 0, "full": 0, "scoped": 0}

    def _signatures(self) -> Signature:
        return (_signature(self.index_path), _signature(self.index.overlay_path))

    def _scanner(self) -> Scanner:
        if self._signatures() != self._seen_signature:
            self.index = Index.load(self.index_path)  # someone else scanned: trust the disk
        return Scanner(self.root, self.index, self.store, self.state)

    def scan(self, paths: Iterable[str] | None = None, log: StepLog | None = None) -> ScanResult:
        """`log`: where a full scan that stands in for lost events records its `rescan` (the step
        log of the call being answered; None: only `last_rescan` says so)."""
        with self.lock:
            try:
                return self._scan(paths, log)
            finally:
                self._seen_signature = self._signatures()

    def _scan(self, paths: Iterable[str] | None, log: StepLog | None) -> ScanResult:
        scanner = self._scanner()
        if paths is not None:
            self.scans["scoped"] += 1
            return scanner.scan(paths)
        self.watcher.sync()
        dirty, lost = self.watcher.take()
        lost = self.pending_loss or lost
        if lost is not None or any(os.path.basename(rel) in IGNORE_FILES for rel in dirty):
            self.scans["full"] += 1
            result = scanner.scan(None)
            self.pending_loss = None
            # the index just read or rebuilt (40k entries on a big tree) lives as long as the
            # daemon: keep it out of the cyclic collector's passes, which otherwise walk it
            # during the calls (about 0.3 ms a call on the 40k tree); refcounting still frees it
            gc.collect()
            gc.freeze()
            if lost is not None:
                self._record_rescan(lost, result, log)
            return result
        self.scans["watched"] += 1
        if not dirty:
            return ScanResult()
        return scanner.scan(_covering(dirty))

    def _record_rescan(self, why: str, result: ScanResult, log: StepLog | None) -> None:
        self.last_rescan = {"at": time.time(), "why": why, "files": result.files,
                            "seconds": round(result.seconds, 3), "changes": not result.empty}
        if log is not None and (log.run_dir / "events.jsonl").exists():  # a new run's baseline is the scan
            log.emit("rescan", why=why, files=result.files, seconds=round(result.seconds, 3))

    def note_loss(self, why: str) -> None:
        """Something outside the watcher (a restart, a crash in a handler) may have lost events."""
        with self.lock:
            self.pending_loss = self.pending_loss or why


def _covering(dirty: set[str]) -> list[str]:
    """The dirty paths without those under a dirty directory's path (a directory is walked whole)."""
    kept: list[str] = []
    for rel in sorted(dirty):
        if kept and rel.startswith(kept[-1] + "/"):
            continue
        kept.append(rel)
    return kept
