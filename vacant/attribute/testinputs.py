"""Only the tests a change can affect: each test's inputs, recorded on a whole pytest or unittest
run of the run's baseline, and at Stop the tests whose inputs are unchanged since then (and that
passed then) left out of the final state's run, their answer reused.

What one test's inputs are under pytest (the plugin in vacant.policy.contract.runner_sources records them):
what the session read (conftest files, the ini file, what plugins load), what the collection of
its own test module read (the module, and what every module it imports read when first imported,
even when another test module imported it first), and what every test run before it in the same
process read while running, its own run included (a value read once and cached by a shared
module serves the tests after it). Files are compared by their content in the recorded states;
files outside the workspace, and paths the record leaves out but the checks see live, by size and
modification time on the host. A test that started a process or opened a socket, or ran after
one that did, is unknown and always runs; the environment or the interpreter changed: every test
runs.

Under `python -m unittest` (the reporter vacant.policy.contract.runner_sources puts in front of it
loads a recorder sharing the plugin's core; one record shape, one `select`): what the session read
(unittest's own start, its discovery beyond listing the test files), what loading its own test
module read (the module's import with every module it imports, as above, its packages', its
`load_tests`), what its class's setUpClass/tearDownClass and its module's
setUpModule/tearDownModule read (every test of that class or module: run or not, they ran for
it), and what every test run before it read, its own run included. A fixture whose run changed
the process the later tests run in (compared as a test file's collection is below, its own
class or module aside) would not set it were its tests left out: they always run. A unittest run
never leaves a test file unloaded.

For either runner, a test whose own run (its setup and teardown with it) changed the process the
tests after it run in always runs: left out, it would not change it there, and a later test that
reads what it set (a flag, a registry, an environment variable, a logger's level, a file it wrote
in the workspace or outside it beyond the run's temporary files, bytecode aside) would see another
process. The recorder compares the process after each test with the process before it, as a test
file's collection is compared below, but with a submodule newly bound on its package and the
import path counted too (vacant.policy.contract.runner_sources, WATCH_SOURCE: one pass in C over
every value it holds, key by key only where that pass differs). What changed between two tests
counts as the later one's. The bisection's runs of a few failing tests at earlier states run
those setters that came before them too, first (Selection.with_setters): a test that fails only in
the process an earlier test leaves is then bisected in that process, not alone. And the final
state's run records what its own tests and test files did to the process (statechecks.final_run):
where one whose inputs changed now changes it (an edited test that sets a flag, a test file whose
new import does), the tests reused after it would have run in another process than on the
baseline, so their answers do not stand and the check runs whole (`selection.why`: a changed test
or test file changed the process).

A test file none of whose tests runs is not even collected when its collection on the baseline
changed nothing the other tests' process sees (the plugin compares the process before and after
each test module's collection: the values of the modules loaded before -- a library's one level
into its values by identity, the workspace's own all the way down within a budget -- the modules
it loaded as their own import left them, the environment, the import path beyond its own
directory, warning filters, the working directory, the random state, the interpreter's state kept
in C that code commonly sets: the record's `inert`); one that put its own directory on the import path only while a test file there is
still collected.

Trust: the record is made where the agent's code cannot shape it, on the run's baseline (the
workspace as it was before the run: vacant.attribute.baseline_probe), and only the test ids it
names as passed there can be left out. A test the agent wrote is not in it and runs. A record
that cannot be read, a command that is not one plain pytest or `python -m unittest` invocation
(`selectable`: another program's reads are nobody's to see), or a baseline that differs from the
run's: the check runs whole, as before.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from vacant.attribute.report_shape import CHANGED, CHANGED_SETS, ENVIRONMENT, NOT_PASSED, SESSION, SETS_STATE, UNKNOWN_INPUTS
from vacant.attribute.samereads import MISSING, children, content, importable, with_sources
from vacant.policy.contract.runners import Skip
from vacant.store.states import Manifest

RECORDS = "test-inputs"
VERSION = 1
# one plain pytest invocation: `pytest ARGS`, `python -m pytest ARGS`, a path to either; no shell syntax
_ASSIGNMENTS, _WORDS = r"^\s*(?:[A-Za-z_]\w*=[\w./:=@+,%-]*\s+)*", r"(?:\s+[\w./:=@+,%-]+)*\s*$"
_PLAIN_PYTEST = re.compile(_ASSIGNMENTS + r"(?:[\w./+-]*/)?(?:python[\d.]*\s+-m\s+pytest|py\.test|pytest)" + _WORDS)
# one plain unittest invocation: `python -m unittest ARGS` (discover, or module/class/test ids), its reporter's process
_PLAIN_UNITTEST = re.compile(_ASSIGNMENTS + r"(?:[\w./+-]*/)?python[\d.]*\s+-m\s+unittest" + _WORDS)
_VOLATILE_ENV = ("PWD", "OLDPWD", "SHLVL", "_")
SHOWN_IDS = 5  # test ids the report names for each reason



# options whose run depends on pytest's own cache of the last run (which tests, in what order)
_LAST_RUN = re.compile(r"(?<!\S)(?:--lf|--last-failed|--ff|--failed-first|--nf|--new-first|--sw|--stepwise"
                       r"|--stepwise-skip|--sw-skip)(?!\S)")


def selectable(command: str) -> bool:
    """Whether the check's command is one plain pytest or unittest run, whose reads the recorder
    sees whole."""
    if _PLAIN_UNITTEST.match(command):
        return True
    return bool(_PLAIN_PYTEST.match(command)) and not _LAST_RUN.search(command)


def env_key(environ: Mapping[str, str]) -> str:
    """The environment a check inherits, as one key (vacant's own variables aside)."""
    kept = sorted((name, value) for name, value in environ.items()
                  if not name.startswith("VACANT_") and name not in _VOLATILE_ENV)
    return hashlib.sha256(json.dumps(kept).encode()).hexdigest()


@dataclass(frozen=True)
class Reads:
    files: frozenset[str] = frozenset()
    dirs: frozenset[str] = frozenset()
    outside: frozenset[str] = frozenset()  # absolute paths outside the workspace
    unknown: bool = False
    pathdirs: frozenset[str] = frozenset()  # directories the import system listed: only importable names count
    sets: bool = False  # its run or its fixture changed the process the later tests run in

    @classmethod
    def of(cls, raw: Any) -> Reads:
        """From the plugin's JSON; a compiled module read stands for its source too (the import
        system only stat()s a source whose cached bytecode is current)."""
        if not isinstance(raw, dict):
            raise ValueError("a sink is not an object")
        return cls(frozenset(with_sources(_strings(raw.get("files")))), _strings(raw.get("dirs")),
                   frozenset(with_sources(_strings(raw.get("outside")))), bool(raw.get("unknown")),
                   _strings(raw.get("pathdirs", [])), bool(raw.get("sets")))

    def to_json(self) -> dict[str, Any]:
        return {"files": sorted(self.files), "dirs": sorted(self.dirs), "outside": sorted(self.outside),
                "unknown": self.unknown, "pathdirs": sorted(self.pathdirs), "sets": self.sets}


def _text(raw: Any) -> str | None:
    return raw if isinstance(raw, str) else None


def _strings(raw: Any) -> frozenset[str]:
    if not isinstance(raw, list) or not all(isinstance(item, str) for item in raw):
        raise ValueError("a path list is not a list of strings")
    return frozenset(raw)


@dataclass(frozen=True)
class TestRead:
    id: str  # the id the runner's report gives (vacant.policy.contract.runners)
    module: str | None  # its test module, relative to the check's directory
    reads: Reads  # what its own run read
    outcome: str | None  # on the baseline


@dataclass
class Record:
    """One check's per-test inputs on the run's baseline (`baseline`: the manifest's key)."""

    check: str
    command: str
    baseline: str
    env: str
    session: Reads
    modules: dict[str, Reads]
    tests: list[TestRead]  # in the order they ran
    stats: dict[str, list[int] | None] = field(default_factory=dict)  # host path -> [size, mtime_ns]
    names: frozenset[str] = frozenset()  # every module name (each dotted part) an import looked for
    inert: frozenset[str] = frozenset()  # test modules whose collection changed nothing the other tests see
    path_adders: frozenset[str] = frozenset()  # ... but put their directory on the import path (pytest did)

    def to_json(self) -> dict[str, Any]:
        return {"version": VERSION, "check": self.check, "command": self.command, "baseline": self.baseline,
                "env": self.env, "session": self.session.to_json(),
                "modules": {key: reads.to_json() for key, reads in self.modules.items()},
                "tests": [{"id": t.id, "module": t.module, "reads": t.reads.to_json(), "outcome": t.outcome}
                          for t in self.tests], "stats": self.stats, "names": sorted(self.names),
                "inert": sorted(self.inert), "path_adders": sorted(self.path_adders)}

    @classmethod
    def of(cls, data: Any) -> Record:
        if not isinstance(data, dict) or data.get("version") != VERSION:
            raise ValueError("not a test-inputs record of this version")
        tests = [TestRead(str(t["id"]), _text(t.get("module")), Reads.of(t["reads"]), _text(t.get("outcome")))
                 for t in data["tests"]]
        return cls(str(data["check"]), str(data["command"]), str(data["baseline"]), str(data["env"]),
                   Reads.of(data["session"]), {str(k): Reads.of(v) for k, v in data["modules"].items()}, tests,
                   {str(k): v for k, v in data.get("stats", {}).items()}, _strings(data.get("names", [])),
                   _strings(data.get("inert", [])), _strings(data.get("path_adders", [])))


def record_of(check: str, command: str, baseline: str, environ: Mapping[str, str], raw: Any,
              outcomes: Mapping[str, str], root: Path, live: Iterable[str]) -> Record:
    """The record of a whole recorded run (`raw`: what the plugin wrote), with the host's stat of
    every file it read outside the recorded state (`live`: the paths shown live over a state)."""
    if not isinstance(raw, dict) or raw.get("version") != 1:
        raise ValueError("the plugin wrote no record of its version")
    tests = []
    for test in raw["tests"]:
        ident = str(test["id"])  # the id the runner's report gives it (the plugin computes it as the report does)
        tests.append(TestRead(ident, _text(test.get("module")), Reads.of(test), outcomes.get(ident)))
    record = Record(check, command, baseline, env_key(environ),
                    Reads.of(raw["global"]), {str(k): Reads.of(v) for k, v in raw["modules"].items()}, tests,
                    names=_strings(raw.get("names", [])), inert=_strings(raw.get("inert", [])),
                    path_adders=_strings(raw.get("path_adders", [])))
    live = tuple(live)
    for reads in [record.session, *record.modules.values(), *(test.reads for test in tests)]:
        for path in _host_paths(reads, root, live):
            record.stats.setdefault(path, host_stat(path))
    return record


def _host_paths(reads: Reads, root: Path, live: tuple[str, ...]) -> Iterable[str]:
    yield from reads.outside
    yield from (str(Path(root) / path) for path in reads.files if _under(path, live))


def _under(path: str, prefixes: tuple[str, ...]) -> bool:
    return any(path == prefix or path.startswith(prefix.rstrip("/") + "/") for prefix in prefixes)


def host_unchanged(record: Record) -> bool:
    """Whether every host file the record's run read (outside the workspace, or shown live over a
    state) is as it was then: the baseline's recorded answers still stand for a run now."""
    return all(host_stat(path) == stat for path, stat in record.stats.items())


def host_stat(path: str) -> list[int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return [info.st_size, info.st_mtime_ns]


# -- at Stop -----------------------------------------------------------------------------------


@dataclass
class Selection:
    """Which recorded tests a run on the final state leaves out, and why each other test runs."""

    skip: Skip
    reused: int
    why: dict[str, str]  # test id -> why it runs (recorded tests only; a new one runs too)
    example: dict[str, str] = field(default_factory=dict)  # reason -> the first input that gave it
    order: tuple[str, ...] = ()  # the recorded tests, in the order they ran on the baseline
    setters: tuple[str, ...] = ()  # those whose run changed the process the tests after them run in
    same_setters: frozenset[str] = frozenset()  # setters whose inputs are unchanged: they set what they set there
    same_modules: frozenset[str] = frozenset()  # test modules whose collection's inputs are unchanged

    def overturned(self, raw: Any) -> str | None:
        """Why the reused tests' answers do not stand for the final run recorded as `raw` (its
        inputs, recorded while it ran), or None: a test that ran and changed the process though
        its inputs changed (or the record does not know it), or a test module whose changed
        collection changed it. Left out, the tests after them would have run in another process
        than on the baseline."""
        if not isinstance(raw, dict) or not isinstance(raw.get("tests"), list):
            return "the final run's own record could not be read"
        for test in raw["tests"]:
            if isinstance(test, dict) and test.get("sets") and test.get("id") not in self.same_setters:
                return str(test.get("id"))
        for module in raw.get("sets_modules", []):
            if module not in self.same_modules:
                return str(module)
        return None

    def all_run(self, why: str) -> Selection:
        """The selection of a final run that ran every test, because of `why` (overturned)."""
        return Selection(Skip((), ()), 0, {test: CHANGED_SETS for test in self.order}, {CHANGED_SETS: why},
                         self.order, self.setters)

    def with_setters(self, select: tuple[str, ...]) -> tuple[str, ...]:
        """`select` with the recorded tests that ran before them on the baseline and changed the
        process they ran in (first, as they ran there): a test run alone at a probe state then
        runs in the process the whole run gives it. A test the record does not know comes after
        every setter."""
        place = {test: number for number, test in enumerate(self.order)}
        last = max((place.get(test, len(self.order)) for test in select), default=-1)
        before = tuple(test for test in self.setters if place[test] < last and test not in select)
        return before + select

    def summary(self) -> dict[str, Any]:
        counts = Counter(self.why.values())
        first: dict[str, list[str]] = {}
        for test, reason in self.why.items():
            if len(first.setdefault(reason, [])) < SHOWN_IDS:
                first[reason].append(test)
        return {"recorded": self.reused + len(self.why), "reused": self.reused, "ran": len(self.why),
                "uncollected": len(self.skip.files), "why": dict(sorted(counts.items())), "example": self.example,
                "tests": first}


class _Changes:
    """Whether a read input differs between the baseline and the final state (cached per path)."""

    def __init__(self, base: Manifest, final: Manifest, record: Record, root: Path, live: tuple[str, ...]) -> None:
        self.base, self.final, self.record, self.root, self.live = base, final, record, Path(root), live
        self.seen: dict[tuple[str, str], bool] = {}

    def first(self, reads: Reads) -> str | None:
        """The first changed input among `reads` (a path), or None."""
        for kind, paths in (("file", reads.files), ("dir", reads.dirs), ("pathdir", reads.pathdirs),
                            ("outside", reads.outside)):
            for path in sorted(paths):
                key = (kind, path)
                if key not in self.seen:
                    self.seen[key] = self._changed(kind, path)
                if self.seen[key]:
                    return path
        return None

    def _changed(self, kind: str, path: str) -> bool:
        if kind == "outside":
            return host_stat(path) != self.record.stats.get(path, ["not recorded"])
        if kind == "dir":
            return _under(path, self.live) or children(self.base, path) != children(self.final, path)
        if kind == "pathdir":
            names = self.record.names
            return _under(path, self.live) or importable(self.base, path, names) != importable(
                self.final, path, names)
        before, after = content(self.base, path), content(self.final, path)
        if before != after:
            return True
        if before == MISSING and _under(path, self.live):  # shown live over the state: the host's file
            host = str(self.root / path)
            return host_stat(host) != self.record.stats.get(host, ["not recorded"])
        return False


def select(record: Record, base: Manifest, final: Manifest, environ: Mapping[str, str], root: Path,
           live: Iterable[str]) -> Selection:
    """The tests of `record` whose inputs are the same on `final` as on `base` and that passed
    there: left out (module docstring); every other test runs, with why."""
    changes = _Changes(base, final, record, root, tuple(live))
    everyone: tuple[str, str | None] | None = None
    if env_key(environ) != record.env:  # the interpreter's own files are outside reads, compared by stat
        everyone = (ENVIRONMENT, None)
    elif record.session.unknown:
        everyone = (UNKNOWN_INPUTS, None)
    elif (path := changes.first(record.session)) is not None:
        everyone = (SESSION, path)
    why: dict[str, str] = {}
    example: dict[str, str] = {}
    reused: list[TestRead] = []
    prefix_reason: tuple[str, str | None] | None = None
    for test in record.tests:
        reason = everyone or _own_reason(test, record, changes) or prefix_reason
        if reason is None and test.reads.unknown:
            reason = (UNKNOWN_INPUTS, None)
        if reason is None and test.reads.sets:  # left out, it would not set what later tests see
            reason = (SETS_STATE, None)
        if prefix_reason is None:  # what this test's run read is an input of every later test
            changed = changes.first(test.reads)
            prefix_reason = (UNKNOWN_INPUTS, None) if test.reads.unknown else (CHANGED, changed) if changed else None
        if reason is None and test.outcome != "passed":
            reason = (NOT_PASSED, None)
        if reason is None:
            reused.append(test)
            continue
        why[test.id] = reason[0]
        if reason[1] is not None:
            example.setdefault(reason[0], reason[1])
    return Selection(Skip(tuple(t.id for t in reused), _uncollected(record, reused)), len(reused), why, example,
                     order=tuple(test.id for test in record.tests),
                     setters=tuple(test.id for test in record.tests if test.reads.sets),
                     same_setters=frozenset(test for test, reason in why.items() if reason == SETS_STATE),
                     same_modules=frozenset(module for module, reads in record.modules.items()
                                            if not reads.unknown and changes.first(reads) is None))


def _uncollected(record: Record, reused: list[TestRead]) -> tuple[str, ...]:
    """The test files a run need not collect: each of whose recorded tests is reused (so its
    collection's inputs are unchanged: they are its tests' inputs), and whose collection on the
    baseline changed nothing the process of the other tests sees (the record's `inert`; one that
    put its directory on the import path only while a test file there is still collected)."""
    reused_ids = {test.id for test in reused}
    collected = {test.module for test in record.tests if test.id not in reused_ids}
    left = {test.module for test in reused if test.module in record.inert} - collected
    kept = {os.path.dirname(test.module) for test in record.tests if test.module is not None and test.module not in left}
    return tuple(sorted(module for module in left if module is not None
                        and (module not in record.path_adders or os.path.dirname(module) in kept)))


def _own_reason(test: TestRead, record: Record, changes: _Changes) -> tuple[str, str | None] | None:
    module = record.modules.get(test.module or "")
    if module is None:
        return (CHANGED, test.module)  # its module's collection was not recorded: not known
    if module.unknown:
        return (UNKNOWN_INPUTS, None)
    path = changes.first(module) or changes.first(test.reads)
    return (CHANGED, path) if path else None


# -- where records are kept ---------------------------------------------------------------------


def record_path(run_dir: Path, check: str, records: str = RECORDS) -> Path:
    return Path(run_dir) / records / (hashlib.sha256(check.encode()).hexdigest()[:24] + ".json")


class _Kept(Protocol):
    check: str
    command: str
    baseline: str

    def to_json(self) -> dict[str, Any]: ...


def save(run_dir: Path, record: _Kept, records: str = RECORDS) -> None:
    """A check's record in the run's directory (`records`: its kind's directory)."""
    from vacant.core.atomic import atomic_write

    path = record_path(run_dir, record.check, records)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(record.to_json()).encode())


K = TypeVar("K", bound=_Kept)


def load_kept(run_dir: Path, check: str, command: str, baseline: str, records: str,
              of: Callable[[Any], K]) -> K | None:
    """The check's record of one kind on this baseline with this command, or None (none,
    unreadable, stale)."""
    try:
        record = of(json.loads(record_path(run_dir, check, records).read_text()))
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None
    if record.check != check or record.command != command or record.baseline != baseline:
        return None
    return record


def load(run_dir: Path, check: str, command: str, baseline: str) -> Record | None:
    """The check's record on this baseline with this command, or None (none, unreadable, stale)."""
    return load_kept(run_dir, check, command, baseline, RECORDS, Record.of)
