"""Merge vacant's hooks into a platform's JSON settings file, and take exactly them out again.

Shared by every platform whose hook config is Claude-shaped JSON (`{"hooks": {Event: [groups]}}`),
and by Copilot's flat shape (`{"hooks": {Event: [handlers]}}`: an entry with no `hooks` list is a
handler itself). Our entries are recognised by the `vacant-hook` in their command (`bash` for Copilot). The first install keeps the
file's original bytes in the user data dir, so that an uninstall which leaves nothing else changed
restores the file byte for byte (or removes it when vacant created it).
"""

from __future__ import annotations

from vacant.core import leanjson as json  # json without `import json` (hot path)
import os
import sys
from collections.abc import Callable
from pathlib import Path

from vacant.core.sha import sha256

from vacant.core.atomic import atomic_write
from vacant.core.locations import user_data_dir

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any  # settings are JSON: each value is checked before use

MARK = "vacant-hook"


class InstallError(RuntimeError):
    pass


def hook_problems(settings: dict[str, object], group_problems: Callable[[str, dict[str, Any]], list[str]],
                  handler_problems: Callable[[str, object], list[str]]) -> list[str]:
    """Walk `{"hooks": {Event: [{matcher, hooks: [handler…]}]}}` and collect what a platform's
    own rules (per matcher group, per handler) say is wrong, each with where it is."""
    hooks = settings.get("hooks", {})
    if not isinstance(hooks, dict):
        return ["`hooks` must be an object of event name -> list of matcher groups"]
    problems: list[str] = []
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            problems.append(f"hooks.{event} must be a list of matcher groups")
            continue
        for g, group in enumerate(groups):
            where = f"hooks.{event}[{g}]"
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                problems.append(f"{where} must be an object with a `hooks` list")
                continue
            problems += group_problems(where, group)
            for h, handler in enumerate(group["hooks"]):
                problems += handler_problems(f"{where}.hooks[{h}]", handler)
    return problems


HTTP_MARK = "X-Vacant-Token"  # an http hook to the workspace's daemon carries this header


def _is_ours(handler: object) -> bool:
    if not isinstance(handler, dict):
        return False
    if handler.get("type") == "http":
        return isinstance(handler.get("headers"), dict) and HTTP_MARK in handler["headers"]
    return MARK in str(handler.get("command", "")) or MARK in str(handler.get("bash", ""))  # the launchers' names


def strip(settings: dict[str, object]) -> dict[str, object]:
    """The settings without any of vacant's hook handlers (empty groups and events dropped)."""
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return dict(settings)
    kept: dict[str, object] = {}
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            kept[event] = groups
            continue
        new_groups = []
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                handlers = [h for h in group["hooks"] if not _is_ours(h)]
                if not handlers and group["hooks"]:
                    continue
                group = {**group, "hooks": handlers}
            elif _is_ours(group):  # a flat handler (Copilot)
                continue
            new_groups.append(group)
        if new_groups or not groups:
            kept[event] = new_groups
    result = dict(settings)
    result["hooks"] = kept
    return result


def count_ours(settings: dict[str, object]) -> int:
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return 0
    return sum(
        1
        for groups in hooks.values() if isinstance(groups, list)
        for group in groups if isinstance(group, dict)
        for handler in (group["hooks"] if isinstance(group.get("hooks"), list) else [group]) if _is_ours(handler)
    )


def _normal(settings: dict[str, object]) -> dict[str, object]:
    result = dict(settings)
    if result.get("hooks") == {}:
        del result["hooks"]
    return result


def _backup_path(path: Path) -> Path:
    digest = sha256(str(path.resolve()).encode()).hexdigest()[:24]
    return user_data_dir() / "installs" / f"{digest}.json"


def _read(path: Path) -> tuple[bytes | None, dict[str, object]]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None, {}
    try:
        settings = json.loads(raw) if raw.strip() else {}
    except ValueError as error:
        raise InstallError(f"{path} is not valid JSON ({error}); fix it by hand first") from None
    if not isinstance(settings, dict):
        raise InstallError(f"{path} must hold a JSON object; fix it by hand first")
    return raw, settings


