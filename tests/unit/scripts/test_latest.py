"""scripts/latest.py, what ./scripts/test-latest stands on: the lock's pins (against pip's own
reading of the same file), the versions that changed, which upgrade broke which test (against a
simulated suite whose breakages are drawn at random and kept hidden from the code under test), and
the node ids read back from pytest's JUnit report (against pytest's own mangling, and a real run)."""

from __future__ import annotations

import functools
import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[3]
SCRIPTS = REPO / "scripts"


def _load_latest():
    """scripts/latest.py by its path (scripts/ is no package), with scripts/ on sys.path while it
    loads, as when it runs, for its `from locked import ...`."""
    spec = importlib.util.spec_from_file_location("vacant_scripts_latest", SCRIPTS / "latest.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    sys.path.insert(0, str(SCRIPTS))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(SCRIPTS))
    return module


latest = _load_latest()


# -- the lock's pins, as pip reads them ---------------------------------------------------------

@functools.cache
def _pip_session():
    from pip._internal.network.session import PipSession

    return PipSession()  # never used for a download here: a requirements file names no URL


def _pip_view(lock: Path) -> dict[str, str]:
    """The pins pip itself reads from a requirements file (its parser, no network), kept where the
    marker holds here: the oracle the hand-written regex of scripts/locked.py is checked against."""
    from pip._internal.req.req_file import parse_requirements

    found = {}
    for parsed in parse_requirements(str(lock), session=_pip_session()):
        requirement = Requirement(parsed.requirement)
        if requirement.marker is None or requirement.marker.evaluate():
            (specifier,) = requirement.specifier
            assert specifier.operator == "=="
            found[canonicalize_name(requirement.name)] = specifier.version
    return found


PIP_INTERNALS = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # pip's own use of pkg_resources


@PIP_INTERNALS
@pytest.mark.parametrize("lock", sorted((REPO / "locks").glob("*.txt")), ids=lambda path: path.name)
def test_a_real_lock_reads_as_pip_reads_it(lock):
    assert latest.wanted(lock) == _pip_view(lock)


def _words(alphabet, prefix=""):
    """`prefix` and up to seven characters of the alphabet (at least one without a prefix): what
    from_regex would give, without the seconds hypothesis takes to build a regex strategy."""
    return st.text(alphabet, min_size=0 if prefix else 1, max_size=7).map(lambda word: prefix + word)


release_versions = st.builds(
    str.__add__, st.lists(st.integers(0, 2026).map(str), min_size=1, max_size=4).map(".".join),
    st.sampled_from(["", ".post1", "b2", "rc1"]))
MARKERS = [None, "sys_platform == 'win32'", "sys_platform == 'linux'", "python_full_version < '3.12'",
           "python_full_version >= '3.11'", "platform_python_implementation != 'PyPy'",
           "(implementation_name != 'pypy' and os_name == 'nt') or platform_python_implementation != 'PyPy'"]
# one package pinned twice, one version per range of environments, as numpy in locks/phoenix.txt
SPLITS = [("python_full_version < '3.12'", "python_full_version >= '3.12'"),
          ("sys_platform == 'win32'", "sys_platform != 'win32'"),
          ("platform_python_implementation == 'PyPy'", "platform_python_implementation != 'PyPy'")]
HASH = "    --hash=sha256:" + "0" * 64


@st.composite
def lock_texts(draw):
    """A lock as `uv pip compile --generate-hashes --universal` writes one: a pinned line per package
    and environment range (the same package again under another marker), its hashes continued on
    the next lines, `# via` comments; names spelled with any case and separators. A package's lines
    have markers no two of which hold in one environment, as in a lock uv writes."""
    lines = []
    names = draw(st.lists(st.builds(str.__add__, st.sampled_from("abxyz"), _words("abxyz019", "")),
                          unique=True, max_size=8))
    for name in names:
        spelled = draw(st.sampled_from(["", "py-", "Py_", "PY."])) + draw(st.sampled_from([name, name.upper()]))
        for marker in draw(st.sampled_from(MARKERS).map(lambda marker: [marker]) |
                           st.sampled_from(SPLITS).flatmap(st.permutations)):
            version = draw(release_versions)
            lines.append(f"{spelled}=={version}" + (f" ; {marker}" if marker else "") + " \\")
            lines += [HASH + " \\"] * draw(st.integers(0, 2)) + [HASH]
            lines += draw(st.sampled_from([[], ["    # via vacant-trace"], ["    # via", "    #   a", "    #   b"]]))
    return "\n".join(lines) + "\n"


@PIP_INTERNALS
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=lock_texts())
def test_a_generated_lock_reads_as_pip_reads_it(tmp_path, text):
    lock = tmp_path / "lock.txt"
    lock.write_text(text)
    assert latest.wanted(lock) == _pip_view(lock)


