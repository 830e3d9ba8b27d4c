"""One door for a hook call: every command vacant installs runs the one launcher
(vacant/vacant-hook-client.py) or the `vacant-hook` console script, and both run
vacant.hook.client:main. The in-process entry's old launcher (vacant-hook.py) is gone: nothing
ships it and nothing names it."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import tomllib

from vacant.platforms.all_platforms import REGISTERED
from vacant.platforms.settings_file import MARK, PORTABLE_SCOPES, hook_command

REPO = Path(__file__).resolve().parents[3]
LAUNCHER = REPO / "vacant" / "vacant-hook-client.py"


def test_every_installed_command_is_the_launcher_or_the_console_script():
    for platform in REGISTERED:
        if not platform.scopes:
            continue
        for scope in platform.scopes:
            argv = shlex.split(hook_command(platform.name, scope))
            if scope in PORTABLE_SCOPES:
                assert argv == [MARK, platform.name]
            else:
                assert argv == [sys.executable, "-I", "-S", str(LAUNCHER), platform.name]


def test_the_console_script_is_the_clients_main_and_the_old_launcher_is_gone():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert project["project"]["scripts"][MARK] == "vacant.hook.client:main"
    shipped = project["tool"]["setuptools"]["package-data"]["vacant"]
    assert "vacant-hook-client.py" in shipped and "vacant-hook.py" not in shipped
    assert not (REPO / "vacant" / "vacant-hook.py").exists()
    named = [str(path) for path in (REPO / "vacant").rglob("*.py") if "vacant-hook.py" in path.read_text()]
    assert named == []
