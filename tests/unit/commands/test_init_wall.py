"""`vacant init` puts up the wall (the platform's own sandbox settings), merged into what the
person had, idempotent, taken out byte for byte by `vacant uninstall`; `--no-wall` leaves it
down and says so; `doctor` fails while the wall's Debian packages are missing."""

from __future__ import annotations

import json
import os
import sys
import tomllib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vacant.cli import main
from vacant.core.locations import state_dir, user_config_dir
from vacant.core.wall import temp_dirs


@pytest.fixture(autouse=True)
def in_ws(isolated_home, ws, monkeypatch) -> None:
    monkeypatch.chdir(ws)
    (ws / ".git").mkdir(exist_ok=True)


def vacant(capsys, monkeypatch, *args: str) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["vacant", *args])
    with pytest.raises(SystemExit) as done:
        main()
    out, err = capsys.readouterr()
    return done.value.code, out, err


def local(ws: Path) -> Path:
    return ws / ".claude" / "settings.local.json"


def test_claude_init_puts_up_the_wall_and_the_directories_it_hides(ws, capsys, monkeypatch):
    code, out, _ = vacant(capsys, monkeypatch, "init", "--platform", "claude", "--json")
    assert code == 0 and json.loads(out)["wall"] is True
    settings = json.loads(local(ws).read_text())
    sandbox = settings["sandbox"]
    assert (sandbox["enabled"], sandbox["failIfUnavailable"], sandbox["allowUnsandboxedCommands"]) == (True, True, False)
    hidden = sandbox["filesystem"]["denyRead"]
    for path in (user_config_dir(), state_dir(ws), temp_dirs()[0]):
        assert os.path.realpath(path) in hidden
        assert path.is_dir()  # a sandbox hides only what exists when it wraps a command
    # a settings file missing in the workspace is not a mount (it made its missing directory
    # read-only): the seal watches it
    deny_write = sandbox["filesystem"]["denyWrite"]
    assert not (ws / ".claude" / "settings.json").exists()
    assert os.path.realpath(ws / ".claude" / "settings.json") not in deny_write
    assert not any(path.startswith(os.path.realpath(ws / ".github")) for path in deny_write)
    from vacant.core.locations import read_install

    assert read_install(ws)["seal"]["files"][".claude/settings.json"] is False
    assert f"Read(/{os.path.realpath(state_dir(ws))}/**)" in settings["permissions"]["deny"]
    assert sandbox["network"]["allowedDomains"] == ["*"]  # what the gate lets a READ reach, the wall lets through


def test_the_persons_own_network_policy_is_left_to_decide(ws, capsys, monkeypatch):
    """Claude merges allowedDomains across its settings scopes: vacant's `*` would undo a list the
    person keeps in their user settings, so it adds none there."""
    user = Path.home() / ".claude" / "settings.json"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(json.dumps({"sandbox": {"network": {"allowedDomains": ["github.com"]}}}))
    assert vacant(capsys, monkeypatch, "init", "--platform", "claude")[0] == 0
    assert "network" not in json.loads(local(ws).read_text())["sandbox"]
    user.write_text(json.dumps({"sandbox": {"network": {"allowedDomains": ["*"]}}}))  # theirs says all: no policy to undo
    assert vacant(capsys, monkeypatch, "init", "--platform", "claude")[0] == 0
    assert json.loads(local(ws).read_text())["sandbox"]["network"]["allowedDomains"] == ["*"]


person_settings = st.fixed_dictionaries({}, optional={
    "theirs": st.integers(),
    "sandbox": st.fixed_dictionaries({}, optional={
        "enabled": st.booleans(),
        "excludedCommands": st.lists(st.sampled_from(["docker", "make"]), max_size=2),
        "filesystem": st.fixed_dictionaries({}, optional={"denyRead": st.lists(st.sampled_from(["/x", "/y"]), max_size=2)}),
        "network": st.fixed_dictionaries({}, optional={
            "allowedDomains": st.lists(st.sampled_from(["github.com", "*"]), max_size=2, unique=True)}),
    }),
    "permissions": st.fixed_dictionaries({}, optional={
        "deny": st.lists(st.sampled_from(["Bash(curl:*)", "Read(./.env)"]), max_size=2),
        "defaultMode": st.just("acceptEdits"),
    }),
})


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(original=person_settings, indent=st.sampled_from([None, 2, 4]))
def test_the_wall_merges_into_any_settings_and_uninstall_restores_their_bytes(ws, capsys, monkeypatch, original, indent):
    path = local(ws)
    path.parent.mkdir(exist_ok=True)
    raw = json.dumps(original, indent=indent).encode()
    path.write_bytes(raw)
    assert vacant(capsys, monkeypatch, "init", "--platform", "claude")[0] == 0
    once = path.read_bytes()
    merged = json.loads(once)
    assert merged.get("theirs") == original.get("theirs")
    for entry in original.get("permissions", {}).get("deny", []):
        assert entry in merged["permissions"]["deny"]
    assert merged["sandbox"]["enabled"] is True  # the wall wins over the person's own off switch, said by doctor
    theirs = original.get("sandbox", {}).get("network", {}).get("allowedDomains")
    domains = merged["sandbox"].get("network", {}).get("allowedDomains")
    if theirs is not None and set(theirs) - {"*"}:
        assert domains == theirs  # their list stands: no `*` added over it
    else:
        assert "*" in domains
    assert vacant(capsys, monkeypatch, "init", "--platform", "claude")[0] == 0
    assert path.read_bytes() == once  # idempotent
    assert vacant(capsys, monkeypatch, "uninstall")[0] == 0
    assert path.read_bytes() == raw


