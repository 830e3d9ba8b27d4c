"""Codex as a platform: parse a hook payload into a HookCall, render a Response, install and uninstall `hooks.json` (trusted through trust.py), check a hooks file against Codex's schema."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from vacant.core.calls import HookCall, Read, Response
from vacant.core.locations import find_root
from vacant.platforms import settings_file
from vacant.platforms.base import Diagnosis, PlatformBase, read_file_bytes, render_hook_json
from vacant.platforms.codex import wall as codex_wall
from vacant.platforms.codex.driver import CodexDriver
from vacant.platforms.codex.payloads import (
    _EXIT_CODE,
    EVENT_KINDS,
    PATCH_TOOL,
    SHELL_TOOL,
    SHELL_TOOLS,
    command_reads,
    finished_unreported,
    rollout_call_ids,
    tool_scope,
    transcript_item,
)
from vacant.platforms.codex.schema import hooks_block, hooks_path, validate_hooks
from vacant.platforms.codex.trust import (
    _load_record,
    check_installable,
    config_path,
    trust,
    untrust,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hook path
if TYPE_CHECKING:
    from vacant.core.wall import Wall
    from typing import Any  # JSON: each field is read with a check of its type


class Codex(PlatformBase):
    name = "codex"
    cell_platform = "codex"
    program = "codex"
    provider = "openai"
    events = EVENT_KINDS
    hook_env = ("CODEX",)
    settings_in_workspace = (".codex/hooks.json", ".codex/config.toml")
    settings_in_home = (".codex/hooks.json", ".codex/config.toml")

    # its wall breaks an approved push to a remote on disk and `codex exec` cannot run it outside
    # (codex/wall.py): the hook runs it, once, outside (vacant/record/unwalled.py)
    hook_runs_approved = staticmethod(codex_wall.hook_may_run_approved)

    def headless(self, binary: str, prompt: str, model: str | None, extra: list[str]) -> list[str]:
        return [binary, "exec", "--skip-git-repo-check", "--sandbox", "workspace-write", "--json",
                *(["-m", model] if model else []), *extra, prompt]

    # -- payloads ----------------------------------------------------------------------------

    def parse(self, payload: dict[str, Any], env: dict[str, str]) -> HookCall:
        event = payload.get("hook_event_name", "")
        call = HookCall(
            kind=EVENT_KINDS.get(event, "ignore"),
            session_id=str(payload.get("session_id") or "unknown"),
            workspace=self.workspace(),
            agent_id=payload.get("agent_id"),
            agent_type=payload.get("agent_type"),
            transcript_path=payload.get("transcript_path"),
            source=payload.get("source"),
            stop_hook_active=bool(payload.get("stop_hook_active")),
            reason=payload.get("reason"),
        )
        model = payload.get("model")
        if isinstance(model, str) and model and call.kind != "session_start":
            # (SessionStart is left without it: the run has not started yet, and the prompt that
            # always follows carries the same model)
            call.model = model
        getattr(self, "_parse_" + call.kind)(call, payload)
        return call

    @staticmethod
    def workspace() -> Path:
        """The hook runs in the session cwd: its nearest installed ancestor (else git top)."""
        try:
            return find_root(Path(os.getcwd()))
        except OSError:
            return Path(".")

    def _parse_ignore(self, call: HookCall, payload: dict[str, Any]) -> None:
        pass

    _parse_session_start = _parse_session_end = _parse_subagent_start = _parse_stop = _parse_ignore

    def _parse_prompt(self, call: HookCall, payload: dict[str, Any]) -> None:
        call.reads = [Read("prompt", "user", str(payload.get("prompt", "")))]

    def _parse_tool_pre(self, call: HookCall, payload: dict[str, Any]) -> None:
        call.tool = str(payload.get("tool_name", ""))
        call.tool_input = payload.get("tool_input")
        call.key = str(payload.get("tool_use_id", ""))
        call.scope = tool_scope(call.tool, call.tool_input, str(payload.get("cwd") or os.getcwd()))
        call.cwd = str(payload.get("cwd") or os.getcwd())  # the tool's workdir
        call.tool_kind, call.intent = self.intent(call.tool, call.tool_input)

    @staticmethod
    def intent(tool: str, tool_input: object) -> tuple[str | None, dict[str, Any]]:
        """Codex's tools as the core's tool kinds (vacant/core/calls.py TOOL_KINDS)."""
        data = tool_input if isinstance(tool_input, dict) else {}
        if tool in SHELL_TOOLS:
            command = data.get("command", data.get("cmd")) if data else tool_input
            if isinstance(command, list) and all(isinstance(part, str) for part in command):
                command = shlex.join(command)
            return "shell", {"command": command}
        if tool == PATCH_TOOL:
            patch = data.get("command") if data else tool_input
            if isinstance(patch, list):
                patch = patch[-1] if patch else ""
            return "patch", {"patch": patch if isinstance(patch, str) else ""}
        if tool == "view_image":
            return "read", {"path": data.get("path")}
        return None, {}

    def _parse_tool_post(self, call: HookCall, payload: dict[str, Any]) -> None:
        self._parse_tool_pre(call, payload)
        cwd = str(payload.get("cwd") or os.getcwd())
        response = payload.get("tool_response")
        item = transcript_item(call.transcript_path, call.key)
        if call.tool == SHELL_TOOL:
            command = str((call.tool_input or {}).get("command", "")) if isinstance(call.tool_input, dict) else ""
            exit_code = item.get("exit_code") if item else None
            if isinstance(exit_code, int) and not isinstance(exit_code, bool):
                call.exit_code = exit_code
                call.outcome = "ok" if exit_code == 0 else "failed"
            elif item and item.get("status") in ("completed", "failed"):
                call.outcome = "ok" if item["status"] == "completed" else "failed"
            else:
                call.outcome = "unknown"  # the transcript has no record of it (yet)
            output = response if isinstance(response, str) else None
            call.reads = command_reads(item, command, output, cwd)
            return
        if call.tool == PATCH_TOOL:
            status = item.get("status") if item else None
            match = _EXIT_CODE.search(response) if isinstance(response, str) else None
            if status in ("completed", "failed"):
                call.outcome = "ok" if status == "completed" else "failed"
            elif match:
                call.outcome = "ok" if match.group(1) == "0" else "failed"
            else:
                call.outcome = "ok"
            return
        call.outcome = "ok"
        if call.tool == "view_image" and isinstance(call.tool_input, dict) and isinstance(call.tool_input.get("path"), str):
            path = os.path.normpath(os.path.join(cwd, call.tool_input["path"]))
            content = read_file_bytes(path)
            if content is not None:
                call.reads = [Read("file", path, content)]

    def settled(self, call: HookCall, ids: list[str]) -> dict[str, tuple[str, int | None]]:
        """Of these open calls, those Codex finished without a PostToolUse: id -> (outcome,
        exit code). The recorder closes them (their changes were seen by its scans)."""
        done: dict[str, tuple[str, int | None]] = {}
        for item_id in ids:
            item = finished_unreported(call.transcript_path, item_id)
            if item is None:
                continue
            exit_code = item.get("exit_code")
            exit_code = exit_code if isinstance(exit_code, int) and not isinstance(exit_code, bool) else None
            ok = item["status"] == "completed" and exit_code in (None, 0)
            done[item_id] = ("ok" if ok else "failed", exit_code)
        return done

    def unheard(self, call: HookCall, agent_id: str | None, recorded: dict[str, str]) -> list[tuple[str, str]] | None:
        """The main agent's recorded calls its rollout does not hold (`call-unheard`); a failed
        close is not judged here (the recorder takes a call's outcome from the rollout itself).
        A sub-agent's calls: not judged (where Codex writes them was not measured)."""
        if agent_id is not None:
            return None
        ids = rollout_call_ids(call.transcript_path)
        if ids is None:
            return None
        return [(key, "call-unheard") for key in recorded if key not in ids]

    def _parse_subagent_stop(self, call: HookCall, payload: dict[str, Any]) -> None:
        message = payload.get("last_assistant_message")
        if isinstance(message, str):
            call.reads = [Read("subagent", str(call.agent_id), message)]

    # -- responses ---------------------------------------------------------------------------

    def render(self, call: HookCall, response: Response) -> tuple[str, int]:
        return render_hook_json(call, response)

    # -- installation ------------------------------------------------------------------------

    own_sandbox = "Codex's permission profile (bubblewrap), in `.codex/config.toml`"
    scopes = ("project", "user")  # `local` is the project's .codex/hooks.json too

    def files(self, root: Path) -> list[Path]:
        """Every file an install may write: the hooks files and the trust entries in config.toml."""
        return [*(hooks_path(root, scope) for scope in self.scopes), config_path(), codex_wall.config_file(root)]

    def hooks_path(self, root: Path, scope: str) -> Path:
        return hooks_path(root, scope)

    def hooks_block(self, hook_command: str) -> dict[str, list[dict[str, Any]]]:
        return hooks_block(hook_command)

    def install(self, root: Path, scope: str, hook_command: str, wall: Wall | None = None) -> Path:
        """The hooks into the scope's hooks.json (trusted); with `wall`, the permission profile
        of codex/wall.py in the project's `.codex/config.toml` (its paths are this workspace's)."""
        path = self.hooks_path(root, scope)
        root = Path(root).resolve()
        project = root if scope in ("project", "local") else None
        check_installable(project)
        created_dir = project is not None and not path.parent.exists()
        unseen = self.unseen_by_git(root, hook_command, wall is not None) if project is not None else None
        settings_file.install(path, self.hooks_block(hook_command), validate_hooks)
        trust(path, project, root, created_dir=created_dir)
        if wall is not None:  # after the hooks: the profile names only paths that exist
            codex_wall.install(root, wall)
        if unseen:
            from vacant.platforms import git_exclude  # install-time only

            git_exclude.install(root, self.name, unseen)
        return path

    def unseen_by_git(self, root: Path, hook_command: str, walled: bool) -> list[str]:
        """The `.git/info/exclude` lines of an install (read before it writes anything): the files it
        creates in the workspace holding this machine's paths, never committed by a `git add -A`:
        the wall's `.codex/config.toml`, and the hooks file when its command names this machine's
        vacant (a command found on PATH, `vacant-hook codex`, is the person's to commit)."""
        mine = [codex_wall.config_file(root)] if walled else []
        if os.path.isabs(hook_command.split()[0] if hook_command.split() else ""):
            mine.append(self.hooks_path(root, "project"))
        return [f"/{path.relative_to(root).as_posix()}" for path in mine if not path.exists()]

    def uninstall(self, root: Path, scope: str) -> Path | None:
        path = self.hooks_path(root, scope)
        record = _load_record(path) or {}
        removed = settings_file.uninstall(path)
        untrusted = untrust(path)
        walled = codex_wall.uninstall(root) if scope in ("project", "local") else None
        from vacant.platforms import git_exclude

        excluded = git_exclude.uninstall(root, self.name) if scope in ("project", "local") else None
        if record.get("created_dir") and not path.exists():
            try:
                path.parent.rmdir()  # the `.codex/` vacant created, if nothing else is in it
            except OSError:
                pass
        return path if (removed or untrusted or walled or excluded) else None

    def wall_problem(self, root: Path, wall: Wall) -> str | None:
        """What keeps the permission profile from holding (doctor), or None."""
        if not codex_wall.present(root):
            return f"{codex_wall.config_file(root)} holds no vacant wall: run `vacant init --platform codex` again"
        overriding = codex_wall.overridden(root, config_path())
        if overriding:
            return f"{overriding[0]} makes Codex ignore the wall's profile (so does `codex --sandbox …`)"
        return None

    @staticmethod
    def sandbox_settings(root: Path, wall: Wall) -> tuple[str, str]:
        """The wall as Codex's permission profile (the two blocks of codex/wall.py)."""
        return codex_wall.sandbox_settings(root, wall)

    def doctor(self, root: Path, hook_command: str) -> list[Diagnosis]:
        from vacant.platforms.codex.doctor import doctor  # `vacant doctor` only: never on a hook call

        return doctor(Path(root).resolve(), hook_command)


Codex.driver = CodexDriver
PLATFORM = Codex()
