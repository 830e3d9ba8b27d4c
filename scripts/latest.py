"""The suite on the newest releases pyproject.toml's ranges allow, and which dependency broke what.

    python3 scripts/latest.py diff VENV LOCK
    python3 scripts/latest.py attribute VENV LOCK REPORT_DIR

Run by scripts/test-latest, which installs the newest releases into VENV (.venv-latest) and runs
the suite there with a JUnit report in REPORT_DIR/junit.xml.

`diff` prints, one line each, every package whose version in VENV is not what LOCK (locks/test.txt)
pins: `name: locked X -> newest Y` (`not in the lock` for a new dependency, `not installed` for a
dropped one). The venv's installers (pip, setuptools, wheel) and the project itself are left out.

`attribute` reads the failing tests from the report and re-runs only those, first with nothing
changed (a test that passes then is flaky, not broken by a release), then once per changed
package with just that package downgraded to its locked version (`pip install --no-deps`), the
newest put back after each. A failure that a downgrade makes pass was broken by that upgrade; one
no single downgrade fixes is "not explained by one dependency" (two upgrades together, or a
downgrade that cannot run alone). It prints that summary and exits 1: something failed.

The bookkeeping (`changes`, `attribute`, `summary`, `node_id`, `still_failing`) is pure, given
callables that install a version and run a set of test ids; tests/unit/scripts/test_latest.py
checks it against a simulated suite. Stdlib only; the lock's pins are scripts/locked.py's (`wanted`:
the pinned lines whose environment marker holds on this interpreter)."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from locked import installed, normal, wanted  # scripts/locked.py (scripts/ is sys.path[0] when run)

ROOT = Path(__file__).resolve().parents[1]
INSTALLERS = frozenset({"pip", "setuptools", "wheel"})  # come with a venv; no range of ours names them

Run = Callable[[frozenset[str]], frozenset[str]]  # test ids to run -> those that failed
Install = Callable[[str, str], None]  # (package, version): put that version into the venv


# -- what changed ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Change:
    name: str
    locked: str | None  # None: a dependency the lock does not have (a newer release brought it)
    newest: str | None  # None: a locked package nothing installs any more

    @property
    def swappable(self) -> bool:
        """Both versions exist, so the locked one can stand in for the newest one."""
        return self.locked is not None and self.newest is not None

    def __str__(self) -> str:
        return f"{self.name}: locked {self.locked or '(not in the lock)'} -> newest {self.newest or '(not installed)'}"


def changes(locked: Mapping[str, str], have: Mapping[str, str], ignore: Iterable[str] = ()) -> list[Change]:
    """Every package at another version in `have` than in `locked`, by name; `ignore` left out."""
    skip = {normal(name) for name in ignore}
    names = sorted((set(locked) | set(have)) - skip)
    return [Change(name, locked.get(name), have.get(name)) for name in names if locked.get(name) != have.get(name)]


# -- which change broke what -------------------------------------------------------------------

@dataclass(frozen=True)
class Attribution:
    failing: frozenset[str]  # failed in the full run
    flaky: frozenset[str]  # of those, passed when re-run with nothing changed
    fixed_by: Mapping[str, frozenset[str]]  # test id -> packages whose downgrade alone made it pass

    @property
    def unexplained(self) -> frozenset[str]:
        return frozenset(test for test in self.failing - self.flaky if not self.fixed_by.get(test))

    def broken_by(self, package: str) -> frozenset[str]:
        return frozenset(test for test, packages in self.fixed_by.items() if package in packages)


def attribute(failing: frozenset[str], changed: Iterable[Change], run: Run, install: Install) -> Attribution:
    """Re-run the failing tests once unchanged, then once per swappable change with only that
    package at its locked version; the newest is put back after each, whatever happened."""
    consistent = run(failing)
    fixed_by: dict[str, set[str]] = {}
    swaps = [(change.name, change.locked, change.newest) for change in changed if change.swappable]
    for package, locked, newest in swaps if consistent else []:  # all flaky: nothing left to fix
        install(package, str(locked))
        try:
            still = run(consistent)
        finally:
            install(package, str(newest))
        for test in consistent - still:
            fixed_by.setdefault(test, set()).add(package)
    return Attribution(failing, failing - consistent, {test: frozenset(names) for test, names in fixed_by.items()})


def summary(attribution: Attribution, changed: Iterable[Change]) -> list[str]:
    """The report's lines: a header per package whose upgrade broke tests (two spaces in), its
    tests below it (four), then the failures no single downgrade explains, then the flaky ones."""
    lines = [f"which dependency broke what ({len(attribution.failing)} failing tests re-run with each "
             "changed package alone at its locked version):"]
    for change in changed:
        broken = attribution.broken_by(change.name)
        if broken:
            lines.append(f"  {change} broke {_count(broken)}:")
            lines += [f"    {test}{_others(attribution.fixed_by[test] - {change.name})}" for test in sorted(broken)]
    _section(lines, "not explained by one dependency", attribution.unexplained)
    _section(lines, "passed when re-run with nothing changed (flaky, not attributed)", attribution.flaky)
    if len(lines) == 1:
        lines.append("  no failing test")
    return lines


def _section(lines: list[str], title: str, tests: frozenset[str]) -> None:
    if tests:
        lines.append(f"  {title}: {_count(tests)}")
        lines += [f"    {test}" for test in sorted(tests)]


def _count(tests: frozenset[str]) -> str:
    return f"{len(tests)} test" + ("" if len(tests) == 1 else "s")


def _others(packages: frozenset[str]) -> str:
    """A test that either of two downgrades fixes needs both upgrades to fail: say so."""
    return f"  (also passes with {', '.join(sorted(packages))} downgraded alone)" if packages else ""


# -- pytest's JUnit report ---------------------------------------------------------------------

def node_id(classname: str, name: str, root: Path) -> str:
    """pytest's node id of a JUnit testcase. pytest writes the file's path with dots for slashes and
    no `.py`, then the classes, as `classname` (junitxml.mangle_test_address): the longest prefix
    naming a file under root is the file. A collection error has no classname: `name` is then the
    dotted path of its file (or directory)."""
    parts = classname.split(".") if classname else name.split(".")
    tail = [name] if classname else []
    for cut in range(len(parts), 0, -1):
        path = "/".join(parts[:cut])
        if (root / f"{path}.py").is_file():
            return "::".join([f"{path}.py", *parts[cut:], *tail])
        if not classname and cut == len(parts) and (root / path).is_dir():
            return path
    return "::".join(filter(None, [classname, name]))  # nothing on disk: still unique, never re-run as a path


def outcomes(report: Path, root: Path = ROOT) -> dict[str, bool]:
    """{node id: passed} of every testcase in a JUnit report; a skipped test counts as passed, and
    a test reported twice (a failing teardown after a pass) as failed if either report failed."""
    result: dict[str, bool] = {}
    for case in ET.parse(report).iter("testcase"):
        test = node_id(case.get("classname", ""), case.get("name", ""), root)
        passed = case.find("failure") is None and case.find("error") is None
        result[test] = result.get(test, True) and passed
    return result


def still_failing(requested: Iterable[str], reported: Mapping[str, bool]) -> frozenset[str]:
    """The requested ids that did not pass: an id passed when the re-run reported it, or tests
    under it (a file that failed to collect before), and none of them failed. An id the re-run
    never reported (a crashed worker, a module that no longer collects) did not pass."""
    failed = set()
    for test in requested:
        under = [passed for other, passed in reported.items()
                 if other == test or other.startswith(test + "::") or other.startswith(test + "/")]
        if not under or not all(under):
            failed.add(test)
    return frozenset(failed)


# -- the commands --------------------------------------------------------------------------------

def project_name(root: Path = ROOT) -> str:
    with open(root / "pyproject.toml", "rb") as handle:
        return str(tomllib.load(handle)["project"]["name"])


def _pip(venv: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(venv / "bin" / "python"), "-m", "pip", *args, "--disable-pip-version-check"],
                          capture_output=True, text=True, env={**os.environ, "PIP_CONSTRAINT": ""})


def _installer(venv: Path) -> Install:
    def install(package: str, version: str) -> None:
        done = _pip(venv, "install", "--quiet", "--no-deps", "--no-compile", f"{package}=={version}")
        if done.returncode:
            raise RuntimeError(f"pip install {package}=={version} failed:\n{done.stdout}{done.stderr}")
        # a lone downgrade can leave a package whose requirements no longer hold (pydantic and its
        # exact pydantic-core): said here, so a failure it cannot explain is read with that in mind
        check = _pip(venv, "check")
        print(f"scripts/test-latest: {package} at {version}" +
              ("" if check.returncode == 0 else "; pip check: " + "; ".join(check.stdout.splitlines()[:3])),
              flush=True)
    return install


def _runner(venv: Path, report_dir: Path) -> Run:
    """Runs test ids as scripts/test does (xdist, load groups), each run's output in a log file."""
    runs = iter(range(1, 10**6))

    def run(tests: frozenset[str]) -> frozenset[str]:
        number = next(runs)
        report, log = report_dir / f"rerun-{number}.xml", report_dir / f"rerun-{number}.log"
        command = [str(venv / "bin" / "python"), "-m", "pytest", "-p", "xdist", "-n",
                   os.environ.get("VACANT_TEST_WORKERS", "auto"), "--dist", "loadgroup", "-q",
                   "--continue-on-collection-errors", f"--junitxml={report}", *sorted(tests)]
        with open(log, "w") as output:
            subprocess.run(command, cwd=ROOT, stdout=output, stderr=subprocess.STDOUT)
        failed = still_failing(tests, outcomes(report) if report.exists() else {})
        print(f"scripts/test-latest: re-run {number}: {len(failed)} of {len(tests)} still fail ({log})", flush=True)
        return failed
    return run


