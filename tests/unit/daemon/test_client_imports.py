"""The lean client's imports, measured like the hook's: on its fast path it loads the C `_socket`
module and vacant's pointer lookup, nothing else beyond what the interpreter itself starts with
(the launcher runs it with -I -S); the rest is imported only on the slow path."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
PROBE = r"""
import os, sys  # what the vacant-hook-client.py launcher itself imports
sys.path.insert(0, %r)
before = set(sys.modules)
import vacant.daemon.client
new = sorted(set(sys.modules) - before)
print(" ".join(new))
""" % str(REPO)
ALLOWED = {"_socket", "time", "stat", "_stat", "__future__", "vacant", "vacant.daemon", "vacant.daemon.pointer",
           "vacant.daemon.client"}


def test_the_client_fast_path_imports_almost_nothing():
    out = subprocess.run([sys.executable, "-I", "-S", "-c", PROBE], capture_output=True, text=True, check=True).stdout
    assert set(out.split()) <= ALLOWED
