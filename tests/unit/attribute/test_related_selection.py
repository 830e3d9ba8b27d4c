"""jest's and vitest's related-tests selection at Stop (vacant.attribute.relatedtests), and never a
missed failure: over generated JS suites and generated change histories, with the real (pinned)
jest and vitest, the final state's run limited to the related tests fails exactly the tests a
whole run fails.

The suite: modules (`lib/mN.js`, each exporting `VALUE = N`), a shared module that re-exports
lib/m0 and reads a data file with `fs`, data files, a config file, test files whose tests each
assert on one of those: a module's value, the shared module's, a data file read by the test
itself or through the shared module, a module's value read by a child process (`node -e`), a
module's source read as text, and a setup file the config may name. A change sets a module's
value, a data file, the config (naming a setup file that may throw), a test file's tests, adds a
test file or a notes file, or removes a module. The oracle is the whole run on the final state."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from runner_tools import jest_modules

from vacant.attribute import relatedtests
from vacant.attribute.report_shape import CHANGED, ENVIRONMENT, NOT_PASSED, SESSION
from vacant.attribute.statechecks import with_reused
from vacant.policy.contract.checks import run_check
from vacant.store.states import read_manifest_of

MODULES, DATA = 4, 2
KINDS = ("module", "shared", "data", "cached", "spawn", "source")


@dataclass(frozen=True)
class Case:
    kind: str
    target: int


def commands() -> dict[str, str]:
    bin_dir = jest_modules() / ".bin"
    return {"jest": f"{bin_dir / 'jest'} --ci --watchman=false -i", "vitest": f"{bin_dir / 'vitest'} run"}


def _import(kind: str, name: str, path: str) -> str:
    return f"import * as {name} from '{path}';" if kind == "vitest" else f"const {name} = require('{path}');"


def js_test_file(kind: str, tests: list[Case]) -> str:
    lines = ["import { test, expect } from 'vitest';" if kind == "vitest" else ""]
    lines += [_import(kind, "fs", "fs"), _import(kind, "cp", "child_process"), _import(kind, "shared", "../lib/shared.js")]
    lines += [_import(kind, f"m{n}", f"../lib/m{n}.js") for n in sorted({t.target for t in tests if t.kind == "module"})]
    for number, case in enumerate(tests):
        data, n = case.target % DATA, case.target
        body = {
            "module": f"expect(m{n}.VALUE).toBe({n});",
            "shared": "expect(shared.FIRST).toBe(0);",
            "data": f"expect(fs.readFileSync('data/d{data}.txt', 'utf8').trim()).toBe('ok');",
            "cached": f"expect(shared.cached({data})).toBe('ok');",
            "spawn": f"expect(cp.execFileSync(process.execPath, ['-e', \"{_child(kind, n)}\"], "
                     f"{{encoding: 'utf8'}}).trim()).toBe('{n}');",
            "source": f"expect(fs.readFileSync('lib/m{n}.js', 'utf8')).toContain('VALUE = {n};');",
        }[case.kind]
        lines.append(f"test('t{number} {case.kind} {n}', () => {{ {body} }});")
    return "\n".join(lines) + "\n"


def _child(kind: str, n: int) -> str:
    if kind == "vitest":
        return f"import('./lib/m{n}.js').then(m => console.log(m.VALUE))"
    return f"console.log(require('./lib/m{n}.js').VALUE)"


def module_source(kind: str, value: int) -> str:
    return f"export const VALUE = {value};\n" if kind == "vitest" else f"exports.VALUE = {value};\n"


def shared_source(kind: str) -> str:
    if kind == "vitest":
        return ("import fs from 'fs';\nimport { VALUE } from './m0.js';\nexport const FIRST = VALUE;\n"
                "export const cached = (n) => fs.readFileSync(`data/d${n}.txt`, 'utf8').trim();\n")
    return ("const fs = require('fs');\nexports.FIRST = require('./m0.js').VALUE;\n"
            "exports.cached = (n) => fs.readFileSync(`data/d${n}.txt`, 'utf8').trim();\n")


def config_source(kind: str, setup: bool) -> str:
    named = ", setupFiles: ['./setup.js']" if setup else ""
    if kind == "vitest":
        return f"export default {{ test: {{ testTimeout: 20000{named} }} }};\n"
    return f"module.exports = {{ testTimeout: 20000{named} }};\n"


CONFIG = {"jest": "jest.config.js", "vitest": "vitest.config.mjs"}


def baseline(kind: str, suite: list[list[Case]]) -> dict[str, str | None]:
    files: dict[str, str | None] = {
        "package.json": '{"name": "w", "private": true' + (', "type": "module"' if kind == "vitest" else "") + "}\n",
        CONFIG[kind]: config_source(kind, False), "lib/shared.js": shared_source(kind),
        "setup.js": "globalThis.SETUP = 1;\n"}
    files |= {f"lib/m{n}.js": module_source(kind, n) for n in range(MODULES)}
    files |= {f"data/d{n}.txt": "ok\n" for n in range(DATA)}
    files |= {f"test/f{number}.test.js": js_test_file(kind, tests) for number, tests in enumerate(suite)}
    return files


def apply(kind: str, files: dict[str, str | None], change: tuple[str, int, bool, list[Case]], count: list[int]) -> None:
    what, which, broken, tests = change
    if what == "module":
        files[f"lib/m{which}.js"] = module_source(kind, which + 100 if broken else which)
    elif what == "data":
        files[f"data/d{which % DATA}.txt"] = "bad\n" if broken else "ok\n"
    elif what == "config":
        files[CONFIG[kind]] = config_source(kind, True)
        files["setup.js"] = "throw new Error('setup broke');\n" if broken else "globalThis.SETUP = 2;\n"
    elif what == "setup":  # a setup file the config may not name (then nothing loads it)
        files["setup.js"] = "throw new Error('setup broke');\n" if broken else "globalThis.SETUP = 3;\n"
    elif what == "tests":
        existing = sorted(path for path in files if path.startswith("test/f"))
        files[existing[which % len(existing)]] = js_test_file(kind, tests)
    elif what == "remove":
        files[f"lib/m{which}.js"] = None
    elif what == "notes":
        files[f"notes/n{which}.md"] = "n\n"
    else:
        count[0] += 1
        files[f"test/new{count[0]}.test.js"] = js_test_file(kind, tests)


def write(root: Path, files: dict[str, str | None]) -> None:
    for rel, text in files.items():
        if text is None:
            continue
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def failures(result) -> set[str]:
    return {test for test, outcome in result.tests.items() if outcome in ("failed", "error")} | (
        set() if result.passed or result.tests else {"<the run failed without a report>"})


def selected_run(check, record: relatedtests.Record, chosen, directory: Path):
    """The final run as the Stop makes it (vacant.attribute.statechecks.StateChecks.run)."""
    result = run_check(check, directory, skip=chosen.skip)
    skip = relatedtests.settle(chosen, record.tests, result.tests) if chosen.skip.related else chosen.skip
    return with_reused(result, skip) if skip.tests else result


def selected_against_whole(tmp: Path, kind: str, suite: list[list[Case]], history: list):
    command = commands()[kind]
    check = SimpleNamespace(name="suite", command=command, timeout=180)
    base_dir, final_dir = tmp / "base", tmp / "final"
    for directory in (base_dir, final_dir):
        shutil.rmtree(directory, ignore_errors=True)
        directory.mkdir(parents=True)
    files = baseline(kind, suite)
    write(base_dir, files)
    base_manifest = read_manifest_of(base_dir)
    recorded = run_check(check, base_dir)
    assert recorded.passed, recorded.output[-3000:]
    record = relatedtests.record_of("suite", command, "base", {}, recorded.tests, base_dir, ())
    count = [0]
    for change in history:
        apply(kind, files, change, count)
    write(final_dir, files)
    shutil.rmtree(base_dir)  # the final state at the baseline's path (a record names paths, not places)
    final_dir.rename(base_dir)
    chosen = relatedtests.select(record, base_manifest, read_manifest_of(base_dir), {}, base_dir, (),
                                 relatedtests.reader(base_dir))
    selected = selected_run(check, record, chosen, base_dir)
    whole = run_check(check, base_dir)
    return failures(selected), failures(whole), chosen


tests_st = st.lists(st.builds(Case, st.sampled_from(KINDS), st.integers(0, MODULES - 1)), min_size=1, max_size=3)
suites = st.lists(tests_st, min_size=1, max_size=3)
changes = st.lists(st.tuples(st.sampled_from(("module", "module", "data", "config", "setup", "tests", "new test file",
                                               "remove", "notes")),
                             st.integers(0, MODULES - 1), st.booleans(), tests_st), min_size=1, max_size=3)


def _differential(tmp_path_factory, kind, suite, history):
    selected, whole, chosen = selected_against_whole(tmp_path_factory.mktemp(kind), kind, suite, history)
    assert selected == whole, chosen.summary()


@pytest.mark.slow
@settings(max_examples=2, deadline=None, suppress_health_check=list(HealthCheck))
@given(suite=suites, history=changes)
@example(suite=[[Case("spawn", 1)], [Case("module", 1)]], history=[("module", 1, True, [])])  # a child reads it
@example(suite=[[Case("source", 2)], [Case("module", 2)]], history=[("module", 2, True, [])])  # read as text
@example(suite=[[Case("module", 0)], [Case("module", 3)]], history=[("setup", 0, True, []), ("config", 0, True, [])])
def test_jest_selected_run_fails_what_the_whole_run_fails(tmp_path_factory, suite, history):
    _differential(tmp_path_factory, "jest", suite, history)


@pytest.mark.slow
@settings(max_examples=2, deadline=None, suppress_health_check=list(HealthCheck))
@given(suite=suites, history=changes)
@example(suite=[[Case("spawn", 1)], [Case("module", 1)]], history=[("module", 1, True, [])])
@example(suite=[[Case("source", 2)], [Case("module", 2)]], history=[("module", 2, True, [])])
@example(suite=[[Case("cached", 1)], [Case("module", 3)]], history=[("data", 1, True, []), ("tests", 1, True,
                                                                                               [Case("shared", 0)])])
def test_vitest_selected_run_fails_what_the_whole_run_fails(tmp_path_factory, suite, history):
    _differential(tmp_path_factory, "vitest", suite, history)


def test_only_one_plain_run_is_selectable():
    assert relatedtests.selectable("jest") == "jest"
    assert relatedtests.selectable("npx jest --ci -i") == "jest"
    assert relatedtests.selectable("CI=1 node_modules/.bin/jest --watchman=false") == "jest"
    assert relatedtests.selectable("vitest run") == "vitest"
    assert relatedtests.selectable("pnpm exec vitest --run --silent") == "vitest"
    for command in ("jest test/", "jest --coverage", "jest && ./deploy.sh", "jest --onlyChanged", "vitest run lib",
                    "vitest --no-isolate", "vitest related a.js", "npm test", "jest --config other.js", "pytest"):
        assert relatedtests.selectable(command) is None, command


def _record(tests: dict[str, str], root: Path) -> relatedtests.Record:
    return relatedtests.Record("suite", "jest", "jest", "base", relatedtests.env_key({}),
                               relatedtests.runner_stamps("jest", root, {}), relatedtests.live_stamp(root, ()), tests)


def test_every_change_the_graph_may_not_see_runs_the_check_whole(tmp_path):
    """Each gate, on manifests and texts alone: what differs decides, and the reason is pytest's."""
    tests = {"jest::test/a.test.js::a": "passed", "jest::test/b.test.js::b": "failed"}
    record = _record(tests, tmp_path)
    entry = ("file", 1, 1, "k0", 0o644)
    base = {"lib/a.js": entry, "test/a.test.js": entry, "test/b.test.js": entry, "data/x.txt": entry,
            "jest.config.js": entry}
    texts = {"jest.config.js": "module.exports = {testTimeout: 1};", "lib/a.js": "exports.A = 1;",
             "test/a.test.js": "require('../lib/a.js')", "test/b.test.js": "require('fs').readFileSync('data/x.txt')"}

    def chosen(final, text=texts, environ=None):
        return relatedtests.select(record, base, final, environ or {}, tmp_path, (), text.get)

    changed = dict(base, **{"lib/a.js": ("file", 1, 1, "k1", 0o644)})
    picked = chosen(changed)
    assert picked.skip.related == ("lib/a.js", "test/b.test.js") and picked.skip.tests == ("jest::test/a.test.js::a",)
    assert relatedtests.settle(picked, tests, {"jest::test/b.test.js::b": "failed"}).tests == ("jest::test/a.test.js::a",)
    assert (picked.reused, picked.why) == (1, {"jest::test/b.test.js::b": NOT_PASSED})
    whole = {
        "a data file": dict(base, **{"data/x.txt": ("file", 1, 1, "k1", 0o644)}),
        "a removed module": {k: v for k, v in base.items() if k != "lib/a.js"},
        "the config": dict(base, **{"jest.config.js": ("file", 1, 1, "k1", 0o644)}),
        "node_modules": dict(changed, **{"node_modules/x/index.js": entry}),
        "a mock": dict(changed, **{"__mocks__/fs.js": entry}),
    }
    for what, final in whole.items():
        assert chosen(final).why == dict.fromkeys(tests, SESSION) and not chosen(final).skip.related, what
    named = dict(texts, **{"jest.config.js": "module.exports = {resolver: './lib/a.js'};"})
    assert chosen(changed, named).why == dict.fromkeys(tests, SESSION)
    denied = dict(texts, **{"jest.config.js": "module.exports = {setupFilesAfterEnv: ['x']};"})
    assert chosen(changed, denied).example == {SESSION: "jest.config.js"}
    assert chosen(changed, environ={"NODE_OPTIONS": "--x"}).why == dict.fromkeys(tests, ENVIRONMENT)
    assert chosen(base).skip.related == ("test/b.test.js",)  # nothing changed: the one that did not pass runs
    notes = dict(changed, **{"docs/notes.md": entry})  # a file no project text names: no test can ask for it
    assert chosen(notes).skip.related == ("lib/a.js", "test/b.test.js")
    for text in ("readFileSync('docs/x')", "glob('*.md')", "open('notes.md')"):  # its directory, kind, name
        assert chosen(notes, dict(texts, **{"lib/a.js": text})).why == dict.fromkeys(tests, SESSION), text
    assert chosen(dict(changed, **{"tsconfig.json": entry})).why == dict.fromkeys(tests, SESSION)


