"""Hook trust in `$CODEX_HOME/config.toml`: the hash Codex computes for each handler, the project trust level, and vacant's own trust entries written (through the app-server when a `codex` binary is at hand, else offline) and removed exactly. Never on the hook's hot path."""

from __future__ import annotations

import sys
import json
import os
import re
from pathlib import Path

from vacant.core.atomic import atomic_write
from vacant.platforms import settings_file
from vacant.platforms.codex.appserver import AppServer, AppServerError, codex_binary
from vacant.platforms.codex.payloads import DEFAULT_CODEX_TIMEOUT, SNAKE, TIMEOUTS

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any  # TOML and JSON: each value is checked before use


def codex_home() -> Path:
    override = os.environ.get("CODEX_HOME")
    return Path(override) if override else Path.home() / ".codex"



# -- hook trust ----------------------------------------------------------------------------------
# None of this runs in the hook's hot path: its heavier imports happen inside the functions.



def _toml_key(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a TOML basic string


def hook_hash(event: str, matcher: str | None, handler: dict[str, Any]) -> str:
    """Codex's trust hash of one handler, computed offline (0.171: matched `hooks/list`)."""
    import hashlib

    timeout = handler.get("timeout") or DEFAULT_CODEX_TIMEOUT
    if event == "SessionEnd":
        timeout = min(timeout, TIMEOUTS["SessionEnd"])
    entry: dict[str, Any] = {"type": "command", "command": handler.get("command"), "timeout": timeout,
                             "async": bool(handler.get("async", False))}
    if handler.get("statusMessage") is not None:
        entry["statusMessage"] = handler["statusMessage"]
    identity: dict[str, Any] = {"event_name": SNAKE[event], "hooks": [entry]}
    if matcher:  # Codex treats an empty matcher as none
        identity["matcher"] = matcher
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def our_hooks(hooks_file: Path) -> dict[str, str]:
    """Trust key -> hash of every vacant handler in a hooks.json (offline computation)."""
    try:
        settings = json.loads(hooks_file.read_text())
    except (OSError, ValueError):
        return {}
    found: dict[str, str] = {}
    hooks = settings.get("hooks") if isinstance(settings, dict) else None
    for event, groups in (hooks or {}).items():
        if event not in SNAKE or not isinstance(groups, list):
            continue
        for g, group in enumerate(groups):
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                continue
            for h, handler in enumerate(group["hooks"]):
                if isinstance(handler, dict) and handler.get("type") == "command" and settings_file.MARK in str(handler.get("command", "")):
                    found[f"{hooks_file}:{SNAKE[event]}:{g}:{h}"] = hook_hash(event, group.get("matcher"), handler)
    return found


def config_path() -> Path:
    return codex_home() / "config.toml"


def _parse_toml(text: str, path: Path) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # Python 3.10
        import tomli as tomllib

    try:
        parsed: dict[str, Any] = tomllib.loads(text)
        return parsed
    except tomllib.TOMLDecodeError as error:
        raise settings_file.InstallError(f"{path} is not valid TOML ({error}); fix it by hand first") from None


def _read_config(path: Path) -> tuple[str | None, dict[str, Any]]:
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None, {}
    return text, _parse_toml(text, path)


def _table(config: dict[str, Any], *keys: str) -> dict[str, Any]:
    node: Any = config
    for key in keys:
        node = node.get(key) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else {}


def project_trust(config: dict[str, Any], project: Path) -> str | None:
    level = _table(config, "projects", str(project)).get("trust_level")
    return level if isinstance(level, str) else None


def trusted_hash(config: dict[str, Any], key: str) -> str | None:
    value = _table(config, "hooks", "state", key).get("trusted_hash")
    return value if isinstance(value, str) else None


def _record_path(hooks_file: Path) -> Path:
    import hashlib

    from vacant.core.locations import user_data_dir

    digest = hashlib.sha256(str(hooks_file).encode()).hexdigest()[:24]
    return user_data_dir() / "installs" / f"codex-trust-{digest}.json"


def _load_record(hooks_file: Path) -> dict[str, Any] | None:
    try:
        record: dict[str, Any] | None = json.loads(_record_path(hooks_file).read_text())
        return record
    except (OSError, ValueError):
        return None


def _write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text)