@pytest.mark.slow
def test_no_wall_takes_the_wall_down_and_says_the_record_is_unwalled(ws, capsys, monkeypatch):
    vacant(capsys, monkeypatch, "init", "--platform", "claude")
    code, out, _ = vacant(capsys, monkeypatch, "init", "--platform", "claude", "--no-wall")
    assert code == 0 and "unwalled" in out
    settings = json.loads(local(ws).read_text())
    assert "sandbox" not in settings and "permissions" not in settings
    code, out, _ = vacant(capsys, monkeypatch, "doctor", "--json")
    wall = [line for line in json.loads(out)["lines"] if line["name"] == "wall"]
    assert wall and wall[0]["status"] == "warn" and "unwalled" in wall[0]["detail"]


def _path_without(tmp_path: Path, program: str) -> str:
    """A PATH holding every program of this one's but `program`."""
    bin_dir = tmp_path / f"no-{program}"
    bin_dir.mkdir()
    for directory in os.environ["PATH"].split(os.pathsep):
        if not os.path.isdir(directory):
            continue
        for name in os.listdir(directory):
            if name != program and not (bin_dir / name).exists():
                (bin_dir / name).symlink_to(Path(directory) / name)
    return str(bin_dir)


@pytest.mark.slow
def test_doctor_fails_while_bubblewrap_is_missing(ws, tmp_path, capsys, monkeypatch):
    vacant(capsys, monkeypatch, "init", "--platform", "claude")
    code, out, _ = vacant(capsys, monkeypatch, "doctor", "--json")
    packages = {line["name"]: line for line in json.loads(out)["lines"]}["wall packages"]
    assert packages["status"] == "ok", packages  # this machine has them (scripts/setup installs them)
    monkeypatch.setenv("PATH", _path_without(tmp_path, "bwrap"))
    code, out, _ = vacant(capsys, monkeypatch, "doctor", "--json")
    packages = {line["name"]: line for line in json.loads(out)["lines"]}["wall packages"]
    assert code != 0 and packages["status"] == "fail" and "bubblewrap" in packages["detail"]


def test_codex_init_writes_a_permission_profile_and_uninstall_restores_the_config(ws, capsys, monkeypatch):
    config = ws / ".codex" / "config.toml"
    config.parent.mkdir()
    original = b'model = "x"\n\n[tools]\nweb_search = true\n'
    config.write_bytes(original)
    monkeypatch.setenv("CODEX_HOME", str(ws.parent / "codex-home"))
    code, _, err = vacant(capsys, monkeypatch, "init", "--platform", "codex")
    assert code == 0, err
    parsed = tomllib.loads(config.read_text())
    assert parsed["model"] == "x" and parsed["tools"] == {"web_search": True}
    profile = parsed["permissions"][parsed["default_permissions"]]
    assert profile["extends"] == ":workspace"
    assert profile["filesystem"][os.path.realpath(state_dir(ws))] == "none"
    assert profile["filesystem"][os.path.realpath(user_config_dir())] == "none"
    assert profile["filesystem"][os.path.realpath(ws / ".git")] == "write"  # commits are normal work
    once = config.read_bytes()
    assert vacant(capsys, monkeypatch, "init", "--platform", "codex")[0] == 0 and config.read_bytes() == once
    assert vacant(capsys, monkeypatch, "uninstall")[0] == 0
    assert config.read_bytes() == original


def test_codex_init_refuses_a_config_that_would_override_the_wall(ws, capsys, monkeypatch):
    config = ws / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text('sandbox_mode = "danger-full-access"\n')
    monkeypatch.setenv("CODEX_HOME", str(ws.parent / "codex-home"))
    code, out, err = vacant(capsys, monkeypatch, "init", "--platform", "codex")
    assert code != 0 and "sandbox_mode" in out + err
    assert config.read_text() == 'sandbox_mode = "danger-full-access"\n'


def test_init_seals_what_the_wall_holds_and_only_init_accepts_a_change(ws, capsys, monkeypatch):
    """The seal (vacant/core/seal.py) is taken by init and again by uninstall, so the person's own
    changes through vacant never read as broken; a rename of .claude away with a fresh one in its
    place does, until the person runs init again; `vacant do` refuses to start on it."""
    from vacant.core.locations import read_install
    from vacant.core.seal import broken

    assert vacant(capsys, monkeypatch, "init", "--platform", "claude")[0] == 0
    record = read_install(ws)
    assert broken(ws, record["seal"]) is None and ".claude" in record["seal"]["directories"]
    (ws / ".claude").rename(ws / "old")
    (ws / ".claude").mkdir()
    (ws / ".claude" / "settings.local.json").write_text("{}")
    assert ".claude" in broken(ws, read_install(ws)["seal"])
    code, out, err = vacant(capsys, monkeypatch, "do", "--no-wall", "--", "true")
    assert code != 0 and "the wall around this workspace was changed: .claude" in out + err
    assert vacant(capsys, monkeypatch, "init", "--platform", "claude")[0] == 0  # the person accepts it
    assert broken(ws, read_install(ws)["seal"]) is None
    assert vacant(capsys, monkeypatch, "uninstall")[0] == 0
    assert broken(ws, read_install(ws)["seal"]) is None