def diff_command(venv: Path, lock: Path) -> list[Change]:
    changed = changes(wanted(lock), installed(venv), ignore=INSTALLERS | {project_name()})
    print(f"scripts/test-latest: {len(changed)} packages in {venv} differ from {lock}"
          + (":" if changed else ""))
    for change in changed:
        print(f"  {change}")
    return changed


def attribute_command(venv: Path, lock: Path, report_dir: Path) -> int:
    changed = changes(wanted(lock), installed(venv), ignore=INSTALLERS | {project_name()})
    failing = frozenset(test for test, passed in outcomes(report_dir / "junit.xml").items() if not passed)
    if not failing:
        print("scripts/test-latest: the report names no failing test: nothing to attribute", file=sys.stderr)
        return 1
    print(f"scripts/test-latest: {len(failing)} tests failed; re-running them with each of "
          f"{sum(change.swappable for change in changed)} changed packages at its locked version", flush=True)
    found = attribute(failing, changed, _runner(venv, report_dir), _installer(venv))
    print("scripts/test-latest: " + "\n".join(summary(found, changed)))
    if not any(change.swappable for change in changed):
        print(f"scripts/test-latest: no package is newer than {lock} pins: these failures are not a new "
              "release's doing (./scripts/test should fail the same way)")
    return 1


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[0] == "diff":
        diff_command(Path(argv[1]), Path(argv[2]))
        return 0
    if len(argv) == 4 and argv[0] == "attribute":
        return attribute_command(Path(argv[1]), Path(argv[2]), Path(argv[3]))
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