def check_installable(project: Path | None) -> None:
    """Refuse (before writing anything) where Codex would ignore the hooks whatever we wrote."""
    path = config_path()
    _, config = _read_config(path)
    if project is not None and project_trust(config, project) == "untrusted":
        raise settings_file.InstallError(
            f"{path} marks {project} as untrusted, so Codex ignores its .codex/ hooks; "
            "change that trust_level yourself first, or use --scope user"
        )


def trust(hooks_file: Path, project: Path | None, root: Path, created_dir: bool = False) -> dict[str, Any]:
    """Trust vacant's hooks in `hooks_file` (and the project, for project hooks) in config.toml.

    Through Codex's own app-server when a `codex` binary is at hand (its hashes, its TOML writer),
    else offline. Records what was added so that `untrust` removes exactly that."""
    path = config_path()
    text, config = _read_config(path)
    record = _load_record(hooks_file) or {
        "hooks_file": str(hooks_file), "config": str(path), "existed": text is not None, "original": text,
        "project": None, "keys": {}, "created_dir": created_dir,
    }
    need_project = project is not None and project_trust(config, project) != "trusted"
    wanted = our_hooks(hooks_file)
    stale = [key for key in record["keys"] if key not in wanted and trusted_hash(config, key) is not None]
    binary = codex_binary()
    method = "offline"
    if binary:
        try:
            wanted = _trust_via_app_server(binary, root, hooks_file, project if need_project else None, stale)
            method = "codex app-server"
        except AppServerError:
            binary = None
    if not binary:
        _trust_offline(path, text, config, project if need_project else None, wanted, stale)
    if need_project:
        record["project"] = str(project)
    record["keys"] = wanted
    record["method"] = method
    record_path = _record_path(hooks_file)
    record_path.parent.mkdir(parents=True, exist_ok=True)
    record_path.write_text(json.dumps(record))
    return record


def _trust_via_app_server(binary: str, root: Path, hooks_file: Path, project: Path | None,
                          stale: list[str]) -> dict[str, str]:
    with AppServer(binary, root) as server:
        if project is not None:
            server.write([(f"projects.{_toml_key(str(project))}.trust_level", "trusted")])
        real = os.path.realpath(hooks_file)
        ours = [h for h in server.hooks(root)
                if os.path.realpath(str(h.get("sourcePath"))) == real and settings_file.MARK in str(h.get("command", ""))]
        if not ours and our_hooks(hooks_file):
            raise AppServerError("codex app-server does not list vacant's hooks")
        server.write(
            [(f"hooks.state.{_toml_key(h['key'])}.trusted_hash", h["currentHash"]) for h in ours
             if h.get("trustStatus") != "trusted"]
            + [(f"hooks.state.{_toml_key(key)}", None) for key in stale]
        )
        after = [h for h in server.hooks(root) if h.get("key") in {o["key"] for o in ours}]
        if any(h.get("trustStatus") != "trusted" for h in after):
            raise AppServerError("codex still lists vacant's hooks as untrusted")
        return {h["key"]: h["currentHash"] for h in ours}


def _remove_sections(text: str, headers: dict[str, str]) -> str:
    """Drop each `[header]` table whose body is only its one `KEY = ...` line (header -> KEY),
    with the blank lines that led to it; anything else in the file stays as it is."""
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    i = 0
    while i < len(lines):
        key = headers.get(lines[i].strip())
        if key is not None:
            j = i + 1
            while j < len(lines) and not lines[j].lstrip().startswith("["):
                j += 1
            last = j
            while last > i + 1 and not lines[last - 1].strip():
                last -= 1
            body = [line.strip() for line in lines[i + 1:last]]
            if all(re.match(rf"{re.escape(key)}\s*=", line) for line in body):
                while out and not out[-1].strip():
                    out.pop()
                i = last  # the blank lines after it stay (they separate what follows)
                continue
        out.append(lines[i])
        i += 1
    return "".join(out)


