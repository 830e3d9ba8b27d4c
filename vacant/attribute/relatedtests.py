"""Only the tests a change can reach, for jest and vitest: their own related-tests machinery
(`jest --findRelatedTests FILES`, `vitest related FILES`) runs the test files whose module graph
holds one of the files named, and the recorded tests of every other file are reused as they
passed on the run's baseline (the pytest analogue, with per-test reads: vacant.attribute.testinputs).

What the module graph sees: the static imports and requires of JS/TS modules, and dynamic ones
with a literal path, resolved as the runner resolves them. What it does not see: a data file read
with `fs`, a process a test starts, a socket, an environment variable, the runner's config and
the files it names (setup files, a resolver, a transformer), snapshots, package manifests and
locks, node_modules, a module loaded by a computed path. So a Stop selects only where none of
those can carry the change, and says why every other test ran, in pytest's words
(vacant.attribute.report_shape):

- the command is one plain jest or vitest run (`selectable`: the runner by name or path, after
  `npx`/`pnpm exec`/`yarn` or env assignments, with options from a short list that change
  nothing a test sees and no path filter; a filter would become a related path), and it is
  recorded: the baseline probe's whole run of it on the run's baseline, behind the wall (the
  tests' ids and outcomes), with the environment, the node binary, the runner's own files and
  every path shown live over the state (node_modules, when ignored) stamped (size and mtime);
- the environment, the node binary and those stamps are the same at Stop (else every test runs:
  `the environment changed`, or `a session-wide input changed` for a live path);
- every file that differs between the baseline and the final state is inside the check's
  directory, added or changed, not removed (a removed module leaves its importers' graph: they
  would not be found), not under node_modules, `__mocks__` or `__snapshots__`, not a config file
  (`*.config.*`, `*rc.*`), its name not mentioned by the runner's config (a setup file, a
  resolver, a transformer named there), and either a JS/TS module (`.js`, `.jsx`, `.mjs`, `.cjs`,
  `.ts`, `.tsx`, `.mts`, `.cts`: a related file) or an inert file: not what tooling reads on its
  own (JSON, YAML, TOML, locks, snapshots, `.env`, any dotfile) and named by no project module nor
  the config (its name, none of its directories, not its extension: `*.md` names every `.md`),
  so no code of the project asks for it (a README, notes); any other change: every test runs
  (`a session-wide input changed`, with the path);
- the runner's config (`jest.config.*` or package.json's `jest`, `vitest.config.*`,
  `vite.config.*`, `vitest.workspace.*`) names nothing that makes one test's outcome depend on
  files the related query does not see or on which other files run (setup files, global setup or
  teardown, coverage, isolation turned off, a sequencer, a snapshot resolver, projects or a
  workspace, shards, bail) and imports nothing relative (its whole text is read here, not run).

The related files passed to the runner are then the changed modules, plus every project module
(outside node_modules) whose text names what the graph does not see (`fs`, `child_process`,
`worker_threads`, `net`/`http`, `fetch(`, a `require(`/`import(` of a computed path, a glob or a
walk, ...): every
test whose graph holds one of those always runs, plus the test files of every test that did not
pass on the baseline (`did not pass on the baseline`). A test file the agent added or changed is
a changed module, related to itself. Every other recorded test is reused when its file reported
nothing in the selected run; a test that ran is `an input changed` (its graph holds a changed
module, or one that reads what the graph does not see), or `did not pass on the baseline`.

The related query is the selected run itself: jest and vitest load the project's config (JS,
the agent's to write) to resolve the graph, so it runs as every check runs, behind the wall
(vacant.policy.contract.checks.run_check, with the Stop's site); nothing of the project's runs
in vacant's own process. The gates above read file text only.

Limits, said plainly: a module in node_modules that loads a project module by a computed path
or reads it as data is not seen (the project's own code is scanned, the packages are not); a
file outside the check's directory that a test loads (a node_modules above the project) is taken
as unchanged while the stamped ones are; the text scans are conservative (more runs, never fewer)
but a config that spells a denied option by computing its name is not caught.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vacant.attribute.report_shape import CHANGED, ENVIRONMENT, NOT_PASSED, SESSION
from vacant.attribute.samereads import content
from vacant.attribute import testinputs
from vacant.attribute.testinputs import Selection, env_key
from vacant.policy.contract.runners import Skip
from vacant.store.states import Manifest

RECORDS = "related-tests"
VERSION = 1
JEST, VITEST = "jest", "vitest"
TEXT_CAP = 4 << 20  # what of one file the text scans read (a longer file is read this far)
LIVE_CAP = 200_000  # entries stamped under the live paths; past it the check runs whole

_ENV = r"(?:[A-Za-z_]\w*=[\w./:=@+,%-]*\s+)*"
_LAUNCH = r"(?:(?:npx|bunx|yarn|pnpm(?:\s+exec)?)\s+)?"
_JEST_OPTS = (r"--ci|--no-ci|-i|--runInBand|--watchman=false|--no-watchman|--silent|--verbose|--colors|--no-colors"
              r"|--maxWorkers=\d+%?|--testTimeout=\d+|--no-cache|--forceExit|--detectOpenHandles|--useStderr")
_VITEST_OPTS = (r"--run|--silent|--no-color|--color|--maxWorkers=\d+%?|--testTimeout=\d+|--hookTimeout=\d+"
                r"|--pool=(?:forks|threads)|--no-file-parallelism|--hideSkippedTests")
_PLAIN = {
    JEST: re.compile(rf"^\s*{_ENV}{_LAUNCH}(?:[\w./+-]*/)?jest(?:\.js)?(?:\s+(?:{_JEST_OPTS}))*\s*$"),
    VITEST: re.compile(rf"^\s*{_ENV}{_LAUNCH}(?:[\w./+-]*/)?vitest(?:\.mjs)?(?:\s+run)?(?:\s+(?:{_VITEST_OPTS}))*\s*$"),
}
_RUNNER_PATH = re.compile(r"(?:^|\s)((?:[\w./+-]*/)?(?:jest|vitest)(?:\.js|\.mjs)?)(?=\s|$)")
MODULE_SUFFIXES = (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts")
_CONFIG_NAME = re.compile(r"(?:^|/)(?:[^/]*\.config\.[^/]*|\.[^/]*rc(?:\.[^/]*)?)$")
_CONFIG_FILES = re.compile(r"^(?:jest|vitest|vite|vitest\.workspace|vitest\.projects)\.config\.[cm]?[jt]s$"
                           r"|^jest\.config\.json$|^vitest\.workspace\.[cm]?[jt]s$")
_DENIED = re.compile(r"setupFiles|globalSetup|globalTeardown|coverage|isolate|testSequencer|sequence"
                     r"|snapshotResolver|projects|workspace|shard|bail|onlyChanged|changedSince")
_RELATIVE_IMPORT = re.compile(r"""(?:require\s*\(|import\s*\(|\bfrom|\bimport)\s*['"`]\.{1,2}/""")
# what a module's text names that its runner's module graph cannot see
_UNSEEN = re.compile(
    r"""child_process|worker_threads|\bcluster\b|['"`](?:node:)?(?:fs|fs/promises|net|http|https|http2|dgram|tls"""
    r"""|vm|module|inspector)['"`]|\bprocess\.(?:binding|dlopen)|\b(?:require|import|requireActual|requireMock"""
    r"""|importActual|importMock)\s*\(\s*[^'"\s)]|require\.resolve|import\.meta\.glob|\bfetch\s*\("""
    r"""|\bnew\s+(?:Shared)?Worker\b|createRequire|readFileSync|readFile\b|readdir|existsSync|execa|cross-spawn|glob|walk""")


def selectable(command: str) -> str | None:
    """The runner (`jest`, `vitest`) when the check's command is one plain run of it (module docstring)."""
    for kind, plain in _PLAIN.items():
        if plain.match(command):
            return kind
    return None


def stamp(path: str | Path) -> list[int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return [info.st_size, info.st_mtime_ns]


def runner_stamps(command: str, root: Path, environ: Mapping[str, str]) -> dict[str, list[int] | None]:
    """The host files the runner itself is: node, and the runner's binary with its package.json
    (a path named by the command, or the project's node_modules/.bin entry)."""
    found: dict[str, list[int] | None] = {}
    node = shutil.which("node", path=environ.get("PATH", ""))
    if node is not None:
        found[os.path.realpath(node)] = stamp(os.path.realpath(node))
    match = _RUNNER_PATH.search(command)
    name = match.group(1) if match else ""
    binary = Path(name) if "/" in name else Path(root) / "node_modules" / ".bin" / name
    real = Path(os.path.realpath(Path(root) / binary))
    found[str(real)] = stamp(real)
    for parent in real.parents:
        if (parent / "package.json").is_file():
            found[str(parent / "package.json")] = stamp(parent / "package.json")
            break
    return found


def live_stamp(root: Path, live: Iterable[str]) -> str | None:
    """One digest of every entry under the live paths (shown over each state, so never in a diff):
    path, size, mtime and mode; None when there are more than LIVE_CAP."""
    digest, count = hashlib.sha256(), 0
    for rel in sorted(live):
        for base, dirs, files in os.walk(Path(root) / rel):
            dirs[:] = sorted(d for d in dirs if not _runner_cache(os.path.relpath(os.path.join(base, d), root)))
            for name in sorted(files) + dirs:
                count += 1
                if count > LIVE_CAP:
                    return None
                path = os.path.join(base, name)
                try:
                    info = os.lstat(path)
                except OSError:
                    continue
                digest.update(f"{os.path.relpath(path, root)}\0{info.st_size}\0{info.st_mtime_ns}\0{info.st_mode}\n"
                              .encode(errors="surrogateescape"))
        info_top = stamp(Path(root) / rel)
        digest.update(f"{rel}\0{info_top}\n".encode(errors="surrogateescape"))
    return digest.hexdigest()


@dataclass
class Record:
    """One check's tests on the run's baseline (`baseline`: the manifest's key), and the stamps
    the reuse of their answers stands on."""

    check: str
    command: str
    kind: str
    baseline: str
    env: str
    runner: dict[str, list[int] | None]
    live: str | None
    tests: dict[str, str]  # test id -> outcome on the baseline

    def to_json(self) -> dict[str, Any]:
        return {"version": VERSION, "check": self.check, "command": self.command, "kind": self.kind,
                "baseline": self.baseline, "env": self.env, "runner": self.runner, "live": self.live,
                "tests": self.tests}

    @classmethod
    def of(cls, data: Any) -> Record:
        if not isinstance(data, dict) or data.get("version") != VERSION:
            raise ValueError("not a related-tests record of this version")
        tests = data["tests"]
        if not isinstance(tests, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in tests.items()):
            raise ValueError("tests is not a map of ids to outcomes")
        runner = data["runner"]
        if not isinstance(runner, dict):
            raise ValueError("runner is not a map")
        live = data["live"]
        return cls(str(data["check"]), str(data["command"]), str(data["kind"]), str(data["baseline"]),
                   str(data["env"]), {str(k): v for k, v in runner.items()}, None if live is None else str(live),
                   dict(tests))

    def stamps_hold(self, root: Path, environ: Mapping[str, str], live: Iterable[str]) -> bool:
        """Whether the runner's files and the live paths are as they were on the baseline."""
        return runner_stamps(self.command, root, environ) == self.runner and self.live is not None and \
            live_stamp(root, live) == self.live


def record_of(check: str, command: str, baseline: str, environ: Mapping[str, str], outcomes: Mapping[str, str],
              root: Path, live: Iterable[str]) -> Record:
    """The record of a whole run on the baseline (`outcomes`: its runner's report)."""
    kind = selectable(command)
    if kind is None:
        raise ValueError("not one plain jest or vitest run")
    if not outcomes or not all(test.startswith(kind + "::") for test in outcomes):
        raise ValueError("the run reported no test of its runner")
    return Record(check, command, kind, baseline, env_key(environ), runner_stamps(command, root, environ),
                  live_stamp(root, live), dict(outcomes))


def test_file(test: str) -> str:
    """The test file of an id (`jest::FILE::name`), relative to the check's directory."""
    parts = test.split("::", 2)
    return parts[1] if len(parts) > 1 else ""


# -- at Stop -----------------------------------------------------------------------------------


def _whole(record: Record, reason: str, example: str | None) -> Selection:
    why = dict.fromkeys(record.tests, reason)
    return Selection(Skip(), 0, why, {reason: example} if example is not None else {})


def _runner_cache(path: str) -> bool:
    """vitest's own results cache (node_modules/.vite/vitest/): which files failed and how long
    each took, read only to order the files (each runs isolated, or it is not selectable)."""
    return "node_modules/.vite/vitest" in "/".join(path.split("/")[:3] + [""]) or \
        path.rstrip("/") in ("node_modules", "node_modules/.vite")


def changed_paths(base: Manifest, final: Manifest) -> list[str]:
    return sorted(path for path in set(base) | set(final)
                  if content(base, path) != content(final, path) and not _runner_cache(path))


def config_texts(final: Manifest, read: Callable[[str], str | None], kind: str) -> dict[str, str]:
    """The runner's config as text: its config files at the top, and package.json's `jest`."""
    texts = {path: read(path) or "unreadable: coverage" for path in sorted(final)
             if "/" not in path and _CONFIG_FILES.match(path)}  # one that cannot be read is denied
    if kind == JEST and "package.json" in final:
        try:
            manifest = json.loads(read("package.json") or "{}")
        except (ValueError, RecursionError):
            manifest = {"jest": "unreadable"}
        if isinstance(manifest, dict) and "jest" in manifest:
            texts["package.json"] = json.dumps(manifest["jest"])
    return texts


_TOOLING = re.compile(r"\.(?:json|jsonc|json5|ya?ml|toml|lock|snap|env|node|wasm|map)$")


def _why_not(path: str, final: Manifest, configs: Mapping[str, str], texts: Mapping[str, str]) -> str | None:
    """Whether a change to `path` is one the related query may not see (module docstring):
    `module` (a JS/TS module it sees: related), `inert` (a file no project text names), else None."""
    parts = path.split("/")
    if path not in final or path.startswith(("../", "/")) or "node_modules" in parts or "__mocks__" in parts \
            or "__snapshots__" in parts or _CONFIG_NAME.search(path):
        return None
    if any(_mentions(text, parts[-1].split(".", 1)[0]) for text in configs.values()):
        return None  # named by the runner's config: a setup file, a resolver, a transformer
    if path.endswith(MODULE_SUFFIXES):
        return "module"
    if _TOOLING.search(path) or any(part.startswith(".") for part in parts):
        return None  # what tooling reads on its own (manifests, locks, snapshots, dotfiles)
    suffix = os.path.splitext(parts[-1])[1]
    names = [parts[-1], *parts[:-1]] + ([suffix] if suffix else [])
    if any(_mentions(text, name) for text in [*texts.values(), *configs.values()] for name in names):
        return None  # a project module (or the config) names it, its directory or its kind
    return "inert"


def _mentions(text: str, name: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])" if name[:1].isalnum() else re.escape(name),
                     text) is not None


def reader(directory: Path) -> Callable[[str], str | None]:
    """A state's file as text, by its relative path (None: not there, unreadable, past TEXT_CAP)."""
    def read(path: str) -> str | None:
        try:
            with open(Path(directory) / path, "rb") as handle:
                data = handle.read(TEXT_CAP + 1)
        except OSError:
            return None
        return data.decode("utf-8", "replace") if len(data) <= TEXT_CAP else None
    return read


def _unseen(text: str | None) -> bool:
    """Whether a module's text names what the module graph does not see (one not read: it may)."""
    return text is None or bool(_UNSEEN.search(text))


def select(record: Record, base: Manifest, final: Manifest, environ: Mapping[str, str], root: Path,
           live: Iterable[str], read: Callable[[str], str | None]) -> Selection:
    """Which recorded tests the final run may leave out: none unless every gate of the module
    docstring holds; then the related files the run is to name (`skip.related`), and the
    recorded tests that passed (`skip.tests`: reused when their file reports nothing)."""
    live = tuple(live)
    if env_key(environ) != record.env or runner_stamps(record.command, root, environ) != record.runner:
        return _whole(record, ENVIRONMENT, None)
    if record.live is None or live_stamp(root, live) != record.live:
        return _whole(record, SESSION, live[0] if live else None)
    configs = config_texts(final, read, record.kind)
    for path, text in configs.items():
        if _DENIED.search(text) or _RELATIVE_IMPORT.search(text):
            return _whole(record, SESSION, path)
    texts = {path: read(path) for path in sorted(final) if path.endswith(MODULE_SUFFIXES)
             and "node_modules" not in path.split("/")}
    known = {path: text for path, text in texts.items() if text is not None}
    changed = []
    for path in changed_paths(base, final):
        kind = _why_not(path, final, configs, known)
        if kind is None:
            return _whole(record, SESSION, path)
        if kind == "module":
            changed.append(path)
    unseen = [path for path, text in texts.items() if _unseen(text)]
    failed = sorted({test_file(test) for test, outcome in record.tests.items() if outcome != "passed"})
    related = tuple(dict.fromkeys([*changed, *unseen, *(path for path in failed if path in final)]))
    if not related:  # nothing changed since the baseline: one file runs (a related query names at least one)
        related = tuple(sorted(test_file(test) for test in record.tests))[:1]
    passed = tuple(test for test, outcome in record.tests.items() if outcome == "passed")
    return Selection(Skip(passed, (), related), 0, {}, {CHANGED: changed[0]} if changed else {})


def settle(chosen: Selection, record_tests: Mapping[str, str], ran: Mapping[str, str]) -> Skip:
    """After the related run: the recorded tests it reused (passed on the baseline, and their file
    reported nothing: it did not run), and why each other recorded test ran; `chosen` is
    completed in place (its counts and reasons) and the tests to answer for as passed returned."""
    files_ran = {test_file(test) for test in ran}
    reused = tuple(test for test in chosen.skip.tests if test_file(test) not in files_ran)
    chosen.reused = len(reused)
    chosen.why = {test: CHANGED if outcome == "passed" else NOT_PASSED for test, outcome in record_tests.items()
                  if test not in set(reused)}
    if not any(reason == CHANGED for reason in chosen.why.values()):
        chosen.example.pop(CHANGED, None)
    left = {test_file(test) for test in reused} - files_ran
    chosen.skip = Skip(reused, tuple(sorted(left)), chosen.skip.related)
    return chosen.skip


# -- where records are kept ---------------------------------------------------------------------


def save(run_dir: Path, record: Record) -> None:
    testinputs.save(run_dir, record, RECORDS)


def load(run_dir: Path, check: str, command: str, baseline: str) -> Record | None:
    """The check's record on this baseline with this command, or None (none, unreadable, stale)."""
    return testinputs.load_kept(run_dir, check, command, baseline, RECORDS, Record.of)
