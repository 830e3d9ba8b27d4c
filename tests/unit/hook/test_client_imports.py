"""The lean client's imports, measured like the hook's: the launcher imports vacant/hook/client.py
as a top-level module, which loads nothing beyond what the interpreter itself starts with (-I -S):
`_socket` when a daemon is named, the `vacant` package only on the slow path. The deny table the
launcher and the client load where vacant failed (vacant/platforms/deny.py, a top-level module
then too) imports nothing either, and `re` and `json` only when it is asked."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
PROBE = r"""
import sys
before = set(sys.modules)
sys.path.insert(0, %r)
import client
new = sorted(set(sys.modules) - before)
print(" ".join(new))
""" % str(REPO / "vacant" / "hook")
ALLOWED = {"client", "gc"}  # `time` and `gc` are built into the interpreter


def test_the_client_module_imports_nothing_but_itself():
    out = subprocess.run([sys.executable, "-I", "-S", "-c", PROBE], capture_output=True, text=True, check=True).stdout
    assert out.split() and set(out.split()) <= ALLOWED, out


def test_the_client_module_imports_nothing_from_vacant():
    source = (REPO / "vacant" / "hook" / "client.py").read_text()
    top_level = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
    assert top_level and all(line.split()[1] in ("gc", "posix", "sys", "time") for line in top_level), top_level


def test_the_slow_path_finds_the_package_first_and_site_packages_after_the_standard_library(tmp_path):
    """`_importable`: the package's root before everything (its `vacant` is the one imported), the
    environment's site-packages after the standard library, as site would order them (so a stdlib
    import never lists site-packages first), each once however often it is called. The oracle is
    the interpreter's own stdlib path and the environment's, read in another process."""
    shadow = tmp_path / "root"
    (shadow / "vacant").mkdir(parents=True)
    (shadow / "vacant" / "__init__.py").write_text("WHERE = 'shadow'\n")
    code = ("import sys, json; sys.path.insert(0, %r); import client; stdlib = list(sys.path[1:]); "
            "client._importable(sys.argv[1]); client._importable(sys.argv[1]); import vacant, xxhash; "
            "print(json.dumps([sys.path, stdlib, vacant.WHERE]))" % str(REPO / "vacant" / "hook"))
    out = subprocess.run([sys.executable, "-I", "-S", "-c", code, str(shadow)], capture_output=True, text=True,
                         check=True).stdout
    import json
    path, stdlib, where = json.loads(out)
    site = subprocess.run([sys.executable, "-c", "import site; print(site.getsitepackages()[0])"], capture_output=True,
                          text=True, check=True).stdout.strip()
    assert where == "shadow" and path[0] == str(shadow), path
    assert path.index(site) > max(path.index(entry) for entry in stdlib), path
    assert len(path) == len(set(path)), path


DENY_PROBE = r"""
import sys
before = set(sys.modules)
sys.path.insert(0, %r)
import deny
loaded = sorted(set(sys.modules) - before)
deny.pre_tool(b'{"hook_event_name": "PostToolUse"}')
print(" ".join(loaded))
print(" ".join(sorted(name for name in set(sys.modules) - before if "." not in name and not name.startswith("_"))))
""" % str(REPO / "vacant" / "platforms")


def test_the_deny_table_imports_nothing_until_it_is_asked():
    out = subprocess.run([sys.executable, "-I", "-S", "-c", DENY_PROBE], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert out[0].split() == ["deny"], out[0]
    assert "vacant" not in out[1].split() and {"deny", "re"} <= set(out[1].split()), out[1]  # the standard library's only
    source = (REPO / "vacant" / "platforms" / "deny.py").read_text()
    top_level = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
    assert top_level == ["import sys  # built in: loads nothing"], top_level