def _write(path: Path, settings: dict[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(settings, indent=2) + "\n")


def _load_backup(backup: Path) -> dict[str, Any] | None:
    try:
        saved = json.loads(backup.read_text())
    except (OSError, ValueError):
        return None
    return saved if isinstance(saved, dict) else None


def install(path: Path, block: dict[str, list[Any]], validate: Callable[[dict[str, Any]], list[str]],
            overlay: dict[str, object] | None = None, defaults: dict[str, object] | None = None) -> bool:
    """Merge `block` (event -> groups) and the `overlay` (other settings, see `overlay_apply`; what
    an earlier install added is replaced) into the file; False when it was already there.
    `defaults`: top-level keys the file must have (Copilot's `version`), set when absent (and
    taken out again by the uninstall when the install added them)."""
    raw, settings = _read(path)
    backup = _backup_path(path)
    saved = _load_backup(backup)
    merged = overlay_strip(strip(settings), (saved or {}).get("overlay"))
    defaulted = [key for key in (defaults or {}) if key not in merged]
    for key in defaulted:
        merged[key] = (defaults or {})[key]
    problems = validate(merged)
    if not problems:
        hooks = merged.setdefault("hooks", {})
        for event, groups in block.items():
            hooks[event] = list(hooks.get(event, [])) + groups
        problems = validate(merged)
    if problems:
        raise InstallError(f"{path}: refusing to write hooks the agent would silently drop: " + "; ".join(problems))
    added = None
    if overlay:
        try:
            merged, added = overlay_apply(merged, overlay)
        except ValueError as error:
            raise InstallError(f"{path}: {error}") from None
    if merged == settings and (saved or {}).get("overlay") == added:
        return False
    if saved is None:
        original = None if raw is None else raw.decode("utf-8", "surrogateescape")
        saved = {"path": str(path), "existed": raw is not None, "original": original, "added": defaulted}
    saved["overlay"] = added
    backup.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(backup, json.dumps(saved))
    _write(path, merged)
    return True


def uninstall(path: Path) -> bool:
    """Remove exactly vacant's handlers; restore the original bytes when nothing else changed."""
    raw, settings = _read(path)
    backup = _backup_path(path)
    saved = _load_backup(backup)
    added = (saved or {}).get("overlay")
    if raw is None or not (count_ours(settings) or added):
        return False
    stripped = overlay_strip(strip(settings), added)
    original = (saved or {}).get("original")
    original_settings = json.loads(original) if original and original.strip() else {}
    for key in (saved or {}).get("added", []):
        stripped.pop(key, None)
    if saved is not None and _normal(stripped) == _normal(original_settings):
        if saved["existed"]:
            if not isinstance(original, str):
                raise InstallError(f"{backup} does not hold {path}'s original text: restore it by hand")
            path.write_bytes(original.encode("utf-8", "surrogateescape"))
        else:
            path.unlink()
    else:  # the person changed something else since: keep it, take only our entries out
        _write(path, stripped if "hooks" in original_settings else _normal(stripped))
    if backup.exists():
        backup.unlink()
    return True


# -- other settings: the wall's sandbox block ---------------------------------------------------


def _walk_overlay(settings: dict[str, Any], dotted: str, create: bool,
                  created: list[str]) -> tuple[dict[str, Any] | None, str]:
    """The dict holding the last part of `dotted` (None when absent and not created)."""
    parts = dotted.split(".")
    node = settings
    for depth, part in enumerate(parts[:-1]):
        child = node.get(part)
        if not isinstance(child, dict):
            if not create or child is not None:
                return None, parts[-1]
            child = node[part] = {}
            created.append(".".join(parts[: depth + 1]))
        node = child
    return node, parts[-1]


def overlay_apply(settings: dict[str, Any], overlay: dict[str, object]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The settings with the overlay added, and the record of what was added."""
    import copy  # install time only: never on a hook call

    out = copy.deepcopy(settings)
    added: dict[str, Any] = {"lists": {}, "scalars": {}, "created": []}
    for dotted, value in overlay.items():
        node, last = _walk_overlay(out, dotted, True, added["created"])
        if node is None:
            raise ValueError(f"{dotted}: a part of it is not an object in the settings; fix it by hand first")
        if isinstance(value, list):
            current = node.get(last)
            if current is None:
                current = node[last] = []
                added["created"].append(dotted)
            if not isinstance(current, list):
                raise ValueError(f"{dotted} must be a list in the settings; fix it by hand first")
            new = [entry for entry in value if entry not in current]
            current.extend(new)
            added["lists"][dotted] = new
        else:
            had = last in node
            added["scalars"][dotted] = {"had": had, "was": node.get(last), "set": value}
            node[last] = value
    return out, added


def overlay_strip(settings: dict[str, Any], added: dict[str, Any] | None) -> dict[str, Any]:
    """The settings without what `added` says vacant put there (entries the person changed since
    are left as they are)."""
    if not added:
        return settings
    import copy

    out = copy.deepcopy(settings)
    for dotted, entries in (added.get("lists") or {}).items():
        node, last = _walk_overlay(out, dotted, False, [])
        if node is not None and isinstance(node.get(last), list):
            node[last] = [entry for entry in node[last] if entry not in entries]
    for dotted, change in (added.get("scalars") or {}).items():
        node, last = _walk_overlay(out, dotted, False, [])
        if node is None or node.get(last) != change.get("set"):
            continue  # changed by the person since: theirs now
        if change.get("had"):
            node[last] = change.get("was")
        else:
            node.pop(last, None)
    for dotted in sorted(added.get("created") or [], key=lambda d: -d.count(".")):
        node, last = _walk_overlay(out, dotted, False, [])
        if node is not None and node.get(last) in ({}, []):
            del node[last]
    return out


PORTABLE_SCOPES = ("project",)  # files meant to be committed: no path that exists only on this machine


def hook_command(platform: str, scope: str = "local") -> str:
    """The installed command. In a file meant to be committed (`--scope project`) it is the
    portable `vacant-hook PLATFORM`, found on each person's PATH. Elsewhere it is the environment's
    real interpreter by absolute path (a pyenv shim would cost ~150 ms per call), started with
    -I -S on the `vacant-hook-client.py` launcher (no site processing at each of the agent's tool
    calls): the lean client, which forwards the call to the workspace's daemon and answers
    in-process, as `vacant-hook` does, when there is none. `vacant doctor` says when that path no
    longer exists (a moved or rebuilt venv)."""
    if scope in PORTABLE_SCOPES:
        return f"{MARK} {platform}"
    import shlex  # install and doctor time: never on a hook call

    launcher = Path(__file__).resolve().parents[1] / "vacant-hook-client.py"
    return f"{shlex.quote(sys.executable)} -I -S {shlex.quote(str(launcher))} {platform}"


def command_problem(command: str) -> str | None:
    """Why an installed hook command cannot start on this machine, or None when it can."""
    import shlex

    try:
        argv = shlex.split(command)
    except ValueError as error:
        return f"it cannot be read ({error})"
    if not argv:
        return "it is empty"
    program = argv[0]
    import shutil  # doctor only: shutil stays off the hook's hot path

    if os.sep in program:
        if not os.access(program, os.X_OK):
            return f"{program} does not exist or is not executable (a moved or rebuilt environment?)"
    elif shutil.which(program) is None:
        return f"{program} is not on PATH (install vacant with pipx or uv tool, or use --scope local)"
    for arg in argv[1:]:
        if arg.endswith(".py") and os.path.isabs(arg) and not os.path.exists(arg):
            return f"{arg} does not exist (vacant was moved or reinstalled)"
    return None


def our_commands(settings: dict[str, object]) -> set[str]:
    """The command of every vacant handler in Claude-shaped hook settings."""
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return set()
    return {str(handler.get("command")) for groups in hooks.values() if isinstance(groups, list)
            for group in groups if isinstance(group, dict) and isinstance(group.get("hooks"), list)
            for handler in group["hooks"] if _is_ours(handler) and handler.get("type", "command") == "command"}