def related_suite(kind: str, files_n: int, tests_n: int) -> dict[str, str | None]:
    """`files_n` test files of `tests_n` tests, each file importing one module of its own."""
    files: dict[str, str | None] = {
        "package.json": '{"name": "w", "private": true' + (', "type": "module"' if kind == "vitest" else "") + "}\n"}
    for n in range(files_n):
        files[f"lib/m{n}.js"] = module_source(kind, n)
        lines = js_test_file(kind, [Case("module", n)] * tests_n).splitlines()
        files[f"test/f{n}.test.js"] = "\n".join(line for line in lines if not line.startswith(("const fs", "const cp",
                                                 "const shared", "import * as fs", "import * as cp",
                                                 "import * as shared"))) + "\n"
    return files


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["vitest"])  # jest's: through the real Stop below
def test_a_one_module_change_runs_its_related_tests_only(tmp_path, kind):
    """Four test files of three tests, each importing one module of its own; one module broken:
    the selected run fails the same three tests as the whole run, runs their file alone and
    reuses the other nine (whose files report nothing)."""
    command = commands()[kind]
    check = SimpleNamespace(name="suite", command=command, timeout=180)
    write(tmp_path, related_suite(kind, 4, 3))
    before = read_manifest_of(tmp_path)
    recorded = run_check(check, tmp_path)
    assert recorded.passed and len(recorded.tests) == 12, recorded.output[-2000:]
    record = relatedtests.record_of("suite", command, "base", {}, recorded.tests, tmp_path, ())
    write(tmp_path, {"lib/m2.js": module_source(kind, 102)})
    chosen = relatedtests.select(record, before, read_manifest_of(tmp_path), {}, tmp_path, (),
                                 relatedtests.reader(tmp_path))
    selected = selected_run(check, record, chosen, tmp_path)
    assert failures(selected) == failures(run_check(check, tmp_path)) == {
        f"{kind}::test/f2.test.js::t{n} module 2" for n in range(3)}
    summary = chosen.summary()
    assert (summary["reused"], summary["ran"], summary["uncollected"]) == (9, 3, 3), summary
    assert summary["why"] == {CHANGED: 3} and summary["example"] == {CHANGED: "lib/m2.js"}
    assert {test for test, outcome in selected.tests.items() if outcome == "passed"} == {
        test for test in record.tests if "/f2." not in test}