# -- what changed ---------------------------------------------------------------------------------

versions = st.sampled_from(["1.0", "1.1", "2.0", "2.0.post1", "0.66b2"])
package_names = st.sampled_from(["pydantic", "pydantic-core", "typer", "rich", "pip", "vacant-trace", "watchdog"])


@given(locked=st.dictionaries(package_names, versions), have=st.dictionaries(package_names, versions),
       ignore=st.sets(st.sampled_from(["pip", "Vacant_Trace", "setuptools"])))
def test_changes_name_every_package_at_another_version_once(locked, have, ignore):
    changed = latest.changes(locked, have, ignore)
    skipped = {"vacant-trace" if name == "Vacant_Trace" else name for name in ignore}
    expected = [(name, locked.get(name), have.get(name)) for name in sorted(set(locked) | set(have))
                if name not in skipped and locked.get(name) != have.get(name)]
    assert [(change.name, change.locked, change.newest) for change in changed] == expected
    for change in changed:
        assert change.swappable == (change.name in locked and change.name in have)
        assert str(change) == (f"{change.name}: locked {locked.get(change.name, '(not in the lock)')} -> "
                               f"newest {have.get(change.name, '(not installed)')}")


# -- which upgrade broke what: a simulated suite --------------------------------------------------

@st.composite
def suites(draw):
    """Packages (upgraded, unchanged, new, dropped) and tests, and the hidden truth: the packages
    whose newest release alone fails each test, the pairs whose newest releases fail it only
    together, and the tests that failed once by chance (flaky)."""
    kinds = draw(st.lists(st.sampled_from(["upgraded", "unchanged", "new", "dropped"]), max_size=6))
    locked, newest = {}, {}
    for number, kind in enumerate(kinds):
        name = f"pkg-{number}"
        old = draw(versions)
        if kind != "new":
            locked[name] = old
        if kind != "dropped":
            newest[name] = draw(versions.filter(lambda version: version != old)) if kind != "unchanged" else old
    upgraded = sorted(name for name in locked if name in newest and locked[name] != newest[name])
    culprits = upgraded + [name for name in newest if name not in locked]  # a new package can break a test too
    tests = [f"tests/unit/test_{number}.py::test_it" for number in range(draw(st.integers(0, 10)))]
    alone = {test: draw(st.sets(st.sampled_from(culprits), max_size=2)) if culprits else set() for test in tests}
    pairs = {test: draw(st.sets(st.frozensets(st.sampled_from(upgraded), min_size=2, max_size=2), max_size=2))
             if len(upgraded) >= 2 else set() for test in tests}
    flaky = draw(st.sets(st.sampled_from(tests))) if tests else set()
    return locked, newest, alone, pairs, flaky


class Venv:
    """The simulated environment: the installed versions, and a suite whose failures are a function
    of them alone (the hidden truth); every install and run is recorded."""

    def __init__(self, locked, newest, alone, pairs):
        self.locked, self.newest, self.alone, self.pairs = locked, newest, alone, pairs
        self.installed = dict(newest)
        self.runs = []

    def install(self, package, version):
        assert version in (self.locked[package], self.newest[package]), (package, version)
        self.installed[package] = version

    def is_newest(self, package):
        return self.installed.get(package) == self.newest.get(package)

    def fails(self, test):
        return any(self.is_newest(package) for package in self.alone[test]) or \
            any(all(self.is_newest(package) for package in pair) for pair in self.pairs[test])

    def run(self, tests):
        self.runs.append(frozenset(tests))
        return frozenset(test for test in tests if self.fails(test))


