"""`vacant doctor --platform codex`: are vacant's hooks installed, valid, trusted and would they fire?"""

from __future__ import annotations

import json
from pathlib import Path

from vacant.platforms import settings_file
from vacant.platforms.base import Diagnosis, diagnosis
from vacant.platforms.codex.appserver import AppServer, AppServerError, codex_binary
from vacant.platforms.codex.schema import hooks_path, validate_hooks
from vacant.platforms.codex.trust import (
    _read_config,
    _table,
    config_path,
    our_hooks,
    project_trust,
    trusted_hash,
)


def doctor(root: Path, hook_command: str) -> list[Diagnosis]:
    report: list[Diagnosis] = []
    installed: list[tuple[str, Path]] = []
    for scope in ("project", "user"):
        path = hooks_path(root, scope)
        if not path.exists():
            continue
        try:
            settings = json.loads(path.read_text())
        except ValueError as error:
            report.append(diagnosis(str(path), False, f"not valid JSON ({error}): Codex loads no hook from it"))
            continue
        problems = validate_hooks(settings) if isinstance(settings, dict) else ["must hold a JSON object"]
        report.append(diagnosis(str(path), not problems, "; ".join(problems) or "valid hook schema"))
        if problems or not settings_file.count_ours(settings):
            continue
        installed.append((scope, path))
        commands = settings_file.our_commands(settings)
        expected = {settings_file.hook_command("codex", form) for form in ("local", "project")}
        unstartable = [settings_file.command_problem(command) for command in sorted(commands)]
        if any(unstartable):
            report.append(diagnosis("hook command", False, f"{path}: {next(p for p in unstartable if p)}; run "
                                    f"`vacant init --platform codex --scope {scope}` again"))
        elif not commands <= expected:
            report.append(diagnosis("hook command", False,
                           f"{path} runs {sorted(map(str, commands))}, this vacant is {sorted(expected)}: "
                           f"run `vacant init --platform codex --scope {scope}` again"))
        else:
            report.append(diagnosis("hook command", True, ", ".join(sorted(commands))))
    report.append(diagnosis("hooks installed", bool(installed),
                   "vacant's hooks are installed" if installed else "run `vacant init --platform codex`"))
    if not installed:
        return report
    try:
        _, config = _read_config(config_path())
    except settings_file.InstallError as error:
        report.append(diagnosis(str(config_path()), False, str(error)))
        return report
    if _table(config, "features").get("hooks") is False:
        report.append(diagnosis("features.hooks", False, f"{config_path()} sets [features] hooks = false: no hook runs"))
    if any(scope == "project" for scope, _ in installed):
        level = project_trust(config, root)
        report.append(diagnosis("project trust", level == "trusted",
                       f"{root} is trusted in {config_path()}" if level == "trusted" else
                       f"trust_level is {level or 'unset'} for {root}: Codex ignores its .codex/hooks.json "
                       "(run `vacant init --platform codex` again, or `codex exec --trust`)"))
    report.append(_hook_trust_line(root, installed, config))
    return report


def _hook_trust_line(root: Path, installed: list[tuple[str, Path]], config: dict[str, object]) -> Diagnosis:
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
            return diagnosis("hooks would fire", ok, detail)
        except AppServerError as error:
            fallback = f" ({error}; checked offline)"
    else:
        fallback = " (no `codex` on PATH: hashes computed offline)"
    trusted = sum(1 for key, value in expected.items() if trusted_hash(config, key) == value)
    ok = trusted == len(expected)
    detail = f"{trusted} of {len(expected)} vacant hooks trusted in {config_path()}{fallback}"
    if not ok:
        detail += ": untrusted hooks are skipped silently; run `vacant init --platform codex` again"
    return diagnosis("hooks would fire", ok, detail)