@pytest.mark.slow
def test_a_stop_runs_the_related_tests_and_grades_as_the_whole_run(tmp_path, isolated_home):
    """Through the real recorder, the baseline probe (which records the jest check's tests) and the
    Stop: a step breaks lib/m2.js, another writes notes. The final run is jest's related run (one
    file); the report says 9 reused and 3 ran, and the findings and their grades are those of the
    same Stop without the record."""
    from step_histories import record_steps

    from vacant.attribute import baseline_probe
    from vacant.attribute.stop import Pipeline
    from vacant.core.locations import mark_installed
    from vacant.policy.contract.contract import load_contract
    from vacant.store.run import RunView

    command = commands()["jest"]
    root = tmp_path / "ws"
    root.mkdir()
    mark_installed(root)
    write(root, related_suite("jest", 4, 3))
    (root / "vacant.toml").write_text(f'[[guard]]\nname = "suite"\ncommand = "{command}"\ntimeout = 180\n')
    run_dir = record_steps(root, [{"lib/m2.js": module_source("jest", 102)}, {"notes.md": "done\n"}])
    baseline_probe.probe(root, run_dir)
    start = next(r for r in RunView.load(run_dir).records if r["type"] == "run_start")
    assert relatedtests.load(run_dir, "suite", command, start["baseline"]) is not None

    report = Pipeline(root, run_dir, load_contract(root), budget_s=600).run()
    broken = [f"jest::test/f2.test.js::t{n} module 2" for n in range(3)]
    assert report["selection"]["suite"] == {"recorded": 12, "reused": 9, "ran": 3, "uncollected": 3,
                                            "why": {CHANGED: 3}, "example": {CHANGED: "lib/m2.js"},
                                            "tests": {CHANGED: broken}}, report["selection"]
    graded = sorted((f["test"], f["level"], f["flip_step"]) for f in report["findings"])
    assert graded == [(test, "provable", 1) for test in broken]

    shutil.rmtree(run_dir / relatedtests.RECORDS)
    whole = Pipeline(root, run_dir, load_contract(root), budget_s=600).run()
    assert whole["selection"] == {}
    assert sorted((f["test"], f["level"], f["flip_step"]) for f in whole["findings"]) == graded
