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

A directory the import system listed (to find a module) counts only by the names an import could
find there: module files, packages, and entries named as a module some import looked for; a
directory of notes added beside the code changes nothing a run read. A directory pytest's
collection walked counts only by what can change a selected run (every test it did not select is
deselected): Python files, settings files, and directories holding either below.

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


_IMPORTABLE = (".py", ".pyc", ".pyd", ".so", ".pth")


def importable(manifest: Manifest, directory: str, looked_for: frozenset[str]) -> frozenset[str]:
    """The entries of `directory` the import system could find a module by: a module's file, a
    package (a directory holding `__init__.py`), and any entry named as a module some import
    looked for (a namespace package, or one that was not found before)."""
    prefix = "" if directory in (".", "") else directory.rstrip("/") + "/"
    return frozenset(name for name in children(manifest, directory)
                     if name.endswith(_IMPORTABLE) or name.split(".", 1)[0] in looked_for
                     or f"{prefix}{name}/__init__.py" in manifest)


_SETTINGS = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")


def _speaks_to_pytest(path: str) -> bool:
    return path.endswith(".py") or path.rsplit("/", 1)[-1] in _SETTINGS


def collectable(manifest: Manifest, directory: str) -> frozenset[str]:
    """The entries of `directory` that can change a selected pytest run (every test it did not
    select is deselected): Python files (a test module's or conftest's import, a package) and
    settings files, and directories holding any of them below; a directory of notes cannot."""
    prefix = "" if directory in (".", "") else directory.rstrip("/") + "/"
    found = set()
    for path in manifest:
        if path.startswith(prefix) and len(path) > len(prefix) and _speaks_to_pytest(path):
            found.add(path[len(prefix):].split("/", 1)[0])
    return frozenset(found)


@dataclass(frozen=True)
class Traced:
    files: dict[str, object]  # path -> its content on the state the run saw (MISSING: absent)
    dirs: dict[str, frozenset[str]]  # directory -> its listing there
    result: CheckResult
    pathdirs: dict[str, frozenset[str]] = field(default_factory=dict)  # directory -> its importable names
    names: frozenset[str] = frozenset()
    walked: dict[str, frozenset[str]] = field(default_factory=dict)  # directory -> what pytest could collect there

    def recorded_only(self) -> bool:
        """Whether every file it read was in the recorded state it ran on (compiled modules aside)."""
        return all(seen != MISSING for path, seen in self.files.items() if "__pycache__/" not in path)

    def agrees(self, manifest: Manifest) -> bool:
        return (all(content(manifest, path) == seen for path, seen in self.files.items())
                and all(children(manifest, path) == seen for path, seen in self.dirs.items())
                and all(importable(manifest, path, self.names) == seen for path, seen in self.pathdirs.items())
                and all(collectable(manifest, path) == seen for path, seen in self.walked.items()))


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
        the same inputs, as good as running the state again to catch a flaky check. Only a run
        that read nothing outside the recorded state (a file a run left behind, a live path) --
        what a flaky test keeps between runs lies there."""
        for traced in self.traced.get((name, select), ()):
            if traced.result is not besides and traced.recorded_only() and traced.agrees(manifest):
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
        pathdirs = {path: importable(manifest, path, reads.names) for path in reads.pathdirs - reads.dirs}
        walked = {path: collectable(manifest, path) for path in reads.walked - reads.dirs}
        bucket = self.traced.setdefault((name, select), [])
        if len(bucket) < MAX_TRACED:
            bucket.append(Traced(files, dirs, result, pathdirs, reads.names, walked))


def with_sources(files: frozenset[str]) -> set[str]:
    """The files, and for each `pkg/__pycache__/mod.cpython-312.pyc` the source `pkg/mod.py`."""
    out = set(files)
    for path in files:
        head, _, name = path.rpartition("__pycache__/")
        if name.endswith(".pyc") and (not head or head.endswith("/")):
            out.add(head + name.split(".", 1)[0] + ".py")
    return out

