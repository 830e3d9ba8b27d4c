"""The wall for Codex: a permission profile in the project's `.codex/config.toml` (trusted by
`vacant init`, which trusts the project) that extends `:workspace` and denies what the wall hides.

Measured on the pinned 0.171.0 as root (fixtures/payloads/sandbox-notes.md): a path set to
`"none"` is unreadable and unwritable for every command (`Permission denied`); `:workspace` alone
reads the whole disk (the key included) and makes `.git` read-only (so `git commit` fails), hence
`.git` is granted back here with its hooks and config kept read-only; a project config layer is
read only for a trusted project; `--sandbox …` on the command line or a `sandbox_mode` in any
config layer switches back to the older sandbox settings and the profile is ignored (doctor says
so); a path in the profile that does not exist makes its bubblewrap fail to start any command
(`Can't bind mount … No such file or directory`), so only existing paths are written. AF_UNIX
sockets stay allowed inside, so the daemon's socket directories are hidden by path.

What the person allowed (measured on 0.171.0 behind this profile, issue 41): without a network
table a READ the gate lets through fails (`curl` to a host by name: exit 6); with `network.enabled
= true` it reaches its host, and the loopback too (unlike Claude's sandbox: a local service such as
vacant's daemon port is reachable, which answers nothing without the secret in the hidden state
directory). So the profile turns the network on, unless the person's own config already says
(`network_policy_of_the_person`). Inside the sandbox a `git push` to a remote on disk outside the
workspace fails (`remote unpack failed: unable to create temporary object directory`), and Codex
cannot run it outside: in `codex exec` (approval policy never) an `exec_command` asking
`sandbox_permissions = "require_escalated"` is rejected ("you cannot ask for escalated permissions
if the approval policy is Never"). So what runs where: the agent's commands inside this profile;
vacant's hooks outside it, as the person; and an approved line naming `git push` (the lines the
gate holds as leaving the wall, vacant/core/wall.py) in the hook, once, outside the profile, when
it is a plain push (vacant/record/unwalled.py says which, and why that does not let the agent act as
the person). What this wall adds to that is `hook_may_run_approved`: `.git/hooks` and `.git/config`
read-only in the profile in force and no `.git/commondir`, so the person's git reads no config and
runs no hook the agent wrote (measured on 0.171.0: the push reached a remote on disk, once, and
the call's output told the model it ran: tests/e2e/test_codex_wall.py).

The profile is two marked blocks (the selecting key at the top, the tables at the end), taken out
exactly by uninstall; the file's original bytes are kept with vacant's install records so that an
uninstall with nothing else changed restores it byte for byte. Install-time only.
"""

from __future__ import annotations

import sys
import json
import os
from pathlib import Path

from vacant.core.sha import sha256

from vacant.core.atomic import atomic_write
from vacant.core.locations import user_data_dir
from vacant.platforms.settings_file import InstallError

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from vacant.core.wall import Wall

PROFILE = "vacant_wall"  # one bare TOML key: `-c permissions.vacant_wall.…` splits keys on dots
BEGIN = "# >>> vacant wall: written by `vacant init`, removed by `vacant uninstall` >>>\n"
END = "# <<< vacant wall <<<\n"
OVERRIDES = ("default_permissions", "sandbox_mode")


def config_file(root: Path) -> Path:
    return Path(root).resolve() / ".codex" / "config.toml"


def _record(path: Path) -> Path:
    digest = sha256(str(path).encode()).hexdigest()[:24]
    return user_data_dir() / "installs" / f"codex-wall-{digest}.json"


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a TOML basic string


def profile_entries(root: Path, wall: Wall, config_written: bool = True) -> dict[str, str]:
    """Path -> access for the profile's filesystem table. `config_written`: the profile goes into
    the project's config.toml (`vacant init`), not onto the command line (`vacant do`)."""
    git = Path(root).resolve() / ".git"
    entries: dict[str, str] = {}
    if git.is_dir():  # `:workspace` makes .git read-only: commits are normal work; hooks and config stay read-only
        entries[str(git)] = "write"
        entries[str(git / "hooks")] = "read"
        entries[str(git / "config")] = "read"
    for path in wall.readonly:
        entries[path] = "read"
    for path in wall.hidden:
        entries[path] = "none"
    entries[os.path.realpath(config_file(root))] = "read"  # this very file: it exists once written
    # a path that does not exist makes Codex's bubblewrap fail to start every command (measured)
    return {path: access for path, access in entries.items()
            if os.path.lexists(path) or (config_written and path == os.path.realpath(config_file(root)))}


def sandbox_settings(root: Path, wall: Wall) -> tuple[str, str]:
    """(the block at the top of config.toml, the block at its end)."""
    top = f'{BEGIN}default_permissions = "{PROFILE}"\n{END}'
    lines = [BEGIN, f'[permissions.{_quote(PROFILE)}]\n', 'extends = ":workspace"\n',
             f'[permissions.{_quote(PROFILE)}.filesystem]\n']
    lines += [f"{_quote(path)} = {_quote(access)}\n" for path, access in profile_entries(root, wall).items()]
    if network_policy_of_the_person(root) is None:  # what the gate lets a READ reach, the wall lets through
        lines += [f'[permissions.{_quote(PROFILE)}.network]\n', 'enabled = true\n']
    return top, "".join(lines) + END


