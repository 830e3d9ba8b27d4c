"""The lean client's imports, measured like the hook's: the launcher imports vacant/daemon/client.py
as a top-level module, which loads the C `_socket` module and nothing else beyond what the
interpreter itself starts with (-I -S); the `vacant` package is imported only on the slow path."""

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
""" % str(REPO / "vacant" / "daemon")
ALLOWED = {"_socket", "client"}  # `time` is built into the interpreter


def test_the_client_module_imports_only_socket():
    out = subprocess.run([sys.executable, "-I", "-S", "-c", PROBE], capture_output=True, text=True, check=True).stdout
    assert out.split() and set(out.split()) <= ALLOWED, out


def test_the_client_module_imports_nothing_from_vacant():
    source = (REPO / "vacant" / "daemon" / "client.py").read_text()
    top_level = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
    assert top_level and all(line.split()[1] in ("posix", "sys", "time", "_socket") for line in top_level), top_level
