"""The daemon's eyes: a watchdog observer on the workspace, reduced to a set of dirty paths.

Contract: every change under the root that the kernel reports lands in the dirty set as a
workspace-relative path (both ends of a move), except paths inside the skipped directories
(`.git`, the state directory) and cookie files, which are the scanner's own ignore rules for
walking. Gitignored paths are kept: the scanner decides what they mean, exactly as a full scan
would. Loss is never silent: an inotify queue overflow (watchdog logs it; 7.1.1 also sends an
EventsLostEvent), a watch limit reached (ENOSPC, or EMFILE for the instance limit), or more dirty
paths than `max_dirty` set `lost` to a reason, and the next full-workspace scan must be a rescan.

The watch limit under either behaviour of watchdog 7: 7.1.0 leaves a subdirectory it cannot
watch unwatched without a word; 7.1.1 raises at the start and logs afterwards. Either way the
watcher keeps every watch it could add, marks itself `limited` (every later sync is a loss, so
every full scan a recorded rescan), and raises `WatchLimit` only when the root itself cannot be
watched. `watch_count()` reads the kernel's own
count of this process's inotify watches from /proc.
"""

from __future__ import annotations

import ctypes
import errno
import logging
import os
import threading
import warnings
from collections.abc import Callable
from pathlib import Path

from watchdog import events as wd
from watchdog.observers import Observer
from watchdog.observers.api import DEFAULT_OBSERVER_TIMEOUT, BaseObserver

try:  # the Linux backend, as watchdog 7 lays it out (see _pruned_observer)
    from watchdog.observers.inotify import InotifyEmitter, InotifyObserver, InotifyWatchGroup
    from watchdog.observers.inotify_c import InotifyFD
except ImportError:
    InotifyEmitter = InotifyObserver = InotifyWatchGroup = InotifyFD = None

from vacant.core.locations import SKIP_NAMES, state_dir
from vacant.daemon.cookie import Cookies

MAX_DIRTY = 20_000  # beyond this a rescan is cheaper than a scoped scan of every path
WANTED = [wd.FileCreatedEvent, wd.FileModifiedEvent, wd.FileDeletedEvent, wd.FileMovedEvent,
          wd.FileClosedEvent, wd.FileAttribEvent, wd.DirCreatedEvent, wd.DirDeletedEvent,
          wd.DirMovedEvent, wd.DirAttribEvent]  # not DirModified: its children's own events say what changed
WATCHDOG_LOGGERS = ("watchdog.observers",)  # the inotify modules log through it
EVENTS_LOST = getattr(wd, "EventsLostEvent", None)  # watchdog 7.1.1: an overflow as an event too
if EVENTS_LOST is not None:
    WANTED.append(EVENTS_LOST)
UNWATCHABLE = (errno.ENOSPC, errno.EMFILE)  # the kernel's watch and instance limits

# A directory replaced at the same path keeps watchdog's watch for that path, whose callback it
# then overwrites with the same one, warning each time: nothing is lost, so nothing to say.
warnings.filterwarnings("ignore", message="Callback with id .* already exists for watch", category=RuntimeWarning)


