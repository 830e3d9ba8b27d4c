"""`vacant doctor` and the hook watch compare exactly what `vacant init` wrote: a hook entry
replaced by another that still says `vacant-hook`, a matcher narrowed, a `vacant` shim put first
on PATH, an edited package file: each is named. The real `vacant init` writes the settings."""

from __future__ import annotations

import subprocess

import json
import os
import sys
from pathlib import Path

import pytest

from vacant.cli import main
from vacant.core.locations import read_install
from vacant.record.hookwatch import missing_hooks


@pytest.fixture(autouse=True)
def in_ws(isolated_home, tmp_path, monkeypatch) -> Path:
    root = tmp_path / "ws"
    root.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)  # a real repository: git passes over an empty .git
    monkeypatch.chdir(root)
    return root


def vacant(capsys, monkeypatch, *args: str) -> tuple[int, dict]:
    monkeypatch.setattr(sys, "argv", ["vacant", *args])
    with pytest.raises(SystemExit) as done:
        main()
    out, _err = capsys.readouterr()
    return done.value.code, (json.loads(out) if "--json" in args else {})


def lines(report: dict) -> dict[str, str]:
    return {line["name"]: line["status"] for line in report["lines"]}


def _settings(root: Path) -> Path:
    return root / ".claude" / "settings.local.json"


def _edit_command(settings: dict) -> None:
    for groups in settings["hooks"].values():
        for group in groups:
            for handler in group["hooks"]:
                if handler.get("type") == "command" and "vacant-hook" in handler["command"]:
                    handler["command"] = "true # vacant-hook"  # still says vacant-hook: a substring test passes
                    return


def _narrow_matcher(settings: dict) -> None:
    settings["hooks"]["PreToolUse"][0]["matcher"] = "^NeverATool$"


def _add_env(settings: dict) -> None:  # the control: the person's own settings around vacant's entries
    settings["env"] = {"FOO": "1"}


@pytest.mark.slow
@pytest.mark.parametrize("edit, intact", [(_edit_command, False), (_narrow_matcher, False), (_add_env, True)])
def test_an_edited_hook_entry_is_named_by_doctor_and_the_hook_watch(in_ws, capsys, monkeypatch, edit, intact):
    code, _ = vacant(capsys, monkeypatch, "init", "--platform", "claude", "--no-wall") if _has_no_wall() else \
        vacant(capsys, monkeypatch, "init", "--platform", "claude")
    assert code in (0, None)
    path = _settings(in_ws)
    settings = json.loads(path.read_text())
    edit(settings)
    path.write_text(json.dumps(settings, indent=2))
    _code, report = vacant(capsys, monkeypatch, "doctor", "--platform", "claude", "--json")
    assert (lines(report)["hooks kept"] == "ok") == intact, report
    assert (missing_hooks(read_install(in_ws), "claude") is None) == intact


@pytest.mark.slow
def test_a_vacant_shim_on_path_and_an_edited_package_are_named(in_ws, capsys, monkeypatch, tmp_path):
    vacant(capsys, monkeypatch, *(["init", "--platform", "claude"] + (["--no-wall"] if _has_no_wall() else [])))
    _code, report = vacant(capsys, monkeypatch, "doctor", "--platform", "claude", "--json")
    assert lines(report)["vacant on PATH"] == "ok" and lines(report)["package"] == "ok"
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "vacant").write_text("#!/bin/sh\necho 'chain intact'\n")
    (shim / "vacant").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim}{os.pathsep}{os.environ.get('PATH', '')}")
    _code, report = vacant(capsys, monkeypatch, "doctor", "--platform", "claude", "--json")
    assert lines(report)["vacant on PATH"] == "fail"
    record = read_install(in_ws)  # a package file edited behind vacant's back (simulated on the record's side)
    record["package"]["digest"] = "0" * 64
    from vacant.core.locations import write_install

    write_install(in_ws, record)
    _code, report = vacant(capsys, monkeypatch, "doctor", "--platform", "claude", "--json")
    assert lines(report)["package"] == "fail"


def _has_no_wall() -> bool:
    from vacant.commands import init

    return "no_wall" in Path(init.__file__).read_text() or "--no-wall" in Path(init.__file__).read_text()
