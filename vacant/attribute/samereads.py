"""Same inputs, same answer: a selected test run's result reused on another state whose files that
run read are the same.

A selected pytest or unittest run notes what it read under the check's directory
(vacant.policy.contract.runners: the files it opened, the directories it listed, whether it started another
process). A deterministic
test that read the same bytes and saw the same directory listings took the same path and gave the
same answer, so on a state (recorded or constructed) that agrees with a traced run on all of them
the run is not repeated. A run that started a process, or was not traced, is never reused; a flaky
check is caught apart from this (its re-runs are never cached). What the trace cannot see: a file
the test only stat()s, the time, the environment, anything outside the check's directory (the
same for every state of one replay).

A compiled module read from `__pycache__` stands for its source too (the import system only
stat()s the source when the cached bytecode is current).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from vacant.policy.contract.checks import CheckResult
from vacant.store.states import Manifest

MISSING = ("missing",)
MAX_TRACED = 64  # traced runs kept per (check, selection): enough for a long run's bisection


def content(manifest: Manifest, path: str) -> object:
    """A path's content on `manifest` (kind, object key, mode), or MISSING."""
    entry = manifest.get(path)
    if entry is None:
        return MISSING
    kind, _size, _mtime, key, mode = entry
    return (kind, key, mode)


def children(manifest: Manifest, directory: str) -> frozenset[str]:
    """The names directly under `directory` ("." for the top) on `manifest`."""
    prefix = "" if directory in (".", "") else directory.rstrip("/") + "/"
    return frozenset(path[len(prefix):].split("/", 1)[0] for path in manifest
                     if path.startswith(prefix) and len(path) > len(prefix))


@dataclass(frozen=True)
class Traced:
    files: dict[str, object]  # path -> its content on the state the run saw (MISSING: absent)
    dirs: dict[str, frozenset[str]]  # directory -> its listing there
    result: CheckResult

    def agrees(self, manifest: Manifest) -> bool:
        return (all(content(manifest, path) == seen for path, seen in self.files.items())
                and all(children(manifest, path) == seen for path, seen in self.dirs.items()))


@dataclass
class SameReads:
    traced: dict[tuple[str, tuple[str, ...]], list[Traced]] = field(default_factory=dict)
    reused: int = 0

    def find(self, name: str, select: tuple[str, ...], manifest: Manifest) -> CheckResult | None:
        """A traced run whose reads `manifest` agrees with, if any."""
        for traced in self.traced.get((name, select), ()):
            if traced.agrees(manifest):
                self.reused += 1
                return traced.result
        return None

    def other(self, name: str, select: tuple[str, ...], manifest: Manifest, besides: CheckResult) -> CheckResult | None:
        """A traced run other than `besides` whose reads `manifest` agrees with: a second run on
        the same inputs, as good as running the state again to catch a flaky check."""
        for traced in self.traced.get((name, select), ()):
            if traced.result is not besides and traced.agrees(manifest):
                self.reused += 1
                return traced.result
        return None

    def note(self, name: str, select: tuple[str, ...], manifest: Manifest, result: CheckResult,
             selected: bool = True) -> None:
        """Keep a traced run (`selected`: it ran exactly `select`; a whole run that ran every test
        of `select` answers for them too)."""
        reads = result.reads
        if not select or not selected and not all(test in result.tests for test in select):
            return
        if reads is None or not reads.complete or result.timed_out:
            return
        files = {path: content(manifest, path) for path in with_sources(reads.files)}
        dirs = {path: children(manifest, path) for path in reads.dirs}
        bucket = self.traced.setdefault((name, select), [])
        if len(bucket) < MAX_TRACED:
            bucket.append(Traced(files, dirs, result))


def with_sources(files: frozenset[str]) -> set[str]:
    """The files, and for each `pkg/__pycache__/mod.cpython-312.pyc` the source `pkg/mod.py`."""
    out = set(files)
    for path in files:
        head, _, name = path.rpartition("__pycache__/")
        if name.endswith(".pyc") and (not head or head.endswith("/")):
            out.add(head + name.split(".", 1)[0] + ".py")
    return out