def network_policy_of_the_person(root: Path) -> str | None:
    """Where the person's own Codex config (user or project, vacant's blocks left out) already
    says whether commands may reach the network (`sandbox_workspace_write.network_access`, or a
    `network` table of a permission profile), or None: then theirs decides and vacant adds nothing."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib

    from vacant.platforms.codex.trust import config_path

    for path in (config_path(), config_file(root)):
        try:
            config = tomllib.loads(strip(path.read_text()))
        except (OSError, ValueError):
            continue
        workspace_write = config.get("sandbox_workspace_write")
        if isinstance(workspace_write, dict) and "network_access" in workspace_write:
            return f"{path}: sandbox_workspace_write.network_access"
        profiles = config.get("permissions")
        for name, profile in (profiles.items() if isinstance(profiles, dict) else ()):
            if isinstance(profile, dict) and "network" in profile:
                return f"{path}: permissions.{name}.network"
    return None


def strip(text: str) -> str:
    """The text without vacant's marked blocks."""
    out, skipping = [], False
    for line in text.splitlines(keepends=True):
        if line == BEGIN:
            skipping = True
        elif skipping and line == END:
            skipping = False
        elif not skipping:
            out.append(line)
    return "".join(out)


def _check(text: str, path: Path) -> None:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # Python 3.10
        import tomli as tomllib

    try:
        config = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise InstallError(f"{path} is not valid TOML ({error}); fix it by hand first") from None
    taken = [key for key in OVERRIDES if key in config]
    if taken:
        raise InstallError(f"{path} sets {', '.join(taken)}: Codex would use that instead of vacant's wall; "
                           "remove it, or run `vacant init --no-wall` (the record is then unwalled)")


def install(root: Path, wall: Wall) -> Path:
    """Write the profile (replacing an earlier one); returns the file."""
    path = config_file(root)
    try:
        current = path.read_text()
    except FileNotFoundError:
        current = None
    base = strip(current or "")
    _check(base, path)
    top, tail = sandbox_settings(root, wall)
    joined = base if not base or base.endswith("\n") else base + "\n"
    text = top + joined + tail
    _check(text.replace(top, ""), path)  # our tables parse
    record = _record(path)
    if not record.exists():
        record.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(record, json.dumps({"path": str(path), "existed": current is not None, "original": current,
                                         "created_dir": not path.parent.exists()}))
    if text != current:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, text)
    return path


def uninstall(root: Path) -> Path | None:
    """Take the profile out; the original bytes back when nothing else changed."""
    path = config_file(root)
    record = _record(path)
    try:
        current = path.read_text()
    except FileNotFoundError:
        current = None
    saved = None
    try:
        saved = json.loads(record.read_text())
    except (OSError, ValueError):
        pass
    if current is None or BEGIN not in current:
        record.unlink(missing_ok=True)
        return None
    stripped = strip(current)
    original = (saved or {}).get("original")
    if saved is not None and stripped.strip() == (original or "").strip():
        if saved.get("existed"):
            if not isinstance(original, str):
                raise InstallError(f"the saved original of {path} is unreadable: restore it by hand")
            atomic_write(path, original)
        else:
            path.unlink()
            if saved.get("created_dir"):
                try:
                    path.parent.rmdir()
                except OSError:
                    pass
    else:
        atomic_write(path, stripped)
    record.unlink(missing_ok=True)
    return path


def overridden(root: Path, user_config: Path) -> list[str]:
    """Where a setting that makes Codex ignore the profile is set (doctor)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # Python 3.10
        import tomli as tomllib

    found = []
    for path in (user_config, config_file(root)):
        try:
            config = tomllib.loads(strip(path.read_text()))
        except (OSError, ValueError):
            continue
        found += [f"{path}: {key}" for key in OVERRIDES if key in config]
    return found


def present(root: Path) -> bool:
    try:
        return BEGIN in config_file(root).read_text()
    except OSError:
        return False




def hook_may_run_approved(root: Path) -> str | None:
    """None when the hook may run an approved push outside this wall (vacant/record/unwalled.py):
    the workspace's git directory is a real `.git` directory that takes its config and hooks from
    itself (no `commondir`, which would move both where the agent writes), and this wall keeps
    both read-only for every command (the profile in force names them `read`). Else why not: git
    run as the person would then run what the agent could have written."""
    root = Path(root).resolve()
    git = root / ".git"
    if os.path.islink(git) or not git.is_dir():
        return f"{git} is not the workspace's own git directory (a link, a file or missing)"
    if os.path.lexists(git / "commondir"):
        return f"{git / 'commondir'} exists: git would take its config and hooks from elsewhere"
    try:
        text = config_file(root).read_text()
    except OSError as error:
        return f"vacant's wall cannot be read in {config_file(root)} ({type(error).__name__})"
    ours = text[text.rfind(BEGIN):] if BEGIN in text else ""
    for path in (git / "hooks", git / "config"):
        if f'{_quote(str(path))} = "read"\n' not in ours:
            return f"vacant's wall does not keep {path} read-only for Codex's commands (it did not exist at `vacant init`?)"
        if os.path.islink(path):
            return f"{path} is a link"
    return None