def _expected(locked, newest, alone, pairs, flaky):
    """The attribution worked out from the truth by set algebra, no suite run: downgrading package
    P alone fixes a test when every lone cause is P (a new package cannot be downgraded) and every
    pair holds P."""
    upgraded = {name for name in locked if name in newest and locked[name] != newest[name]}
    broken = {test for test in alone if alone[test] or pairs[test]}
    fixed_by = {test: {package for package in upgraded
                       if alone[test] <= {package} and all(package in pair for pair in pairs[test])}
                for test in broken}
    return broken, fixed_by, flaky - broken, {test for test in broken if not fixed_by[test]}


@settings(max_examples=200)
@given(suite=suites())
def test_attribution_names_what_each_upgrade_broke(suite):
    locked, newest, alone, pairs, flaky = suite
    venv = Venv(locked, newest, alone, pairs)
    failing = frozenset(test for test in alone if venv.fails(test)) | flaky  # the full run
    changed = latest.changes(locked, newest)

    found = latest.attribute(failing, changed, venv.run, venv.install)

    broken, fixed_by, expected_flaky, unexplained = _expected(locked, newest, alone, pairs, flaky)
    assert found.failing == failing
    assert found.flaky == expected_flaky
    assert {test: set(found.fixed_by.get(test, ())) for test in broken} == fixed_by
    assert set(found.fixed_by) <= broken
    assert found.unexplained == unexplained
    for package in {change.name for change in changed}:
        assert found.broken_by(package) == {test for test in broken if package in fixed_by[test]}
    assert venv.installed == newest, "every downgraded package is back at its newest release"
    assert all(run <= failing for run in venv.runs), "only the failing tests are re-run"


@given(suite=suites(), fail_at=st.integers(1, 6))
def test_a_run_that_raises_still_puts_the_newest_release_back(suite, fail_at):
    locked, newest, alone, pairs, flaky = suite
    venv = Venv(locked, newest, alone, pairs)
    failing = frozenset(alone) | flaky
    calls = []

    def run(tests):
        calls.append(tests)
        if len(calls) == fail_at:
            raise KeyboardInterrupt
        return venv.run(tests)

    try:
        latest.attribute(failing, latest.changes(locked, newest), run, venv.install)
    except KeyboardInterrupt:
        pass
    assert venv.installed == newest


def _sections(lines):
    """{section header: the tests listed under it} of a summary (headers two spaces in, tests four)."""
    sections, header = {}, None
    for line in lines[1:]:
        if line.startswith("    "):
            sections[header].add(line.split()[0])
        else:
            header = line.strip()
            sections[header] = set()
    return sections


@settings(max_examples=100)
@given(suite=suites())
def test_the_summary_lists_each_test_under_what_broke_it(suite):
    locked, newest, alone, pairs, flaky = suite
    venv = Venv(locked, newest, alone, pairs)
    failing = frozenset(test for test in alone if venv.fails(test)) | flaky
    changed = latest.changes(locked, newest)
    broken, fixed_by, expected_flaky, unexplained = _expected(locked, newest, alone, pairs, flaky)

    sections = _sections(latest.summary(latest.attribute(failing, changed, venv.run, venv.install), changed))

    expected = {}
    for change in changed:
        tests = {test for test in broken if change.name in fixed_by[test]}
        if tests:
            expected[f"{change} broke {len(tests)} test{'s' * (len(tests) != 1)}:"] = tests
    if unexplained:
        expected[f"not explained by one dependency: {len(unexplained)} test{'s' * (len(unexplained) != 1)}"] = unexplained
    if expected_flaky:
        expected[f"passed when re-run with nothing changed (flaky, not attributed): {len(expected_flaky)} "
                 f"test{'s' * (len(expected_flaky) != 1)}"] = expected_flaky
    if not failing:
        expected["no failing test"] = set()
    assert sections == expected


# -- node ids from the JUnit report -----------------------------------------------------------------