class Watcher:
    def __init__(self, root: Path, max_dirty: int = MAX_DIRTY) -> None:
        self.root = Path(root).resolve()
        state = state_dir(self.root).resolve()
        self.skip_abs = [state]
        inside = state == self.root or self.root in state.parents
        self.cookies = Cookies(state if inside else self.root)
        self.max_dirty = max_dirty
        self.lock = threading.Lock()
        self.dirty: set[str] = set()
        self.lost: str | None = None  # why events may have been missed since the last rescan
        self.events = 0
        self.observer = None
        self.limited: str | None = None  # set when a watch could not be added (the kernel's limit)
        self.on_root_gone = None  # called when the workspace itself is deleted or moved away
        self._log_handler: logging.Handler | None = None

    # -- what the handler sees -------------------------------------------------------------

    def _relative(self, path: str) -> str | None:
        if self.cookies.is_cookie(path):
            return None
        try:
            rel = os.path.relpath(path, self.root)
        except ValueError:
            return None
        if rel == "." or rel.startswith(".."):
            return None
        parts = rel.split(os.sep)
        if parts[0] in SKIP_NAMES or ".git" in parts:
            return None
        absolute = Path(path)
        if any(absolute == skip or skip in absolute.parents for skip in self.skip_abs):
            return None
        return "/".join(parts)

    def on_event(self, event: wd.FileSystemEvent) -> None:
        if EVENTS_LOST is not None and isinstance(event, EVENTS_LOST):
            self._lost_locked("inotify queue overflow")
            return
        paths = [os.fsdecode(event.src_path)]
        gone = paths[0] in (str(self.root), str(self.skip_abs[0]))  # the workspace or its state directory
        if gone and event.event_type in ("deleted", "moved") and self.on_root_gone:
            self.on_root_gone()
        if getattr(event, "dest_path", ""):
            paths.append(os.fsdecode(event.dest_path))
        if event.event_type == "created" and self.cookies.is_cookie(paths[0]):
            self.cookies.saw(paths[0])
            return
        rels = [rel for rel in map(self._relative, paths) if rel is not None]
        if not rels:
            return
        with self.lock:
            self.events += 1
            if self.lost is None:
                self.dirty.update(rels)
                if len(self.dirty) > self.max_dirty:
                    self.mark_lost(f"more than {self.max_dirty} changed paths queued")

    def mark_lost(self, why: str) -> None:
        """Events may be missing: the dirty set no longer describes the changes (caller may hold the lock)."""
        self.lost = self.lost or why
        self.dirty.clear()

    def _lost_locked(self, why: str) -> None:
        with self.lock:
            self.mark_lost(why)

    def _unwatched(self, why: str) -> None:
        """A directory below the root got no watch: sticky, every later sync is a loss."""
        self.limited = self.limited or why
        self._lost_locked(self.limited)

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        watcher = self

        class Handler(wd.FileSystemEventHandler):
            def on_any_event(self, event: wd.FileSystemEvent) -> None:
                watcher.on_event(event)

        class LossLog(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                message = record.getMessage().lower()
                if "overflow" in message:
                    watcher._lost_locked("inotify queue overflow")
                elif "limit" in message:
                    watcher._unwatched(record.getMessage())  # sticky: some directory stays unwatched
                elif "unable" in message:
                    watcher._lost_locked(f"watch error: {record.getMessage()}")

        _report_watch_limit()
        self._log_handler = LossLog()
        for name in WATCHDOG_LOGGERS:
            logging.getLogger(name).addHandler(self._log_handler)
        self.observer = _pruned_observer(self.root, self.cookies.directory, self._unwatched)
        self.observer.schedule(Handler(), str(self.root), recursive=True, event_filter=WANTED)
        try:
            self.observer.start()
        except OSError as error:
            self.observer = None
            if error.errno in UNWATCHABLE:
                self.limited = f"inotify watch limit reached (fs.inotify.max_user_watches = {max_user_watches()})" \
                    if error.errno == errno.ENOSPC else "inotify instance limit reached"
                raise WatchLimit(self.limited) from error
            raise

    def stop(self) -> None:
        if self.observer is not None:
            try:
                self.observer.stop()
            except (KeyError, OSError):  # watchdog's own bookkeeping of removed watches; we are leaving anyway
                pass
            self.observer.join(timeout=5)
        if self._log_handler is not None:
            for name in WATCHDOG_LOGGERS:
                logging.getLogger(name).removeHandler(self._log_handler)

    @property
    def alive(self) -> bool:
        return self.observer is not None and self.observer.is_alive()

    # -- what the scanner takes ------------------------------------------------------------

    def sync(self, timeout: float = 5.0) -> None:
        """The cookie rule: every event queued before this call is in the dirty set afterwards
        (or `lost` says why it may not be)."""
        if not self.alive:
            self._lost_locked(self.limited or "the watcher stopped")
            return
        if self.limited:  # not every directory is watched: only a full scan is whole, no cookie to wait for
            self._lost_locked(self.limited)
            return
        if not self.cookies.sync(timeout):
            self._lost_locked(f"cookie not seen within {timeout:g} s")

    def take(self) -> tuple[set[str], str | None]:
        """The dirty paths and the loss reason since the last take, and reset both."""
        with self.lock:
            dirty, lost = self.dirty, self.lost
            self.dirty, self.lost = set(), None
        return dirty, lost


class WatchLimit(OSError):
    pass


def prune_rule(root: Path, keep: Path) -> Callable[[bytes], bool]:
    """Which directories get no inotify watch: those whose events the dirty set drops anyway
    (`.git` at any depth, the other skipped names at the top), except `keep` (the cookie
    directory) and the directories leading to it. Without this every write vacant makes to its
    own state inside `.git` (several per hook call) would wake the watcher's threads."""
    root_b = os.fsencode(root)
    chain = {os.fsencode(keep), *map(os.fsencode, Path(keep).parents)}

    def pruned(path: bytes) -> bool:
        if path in chain or not path.startswith(root_b + b"/"):
            return False
        parts = path[len(root_b) + 1:].split(b"/")
        return parts[0] in SKIP_NAMES_B or b".git" in parts
    return pruned


SKIP_NAMES_B = tuple(os.fsencode(name) for name in SKIP_NAMES)


def _pruned_observer(root: Path, keep: Path, unwatched: Callable[[str], None]):
    """A watchdog observer whose recursive watch leaves out `prune_rule`'s directories, and
    which keeps going past a directory below the root that the kernel's limits leave unwatched
    (told to `unwatched`). It uses watchdog's inotify classes (the `watchdog` pin in
    pyproject.toml names the major version); when they are not what this expects it is a plain
    observer: every directory watched, correct, only busier."""
    if InotifyWatchGroup is None:  # not Linux, or another watchdog layout
        return Observer()
    pruned = prune_rule(root, keep)

    class Group(InotifyWatchGroup):
        def _add_callback(self, path: bytes) -> None:
            if pruned(path):
                return
            try:
                super()._add_callback(path)
            except OSError as error:  # 7.1.1 raises while starting; 7.1.0 never gets here
                if path == self.path or error.errno not in UNWATCHABLE:
                    raise
                unwatched(f"{error.strerror or error} (fs.inotify.max_user_watches = {max_user_watches()}) "
                          f"at {os.fsdecode(path)!r}")

        def _add_all_callbacks(self, path: bytes) -> None:
            if pruned(path):
                return
            self._add_callback(path)
            if self.is_recursive and os.path.isdir(path):
                for top, dirnames, _ in os.walk(path, followlinks=self.follow_symlink):
                    dirnames[:] = [name for name in dirnames if not pruned(os.path.join(top, name))
                                   and (self.follow_symlink or not os.path.islink(os.path.join(top, name)))]
                    for name in dirnames:
                        self._add_callback(os.path.join(top, name))

        def _remove_watch_internally(self, wd) -> None:
            # watchdog 7.1.0 raises KeyError when a path's watch was already dropped (a directory
            # replaced by a file of the same name, then removed): nothing is left to forget.
            # Its own code, not a copy: 7.1.1 keeps the watches in a tree of its own.
            try:
                super()._remove_watch_internally(wd)
            except KeyError:
                pass

    class Emitter(InotifyEmitter):
        def on_thread_start(self) -> None:
            self._inotify = Group(self._inotify_fd, os.fsencode(self.watch.path), is_recursive=self.watch.is_recursive,
                                  event_mask=self.get_event_mask_from_filter(), follow_symlink=self.watch.follow_symlink)

    class PrunedObserver(InotifyObserver):
        def __init__(self) -> None:
            self._inotify_fd = InotifyFD()
            self._inotify_fd.start()
            BaseObserver.__init__(self, Emitter, timeout=DEFAULT_OBSERVER_TIMEOUT, inotify_fd=self._inotify_fd)

    try:
        return PrunedObserver()
    except (TypeError, AttributeError):
        return Observer()


def _report_watch_limit() -> None:
    """watchdog 7.1.0 swallows a failed watch on any directory below the root, ENOSPC included,
    so a tree beyond fs.inotify.max_user_watches would be watched in part without a word. Wrap its
    inotify_add_watch (once per process) to log that case where the loss handler hears it."""
    from watchdog.observers import inotify_c  # the Linux backend only; imported by Observer already

    real = inotify_c.inotify_add_watch
    if getattr(real, "vacant_wrapped", False):
        return

    def add_watch(fd, path, mask):
        wd = real(fd, path, mask)
        if wd == -1 and ctypes.get_errno() == errno.ENOSPC:
            logging.getLogger("watchdog.observers.inotify_c").warning(
                "inotify watch limit reached (fs.inotify.max_user_watches = %s) at %r", max_user_watches(), path)
            ctypes.set_errno(errno.ENOSPC)
        return wd

    add_watch.vacant_wrapped = True
    inotify_c.inotify_add_watch = add_watch


def max_user_watches() -> int | None:
    try:
        return int(Path("/proc/sys/fs/inotify/max_user_watches").read_text())
    except (OSError, ValueError):
        return None


def watch_count() -> int | None:
    """This process's inotify watches, as the kernel counts them (/proc/self/fdinfo)."""
    total, found = 0, False
    try:
        fds = os.listdir("/proc/self/fd")
    except OSError:
        return None
    for fd in fds:
        try:
            if os.readlink(f"/proc/self/fd/{fd}") != "anon_inode:inotify":
                continue
            with open(f"/proc/self/fdinfo/{fd}") as handle:
                total += sum(1 for line in handle if line.startswith("inotify wd:"))
            found = True
        except OSError:
            continue
    return total if found else None
