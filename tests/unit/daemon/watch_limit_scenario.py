"""The watch limit, as the daemon lives it, under whichever watchdog this interpreter imports.

test_watched_scanner.py runs `limited_tree` in its own process with the installed watchdog and,
through `python watch_limit_scenario.py DIR`, with the other 7.x release first on sys.path: the
behaviour held is the daemon's, whatever the library does at the limit (7.1.0 leaves a
subdirectory unwatched without a word; 7.1.1 raises while starting, then logs).

A tiny fs.inotify.max_user_watches is simulated by a budget on watchdog's own inotify_add_watch
(ENOSPC once spent, as the kernel answers)."""

from __future__ import annotations

import ctypes
import errno
import json
import sys
from pathlib import Path


class Log:
    """A step log that keeps what the scanner emits."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir  # the scanner records into a run that has begun (events.jsonl)
        (run_dir / "events.jsonl").touch()
        self.events: list[tuple[str, dict]] = []

    def emit(self, event_type: str, **fields) -> None:
        self.events.append((event_type, fields))


def limit_watches(budget: int):
    """Spend `budget` watches, then answer ENOSPC; returns a function that undoes it."""
    from watchdog.observers import inotify_c

    real = inotify_c.inotify_add_watch
    left = [budget]

    def limited(fd, path, mask):
        if left[0] <= 0:
            ctypes.set_errno(errno.ENOSPC)
            return -1
        left[0] -= 1
        return real(fd, path, mask)

    inotify_c.inotify_add_watch = limited

    def undo() -> None:
        inotify_c.inotify_add_watch = real
    return undo


def limited_tree(base: Path, dirs: list[str], budget: int, writes: list[str]) -> dict:
    """A workspace of `dirs`, watched with `budget` watches, then one scan after each file
    written (its path relative to the root). Returns what each scan saw and what was logged."""
    from watchdog.version import VERSION_STRING

    from vacant.daemon.scanner import WatchedScanner
    from vacant.daemon.watcher import Watcher, WatchLimit

    root = base / "ws"
    (root / ".vacant").mkdir(parents=True)
    for rel in dirs:
        (root / rel).mkdir(parents=True, exist_ok=True)
    undo = limit_watches(budget)
    watcher = Watcher(root)
    root_unwatched = False
    try:
        watcher.start()
    except WatchLimit as error:  # the daemon's own handling (lifecycle._serve)
        root_unwatched = True
        watcher.mark_lost(str(error))
    finally:
        undo()
    try:
        scanner = WatchedScanner(root, watcher, root / ".vacant")
        scanner.scan(None)  # the daemon's start: a full scan
        scans = []
        for number, rel in enumerate(writes):
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(str(number))
            log = Log(base)
            delta = scanner.scan(None, log=log).delta()
            scans.append({"wrote": rel, "seen": sorted({*delta["added"], *delta["changed"]}),
                          "logged": [(event, fields.get("why", "")) for event, fields in log.events]})
        return {"watchdog": VERSION_STRING, "root_unwatched": root_unwatched,
                "limited": watcher.limited, "scans": scans, "full_scans": scanner.scans["full"]}
    finally:
        watcher.stop()


if __name__ == "__main__":
    base = Path(sys.argv[1])
    case = json.loads(sys.argv[2])
    print(json.dumps(limited_tree(base, case["dirs"], case["budget"], case["writes"])))