def _mangle(nodeid):
    """pytest's own (classname, name) for a node id, as its JUnit report writes them."""
    from _pytest.junitxml import mangle_test_address

    names = mangle_test_address(nodeid)
    return ".".join(names[:-1]), names[-1]


@st.composite
def node_ids(draw):
    directories = draw(st.lists(st.sampled_from(["tests", "unit", "scripts", "e2e", "test_dir"]), max_size=3))
    module = draw(_words("ab1_", "test_"))
    classes = draw(st.lists(_words("aB1", "Test"), max_size=2))
    function = draw(_words("ab1_", "test_"))
    params = draw(st.none() | st.text(st.sampled_from("ab1.-/:[] _"), max_size=12))
    path = "/".join([*directories, f"{module}.py"])
    test = "::".join([path, *classes, function]) + ("" if params is None else f"[{params}]")
    return path, draw(st.sampled_from([path, test]))  # a file's own report (a collection error), or a test


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=node_ids())
def test_node_ids_read_back_from_pytests_junit_names(tmp_path_factory, case):
    path, nodeid = case
    root = tmp_path_factory.mktemp("root")
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text("")
    for directory in Path(path).parents:  # decoys: a module named as each directory on the way
        if directory.name:
            (root / directory.with_suffix(".py")).write_text("")
    assert latest.node_id(*_mangle(nodeid), root) == nodeid


@pytest.mark.parametrize("requested, reported, failed", [
    ({"a.py::t"}, {"a.py::t": True}, set()),
    ({"a.py::t"}, {"a.py::t": False}, {"a.py::t"}),
    ({"a.py::t"}, {}, {"a.py::t"}),  # never reported: a crashed worker, a module that no longer collects
    ({"a.py::t"}, {"a.py::t2": True}, {"a.py::t"}),  # another test whose id starts the same
    ({"a.py"}, {"a.py::t": True, "a.py::C::u[1]": True}, set()),  # a file that failed to collect now runs
    ({"a.py"}, {"a.py::t": True, "a.py::u": False}, {"a.py"}),
    ({"d"}, {"d/a.py::t": True}, set()),  # a directory's collection error
    ({"d"}, {"dd/a.py::t": True}, {"d"}),
], ids=["passed", "failed", "unreported", "another-test", "collects-now", "one-under-fails", "directory",
        "another-directory"])
def test_still_failing(requested, reported, failed):
    assert latest.still_failing(requested, reported) == failed


@pytest.mark.slow  # a pytest of its own
def test_a_real_junit_report_reads_back_as_the_tests_own_node_ids(tmp_path):
    """Each test writes its own node id; the report must name the same ids and outcomes."""
    seen = tmp_path / "seen.txt"
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "sub" / "deeper").mkdir(parents=True)
    (tmp_path / "sub" / "deeper" / "test_mod.py").write_text(textwrap.dedent(f"""\
        import pytest

        def _note(request):
            with open({str(seen)!r}, "a") as handle:
                handle.write(request.node.nodeid + "\\n")

        @pytest.mark.parametrize("value", ["a.b/c", "x::y", 1.5])
        def test_params(request, value):
            _note(request)
            assert value != 1.5

        class TestGroup:
            def test_inside(self, request):
                _note(request)

            @pytest.mark.skip
            def test_skipped(self):
                pass
        """))
    (tmp_path / "sub" / "test_broken.py").write_text("import no_such_module_anywhere\n")
    report = tmp_path / "junit.xml"
    subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-q",
                    "--continue-on-collection-errors", f"--junitxml={report}", "sub"],
                   cwd=tmp_path, capture_output=True, timeout=120)

    ran = set(seen.read_text().split())
    found = latest.outcomes(report, tmp_path)
    assert ran == {"sub/deeper/test_mod.py::test_params[a.b/c]", "sub/deeper/test_mod.py::test_params[x::y]",
                   "sub/deeper/test_mod.py::test_params[1.5]", "sub/deeper/test_mod.py::TestGroup::test_inside"}
    assert found == {**{test: not test.endswith("[1.5]") for test in ran},
                     "sub/deeper/test_mod.py::TestGroup::test_skipped": True, "sub/test_broken.py": False}
