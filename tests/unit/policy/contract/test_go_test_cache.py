"""Go's own test cache behind the wall (issue 43): `go test` reuses a package's result while the
files and environment variables its test read are unchanged, and the walled checks keep GOCACHE
between runs (a directory of the workspace's own in vacant's data, not the person's), so a Stop's
runs of a Go check after the first rerun only the packages a change reaches. The oracle is an
uncached run (`-count=1`) on the same state: the cached run fails exactly the tests it fails."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from vacant.policy.contract.checks import run_check, site_for

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("isolated_home")]


def package(name: str, value: int) -> dict[str, str]:
    return {f"{name}/{name}.go": f"package {name}\n\nfunc Value() int {{ return {value} }}\n",
            f"{name}/{name}_test.go": f'package {name}\n\nimport "testing"\n\n'
                                      f"func TestValue(t *testing.T) {{\n\tif Value() != 1 {{\n"
                                      f'\t\tt.Fatal("not one")\n\t}}\n}}\n'}


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def failures(result) -> set[str]:
    return {test for test, outcome in result.tests.items() if outcome in ("failed", "error")}


def test_a_walled_go_check_reruns_only_the_package_a_change_reaches(tmp_path):
    assert shutil.which("go"), "go is a part this test needs"
    root = tmp_path / "ws"
    write(root, {"go.mod": "module example.com/ws\n\ngo 1.21\n", **package("alpha", 1), **package("beta", 1)})
    site = site_for(root)
    assert site is not None and site.cache is not None, "the wall is a part this test needs"
    check = SimpleNamespace(name="go", command="go test ./...", timeout=300)
    first = run_check(check, root, site=site)
    assert first.passed and first.walled, first.output[-2000:]
    again = run_check(check, root, site=site)
    assert again.passed and again.output.count("(cached)") == 2, again.output[-2000:]

    write(root, package("alpha", 2))  # alpha's test now fails; beta's read nothing that changed
    cached = run_check(check, root, site=site)
    uncached = run_check(SimpleNamespace(name="go", command="go test -count=1 ./...", timeout=300), root, site=site)
    assert failures(cached) == failures(uncached) and failures(cached), (cached.tests, uncached.tests)
    assert "(cached)" in next(line for line in cached.output.splitlines() if "example.com/ws/beta" in line)
    assert not any("(cached)" in line for line in cached.output.splitlines() if "example.com/ws/alpha" in line)
