"""`vacant doctor --platform codex`: are vacant's hooks installed, valid, trusted and would they fire?"""

from __future__ import annotations

import json
from pathlib import Path

from vacant.platforms import settings_file
from vacant.platforms.codex.appserver import AppServer, AppServerError, codex_binary
from vacant.platforms.codex.schema import validate_hooks
from vacant.platforms.codex.trust import (
    _read_config,
    _table,
    config_path,
    our_hooks,
    project_trust,
    trusted_hash,
)


def doctor(platform, root: Path, hook_command: str) -> list[tuple[str, bool, str]]:
    report: list[tuple[str, bool, str]] = []
    installed: list[tuple[str, Path]] = []
    for scope in ("project", "user"):
        path = platform.hooks_path(root, scope)
        if not path.exists():
            continue
        try:
            settings = json.loads(path.read_text())
        except ValueError as error:
            report.append((str(path), False, f"not valid JSON ({error}): Codex loads no hook from it"))
            continue
        problems = validate_hooks(settings) if isinstance(settings, dict) else ["must hold a JSON object"]
        report.append((str(path), not problems, "; ".join(problems) or "valid hook schema"))
        if problems or not settings_file.count_ours(settings):
            continue
        installed.append((scope, path))
        commands = {
            handler.get("command")
            for groups in settings["hooks"].values() if isinstance(groups, list)
            for group in groups if isinstance(group, dict)
            for handler in group.get("hooks", []) if isinstance(handler, dict) and settings_file.MARK in str(handler.get("command", ""))
        }
        if commands != {hook_command}:
            report.append(("hook command", False,
                           f"{path} runs {sorted(map(str, commands))}, this vacant is {hook_command!r}: "
                           f"run `vacant init --platform codex --scope {scope}` again"))
        else:
            report.append(("hook command", True, hook_command))
    report.append(("hooks installed", bool(installed),
                   "vacant's hooks are installed" if installed else "run `vacant init --platform codex`"))
    if not installed:
        return report
    try:
        _, config = _read_config(config_path())
    except settings_file.InstallError as error:
        report.append((str(config_path()), False, str(error)))
        return report
    if _table(config, "features").get("hooks") is False:
        report.append(("features.hooks", False, f"{config_path()} sets [features] hooks = false: no hook runs"))
    if any(scope == "project" for scope, _ in installed):
        level = project_trust(config, root)
        report.append(("project trust", level == "trusted",
                       f"{root} is trusted in {config_path()}" if level == "trusted" else
                       f"trust_level is {level or 'unset'} for {root}: Codex ignores its .codex/hooks.json "
                       "(run `vacant init --platform codex` again, or `codex exec --trust`)"))
    report.append(_hook_trust_line(root, installed, config))
    return report


def _hook_trust_line(root: Path, installed: list[tuple[str, Path]], config: dict[str, object]) -> tuple[str, bool, str]:
    expected = {key: value for _, path in installed for key, value in our_hooks(path).items()}
    binary = codex_binary()
    if binary:
        try:
            with AppServer(binary, root) as server:
                listed = {h["key"]: h for h in server.hooks(root) if h.get("key") in expected}
            trusted = sum(1 for h in listed.values() if h.get("trustStatus") == "trusted")
            ok = trusted == len(expected)
            detail = f"{trusted} of {len(expected)} vacant hooks trusted and enabled (codex app-server hooks/list)"
            if not ok:
                detail += ": untrusted hooks are skipped silently; run `vacant init --platform codex` again"
            return ("hooks would fire", ok, detail)
        except AppServerError as error:
            fallback = f" ({error}; checked offline)"
    else:
        fallback = " (no `codex` on PATH: hashes computed offline)"
    trusted = sum(1 for key, value in expected.items() if trusted_hash(config, key) == value)
    ok = trusted == len(expected)
    detail = f"{trusted} of {len(expected)} vacant hooks trusted in {config_path()}{fallback}"
    if not ok:
        detail += ": untrusted hooks are skipped silently; run `vacant init --platform codex` again"
    return ("hooks would fire", ok, detail)
