"""`vacant do` with a program vacant does not know: no hooks at all. A watchdog observer turns each
burst of file changes into one step of the actor `command/<program>` (vacant/platforms/command.py);
it asks the kernel for no open/read/close-nowrite events (a read-only pass would flood the queue),
but for attribute changes (a mode is part of a file's state), and falls back to a full scan after a queue overflow."""

import logging
import os
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Callable

from vacant.attribute.baseline_probe import start as start_probe
from vacant.core.locations import state_dir
from vacant.platforms.all_platforms import load
from vacant.platforms.driver import Driver
from vacant.record.recorder import Recorder


class Watcher:
    """Bursts of file changes -> `change_set` calls of the command platform.

    A burst ends after `gap` seconds without a change. The kernel is asked for creations,
    modifications, attribute changes, deletions, moves and close-after-write only: opens, reads and close-nowrite
    never reach the queue. A kernel queue overflow (watchdog logs it and rebuilds its watches) or
    more dirty paths than MAX_DIRTY make the next burst a full scan."""

    MAX_DIRTY = 5000

    def __init__(self, root: Path, on_burst: Callable[[list[str] | None], None], gap: float) -> None:
        self.root = Path(root).resolve()
        self.skip = [self.root / ".git", state_dir(self.root).resolve()]
        self.on_burst = on_burst
        self.gap = gap
        self.lock = threading.Lock()
        self.dirty: set[str] = set()
        self.overflow = False
        self.last = 0.0
        self.stopping = threading.Event()
        self.events = 0
        self.overflows = 0

    def _skipped(self, path: str) -> bool:
        p = Path(path)
        return any(p == s or s in p.parents for s in self.skip) or not (p == self.root or self.root in p.parents)

    def note(self, *paths: str) -> None:
        kept = [p for p in paths if p and not self._skipped(p)]
        if not kept:
            return
        with self.lock:
            self.events += 1
            if len(self.dirty) + len(kept) > self.MAX_DIRTY:
                self.overflow = True
                self.dirty.clear()
            if not self.overflow:
                self.dirty.update(kept)
            self.last = time.monotonic()

    def queue_overflowed(self) -> None:
        with self.lock:
            self.overflow = True
            self.overflows += 1
            self.last = time.monotonic()

    def start(self) -> None:
        from watchdog import events as wd
        from watchdog.observers import Observer

        watcher = self

        class Handler(wd.FileSystemEventHandler):
            def on_any_event(self, event: wd.FileSystemEvent) -> None:
                paths = [os.fsdecode(event.src_path)]
                if getattr(event, "dest_path", ""):
                    paths.append(os.fsdecode(event.dest_path))
                watcher.note(*paths)

        class Overflow(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                if "overflow" in record.getMessage().lower():
                    watcher.queue_overflowed()

        self.log_handler = Overflow()
        for name in ("watchdog.observers",):  # the inotify modules log through it
            logging.getLogger(name).addHandler(self.log_handler)
        # attribute events too: a mode change (chmod +x) is a change of the file's recorded state
        wanted = [wd.FileCreatedEvent, wd.FileModifiedEvent, wd.FileDeletedEvent, wd.FileMovedEvent,
                  wd.FileClosedEvent, wd.FileAttribEvent, wd.DirCreatedEvent, wd.DirDeletedEvent,
                  wd.DirMovedEvent, wd.DirAttribEvent]
        self.observer = Observer()
        self.observer.schedule(Handler(), str(self.root), recursive=True, event_filter=wanted)
        self.observer.start()
        self.thread = threading.Thread(target=self._loop, name="vacant-do-bursts", daemon=True)
        self.thread.start()

    def _take(self) -> tuple[bool, list[str] | None]:
        with self.lock:
            if not self.dirty and not self.overflow:
                return False, None
            paths = None if self.overflow else sorted(self.dirty)
            self.dirty.clear()
            self.overflow = False
            return True, paths

    def _loop(self) -> None:
        while not self.stopping.wait(min(0.05, self.gap / 4)):
            with self.lock:
                quiet = (self.dirty or self.overflow) and time.monotonic() - self.last >= self.gap
            if quiet:
                self.flush()

    def flush(self) -> None:
        pending, paths = self._take()
        if pending:
            self.on_burst(paths)

    def stop(self, settle: float = 0.3) -> None:
        """After the command exited: let the last events arrive, then record the last burst."""
        time.sleep(settle)
        self.stopping.set()
        self.thread.join()
        self.observer.stop()
        self.observer.join()
        for name in ("watchdog.observers",):  # the inotify modules log through it
            logging.getLogger(name).removeHandler(self.log_handler)
        self.flush()


class CommandDriver(Driver):
    """A program vacant does not know: recorded by watching the workspace, one run per `vacant do`."""

    platform = "command"

    def __init__(self, argv: list[str], root: Path, env: dict[str, str], tmp: Path, gap: float) -> None:
        super().__init__(argv, root, env, tmp)
        self.gap = gap
        self.session = "do-" + time.strftime("%Y%m%d-%H%M%S") + "-" + uuid.uuid4().hex[:6]
        self.bursts = 0
        self.burst_lock = threading.Lock()
        self.watcher: Watcher | None = None

    def call(self, payload: dict[str, Any]) -> None:
        platform = load("command")
        payload = {"session": self.session, "workspace": str(self.root), "program": self.program,
                   "command": self.argv, **payload}
        Recorder(self.root, self.session, platform, start_probe=start_probe).handle(platform.parse(payload, self.env))

    def burst(self, paths: list[str] | None) -> None:
        with self.burst_lock:
            self.bursts += 1
            self.call({"event": "burst", "burst": self.bursts, "paths": paths})

    def before_start(self) -> None:
        self.call({"event": "start"})  # the baseline (state_0), before the command can write
        self.watcher = Watcher(self.root, self.burst, self.gap)
        self.watcher.start()

    def finish_round(self, run: Path | None) -> None:
        if self.watcher is not None:
            self.watcher.stop()
            self.watcher = None
        self.call({"event": "stop"})
        self.call({"event": "end", "reason": "process exited"})

    def close(self) -> None:
        if self.watcher is not None:  # interrupted mid-round: stop observing without a final burst
            self.watcher.stopping.set()
            self.watcher.observer.stop()
