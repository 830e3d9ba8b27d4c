"""`lean.lean_pathlib` (vacant/hook/lean.py): pathlib imported with stand-ins for the modules it uses only in rare
methods (urllib.parse, fnmatch and re: `as_uri`, `match`, `glob`; functools: `glob`'s cache;
operator: `drive` and `root`; ntpath: Windows paths; warnings: deprecated methods) behaves exactly
as the stock pathlib does.

The oracle is the stock pathlib itself: the same generated operations run in a second interpreter
that imported pathlib plainly, and both answers must be equal. The lean side also reports what it
had loaded before the first operation: neither deferred module, or the stand-ins did nothing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

DAEMON_DIR = Path(__file__).resolve().parents[3] / "vacant" / "hook"
PROBE = r"""
import sys
lean = sys.argv[1] == "lean"
deferred = None
if lean:
    sys.path.insert(0, sys.argv[2])
    import lean
    lean.lean_pathlib()
    deferred = sorted(n for n in ("urllib", "urllib.parse", "fnmatch", "ipaddress", "ntpath", "warnings",
                                  "functools", "operator", "collections") if n in sys.modules)
from pathlib import Path, PurePosixPath, PureWindowsPath
import json  # after the stand-ins' check: json imports re, and re functools and collections
cases = json.loads(sys.stdin.read())

def attempt(operation):
    try:
        return operation()
    except Exception as error:
        return f"raised {type(error).__name__}: {error}"

results = [[attempt(lambda: Path("/" + path).as_uri()), attempt(lambda: PurePosixPath(path).match(pattern)),
            attempt(lambda: [Path("/" + path).drive, Path(path).root, Path("/" + path).anchor]),
            attempt(lambda: [str(PureWindowsPath("c:/" + path)), PureWindowsPath(path).drive,
                             PureWindowsPath(path).is_reserved(), PureWindowsPath("c:/" + path).match(pattern)])]
           for path, pattern in cases["pairs"]]
found = attempt(lambda: sorted(str(p.relative_to(cases["root"])) for p in Path(cases["root"]).glob(cases["glob"])))
import fnmatch, urllib.parse, ntpath, warnings, functools, operator
real = [type(module).__name__ for module in (fnmatch, urllib.parse, ntpath, warnings, functools, operator)]
real.append(fnmatch.fnmatchcase("a.py", "*.py"))
print(json.dumps({"deferred": deferred, "results": results, "glob": found, "real": real}))
"""

NAME = st.text(alphabet="ab. %#?é[]-_*", min_size=1, max_size=6).filter(lambda s: s not in (".", ".."))
PATH = st.lists(NAME, min_size=1, max_size=3).map("/".join)
PATTERN = st.lists(st.text(alphabet="ab.*?[]!-_ ", min_size=1, max_size=5), min_size=1, max_size=2).map("/".join)


def probe(kind: str, cases: dict) -> dict:
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", PROBE, kind, str(DAEMON_DIR)],
                          input=json.dumps(cases), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


@pytest.mark.slow
@settings(max_examples=12, deadline=None)
@given(pairs=st.lists(st.tuples(PATH, PATTERN), min_size=1, max_size=40), glob=PATTERN, files=st.lists(PATH, max_size=8))
def test_lean_pathlib_answers_as_the_stock_pathlib(tmp_path_factory, pairs, glob, files):
    root = tmp_path_factory.mktemp("tree")
    for name in files:
        target = root / name
        if not any(parent.is_file() for parent in target.parents) and not target.is_dir():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("x")
    cases = {"pairs": pairs, "glob": glob, "root": str(root)}
    lean, stock = probe("lean", cases), probe("stock", cases)
    assert lean["deferred"] == [], f"the stand-ins deferred nothing: {lean['deferred']} loaded with pathlib"
    assert lean["real"] == ["module"] * 6 + [True], "a stand-in was left in sys.modules"
    assert {key: lean[key] for key in ("results", "glob")} == {key: stock[key] for key in ("results", "glob")}


def test_lean_pathlib_leaves_an_imported_pathlib_alone():
    code = ("import sys, pathlib; sys.path.insert(0, sys.argv[1]); import lean; before = sys.modules['pathlib'];"
            " lean.lean_pathlib(); print(sys.modules['pathlib'] is before and 'fnmatch' in sys.modules)")
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", code, str(DAEMON_DIR)], capture_output=True, text=True,
                          check=True, timeout=60)
    assert proc.stdout.strip() == "True"