def _trust_offline(path: Path, text: str | None, config: dict[str, Any], project: Path | None,
                   wanted: dict[str, str], stale: list[str]) -> None:
    current = text or ""
    replace = {f"[hooks.state.{_toml_key(key)}]": "trusted_hash" for key in wanted
               if trusted_hash(config, key) not in (None, wanted[key])}
    replace.update({f"[hooks.state.{_toml_key(key)}]": "trusted_hash" for key in stale})
    if replace:
        current = _remove_sections(current, replace)
    blocks = []
    if project is not None:
        blocks.append(f"[projects.{_toml_key(str(project))}]\ntrust_level = \"trusted\"\n")
    for key, value in wanted.items():
        if trusted_hash(config, key) != value:
            blocks.append(f"[hooks.state.{_toml_key(key)}]\ntrusted_hash = {_toml_key(value)}\n")
    if not blocks and not replace:
        return
    if current and not current.endswith("\n"):
        current += "\n"
    new = current + "".join(("\n" if current or n else "") + block for n, block in enumerate(blocks))
    check = _parse_toml(new, path)
    if (project is not None and project_trust(check, project) != "trusted") or any(
        trusted_hash(check, key) != value for key, value in wanted.items()
    ):
        raise settings_file.InstallError(f"{path}: could not record trust for vacant's hooks; put `codex` on PATH and retry")
    _write_text(path, new)


def _pruned(value: Any) -> Any:
    if isinstance(value, dict):
        kept = {k: _pruned(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v != {}}
    return value


def _without(config: dict[str, Any], keys: list[str], project: str | None) -> dict[str, Any]:
    import copy

    result = copy.deepcopy(config)
    state = _table(result, "hooks", "state")
    for key in keys:
        state.pop(key, None)
    if project is not None:
        _table(result, "projects").pop(project, None)
    pruned: dict[str, Any] = _pruned(result)
    return pruned


def untrust(hooks_file: Path) -> bool:
    """Remove exactly the trust entries `trust` added; restore config.toml byte for byte when
    nothing else changed since."""
    record = _load_record(hooks_file)
    if record is None:
        return False
    record_path = _record_path(hooks_file)
    path = Path(record["config"])
    text, config = _read_config(path)
    keys = [key for key in record["keys"] if trusted_hash(config, key) is not None]
    project = record.get("project")
    if project is not None and project_trust(config, Path(project)) != "trusted":
        project = None  # gone, or the person has since decided otherwise: theirs now
    if text is None or (not keys and project is None):
        record_path.unlink()
        return False
    original = record.get("original")
    original_config = _parse_toml(original, path) if original else {}
    if _without(config, keys, project) == _pruned(original_config):
        if record.get("existed"):
            if not isinstance(original, str):
                raise settings_file.InstallError(f"the saved original of {path} is unreadable: restore it by hand")
            _write_text(path, original)
        else:
            path.unlink()
    else:
        _untrust_edit(path, text, keys, project)
    record_path.unlink()
    return True


def _untrust_edit(path: Path, text: str, keys: list[str], project: str | None) -> None:
    binary = codex_binary()
    if binary:
        try:
            with AppServer(binary, path.parent) as server:
                server.write([(f"hooks.state.{_toml_key(key)}", None) for key in keys]
                             + ([(f"projects.{_toml_key(project)}", None)] if project else []))
            return
        except AppServerError:
            pass
    headers: dict[str, str] = {f"[hooks.state.{_toml_key(key)}]": "trusted_hash" for key in keys}
    if project is not None:
        headers[f"[projects.{_toml_key(project)}]"] = "trust_level"
    _write_text(path, _remove_sections(text, headers))
