"""Codex CLI (0.171): hook payloads in, decisions out, hooks installed in `hooks.json` and trusted.

Facts this module relies on (measured on the real CLI, see shared/platforms/codex-and-opencode.md):
- `exec_command` arrives as tool `Bash` ({"command": …}); the freeform `apply_patch` tool as
  `apply_patch` with the patch text in `tool_input.command`; every payload but SessionEnd carries
  the `model`.
- In tool events the payload `cwd` is the tool's workdir; the hook process itself runs in the
  session cwd, so the workspace is found from os.getcwd().
- PostToolUse carries no exit code and there is no read tool, but the rollout transcript
  (`transcript_path`) already holds the call's `item_completed` line when PostToolUse runs: exit
  code, status, `aggregated_output` and `parsed_cmd` (reads the shell parser recognised).
- No PostToolUse for: denied calls, spawn failures, sandbox rejections, and `apply_patch` run
  through the shell. Their steps stay open (the full scans around them still see every change).
- Hooks run only when trusted: project-local config needs the project trusted
  (`[projects."<abs>"] trust_level = "trusted"`), and every non-managed hook needs its hash in
  `[hooks.state."<file>:<event>:<group>:<handler>"] trusted_hash` of `$CODEX_HOME/config.toml`.
  Untrusted hooks are skipped with no warning in `codex exec`. Trust is written through Codex's own
  app-server (`hooks/list`, `config/batchWrite`) when a `codex` binary is at hand, else computed
  offline the way Codex does.

Module level imports the standard library only (hot path); the installer imports more lazily.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from vacant.core.atomic import atomic_write
from vacant.core.calls import HookCall, Read, Response
from vacant.core.locations import find_root
from vacant.platforms.base import read_file_bytes, render_hook_json

EVENT_KINDS = {
    "SessionStart": "session_start",
    "UserPromptSubmit": "prompt",
    "PreToolUse": "tool_pre",
    "PostToolUse": "tool_post",
    "SubagentStart": "subagent_start",
    "SubagentStop": "subagent_stop",
    "Stop": "stop",
    "SessionEnd": "session_end",
}
INSTALL_EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd")
# Seconds. Codex clamps SessionEnd to 3 s (and warns unless we ask for 3 ourselves).
TIMEOUTS = {"Stop": 600, "SessionStart": 120, "UserPromptSubmit": 30, "SessionEnd": 3}
DEFAULT_TIMEOUT = 60
DEFAULT_CODEX_TIMEOUT = 600  # what Codex assumes when a handler has no timeout
HOOK_TYPES = ("command", "prompt", "agent", "mcpTool")
SNAKE = {
    "SessionStart": "session_start", "UserPromptSubmit": "user_prompt_submit", "PreToolUse": "pre_tool_use",
    "PostToolUse": "post_tool_use", "Stop": "stop", "SessionEnd": "session_end", "PreCompact": "pre_compact",
    "PostCompact": "post_compact", "PermissionRequest": "permission_request", "SubagentStart": "subagent_start",
    "SubagentStop": "subagent_stop",
}

SHELL_TOOL = "Bash"
PATCH_TOOL = "apply_patch"
READ_ONLY_TOOLS = frozenset({"view_image", "web_search", "tool_search", "update_plan"})
TRANSCRIPT_TAIL = 1024 * 1024
OUTPUT_TYPES = ("function_call_output", "custom_tool_call_output")
FINAL_STATUSES = ("completed", "failed", "declined")

_PATCH_PATH = re.compile(r"^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+?)\s*$", re.MULTILINE)
_EXIT_CODE = re.compile(r"^Exit code: (-?\d+)", re.MULTILINE)


# -- payload helpers (hot path) ------------------------------------------------------------------


def patch_paths(patch: str, cwd: str) -> list[str] | None:
    """The absolute paths an apply_patch text adds, updates, deletes or moves to (None: unparsable)."""
    found = _PATCH_PATH.findall(patch or "")
    if not found:
        return None
    paths: list[str] = []
    for path in found:
        absolute = os.path.normpath(os.path.join(cwd, path))
        if absolute not in paths:
            paths.append(absolute)
    return paths


def tool_scope(tool: str, tool_input: object, cwd: str) -> list[str] | None:
    if tool == PATCH_TOOL:
        patch = (tool_input or {}).get("command") if isinstance(tool_input, dict) else tool_input
        return patch_paths(patch if isinstance(patch, str) else "", cwd)
    if tool in READ_ONLY_TOOLS:
        return []
    return None  # the shell, MCP tools and anything unknown may touch anything


def _transcript_records(path: str | None, item_id: str | None, tail: int = TRANSCRIPT_TAIL) -> list[dict]:
    """The rollout lines (last `tail` bytes) that mention this id, newest first."""
    if not path or not item_id:
        return []
    try:
        with open(path, "rb") as handle:
            handle.seek(0, 2)
            size = handle.tell()
            handle.seek(max(0, size - tail))
            data = handle.read()
    except OSError:
        return []
    needle = json.dumps(item_id).encode()
    records = []
    for raw in reversed(data.split(b"\n")):
        if needle not in raw:
            continue
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        payload = line.get("payload") if isinstance(line, dict) else None
        if isinstance(payload, dict):
            records.append(payload)
    return records


def _completed_item(records: list[dict], item_id: str) -> dict | None:
    for payload in records:
        item = payload.get("item")
        if payload.get("type") == "item_completed" and isinstance(item, dict) and item.get("id") == item_id:
            return item
    return None


def transcript_item(path: str | None, item_id: str | None, tail: int = TRANSCRIPT_TAIL) -> dict | None:
    """The `item_completed` item with this id, from the last `tail` bytes of the rollout."""
    return _completed_item(_transcript_records(path, item_id, tail), item_id) if item_id else None


def finished_unreported(path: str | None, item_id: str) -> dict | None:
    """The completed item of a call whose PostToolUse, if Codex had sent one, has already run.

    Codex writes a call's `item_completed` before PostToolUse and the output the model gets
    (`function_call_output` / `custom_tool_call_output`) after it. A call with both whose step is
    still open got no PostToolUse and never will (apply_patch run through the shell)."""
    records = _transcript_records(path, item_id)
    answered = any(p.get("type") in OUTPUT_TYPES and p.get("call_id") == item_id for p in records)
    item = _completed_item(records, item_id) if answered else None
    return item if item is not None and item.get("status") in FINAL_STATUSES else None


def _item_cwd(item: dict, fallback: str) -> str:
    cwd = item.get("cwd")
    if isinstance(cwd, str) and cwd:
        return cwd[len("file://"):] if cwd.startswith("file://") else cwd
    return fallback


def command_reads(item: dict | None, command: str, output: str | None, cwd: str) -> list[Read]:
    """The file reads the shell parser recognised, then the command's own output."""
    reads: list[Read] = []
    if item is not None:
        cwd = _item_cwd(item, cwd)
        aggregated = item.get("aggregated_output")
        if output is None and isinstance(aggregated, str):
            output = aggregated
        parsed = [p for p in item.get("parsed_cmd") or [] if isinstance(p, dict)]
        file_reads = [p for p in parsed if p.get("type") == "read" and isinstance(p.get("path"), str) and p["path"]]
        for entry in file_reads:
            path = os.path.normpath(os.path.join(cwd, entry["path"]))
            content: str | bytes | None = output if len(file_reads) == 1 and output is not None else None
            if content is None:
                content = read_file_bytes(path)
            if content is not None:
                reads.append(Read("file", path, content))
    if output is not None:
        reads.append(Read("command", command, output))
    return reads


class Codex:
    name = "codex"
    cell_platform = "codex"

    # -- payloads ----------------------------------------------------------------------------

    def parse(self, payload: dict[str, object], env: dict[str, str]) -> HookCall:
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
        """The hook runs in the session cwd: its nearest ancestor with `.vacant/` (else git top)."""
        try:
            return find_root(Path(os.getcwd()))
        except OSError:
            return Path(".")

    def _parse_ignore(self, call: HookCall, payload: dict) -> None:
        pass

    _parse_session_start = _parse_session_end = _parse_subagent_start = _parse_stop = _parse_ignore

    def _parse_prompt(self, call: HookCall, payload: dict) -> None:
        call.reads = [Read("prompt", "user", str(payload.get("prompt", "")))]

    def _parse_tool_pre(self, call: HookCall, payload: dict) -> None:
        call.tool = str(payload.get("tool_name", ""))
        call.tool_input = payload.get("tool_input")
        call.key = str(payload.get("tool_use_id", ""))
        call.scope = tool_scope(call.tool, call.tool_input, str(payload.get("cwd") or os.getcwd()))
        call.cwd = str(payload.get("cwd") or os.getcwd())  # the tool's workdir

    def _parse_tool_post(self, call: HookCall, payload: dict) -> None:
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

    def _parse_subagent_stop(self, call: HookCall, payload: dict) -> None:
        message = payload.get("last_assistant_message")
        if isinstance(message, str):
            call.reads = [Read("subagent", str(call.agent_id), message)]

    # -- responses ---------------------------------------------------------------------------

    def render(self, call: HookCall, response: Response) -> tuple[str, int]:
        return render_hook_json(call, response)

    # -- installation ------------------------------------------------------------------------

    def hooks_path(self, root: Path, scope: str) -> Path:
        if scope in ("project", "local"):
            return Path(root).resolve() / ".codex" / "hooks.json"
        if scope == "user":
            return codex_home().resolve() / "hooks.json"  # Codex keys its trust by the real path
        raise ValueError(f"unknown scope {scope!r}: use project (or local) or user")

    def hooks_block(self, hook_command: str) -> dict[str, list]:
        return {
            event: [{"hooks": [{"type": "command", "command": hook_command,
                                "timeout": TIMEOUTS.get(event, DEFAULT_TIMEOUT)}]}]
            for event in INSTALL_EVENTS
        }

    def install(self, root: Path, scope: str, hook_command: str) -> Path:
        from vacant.platforms import (
            settings_file,  # install-time only: off the hot path
        )

        path = self.hooks_path(root, scope)
        root = Path(root).resolve()
        project = root if scope in ("project", "local") else None
        check_installable(project)
        created_dir = project is not None and not path.parent.exists()
        settings_file.install(path, self.hooks_block(hook_command), validate_hooks)
        trust(path, project, root, created_dir=created_dir)
        return path

    def uninstall(self, root: Path, scope: str) -> Path | None:
        from vacant.platforms import settings_file

        path = self.hooks_path(root, scope)
        record = _load_record(path) or {}
        removed = settings_file.uninstall(path)
        untrusted = untrust(path)
        if record.get("created_dir") and not path.exists():
            try:
                path.parent.rmdir()  # the `.codex/` vacant created, if nothing else is in it
            except OSError:
                pass
        return path if (removed or untrusted) else None

    def doctor(self, root: Path, hook_command: str) -> list[tuple[str, bool, str]]:
        return doctor(self, Path(root).resolve(), hook_command)


def codex_home() -> Path:
    override = os.environ.get("CODEX_HOME")
    return Path(override) if override else Path.home() / ".codex"


def validate_hooks(settings: dict[str, object]) -> list[str]:
    """Every way the file breaks Codex's hooks.json schema."""
    return _settings().hook_problems(settings, _group_problems, _handler_problems)


def _group_problems(where: str, group: dict) -> list[str]:
    matcher = group.get("matcher")
    if matcher is None or matcher == "*":
        return []
    if not isinstance(matcher, str):
        return [f"{where}.matcher must be a regex string"]
    try:
        re.compile(matcher)
    except re.error as error:
        return [f"{where}.matcher is not a valid regex ({error})"]
    return []


def _handler_problems(where: str, handler: object) -> list[str]:
    if not isinstance(handler, dict):
        return [f"{where} must be an object"]
    problems = []
    if handler.get("type") not in HOOK_TYPES:
        problems.append(f"{where}.type is {handler.get('type')!r}; allowed: {', '.join(HOOK_TYPES)}")
    if handler.get("type") == "command" and not isinstance(handler.get("command"), str):
        problems.append(f"{where}.command must be a string")
    timeout = handler.get("timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int) or timeout <= 0):
        problems.append(f"{where}.timeout must be a positive whole number of seconds")
    if "async" in handler and not isinstance(handler["async"], bool):
        problems.append(f"{where}.async must be true or false")
    if "statusMessage" in handler and not isinstance(handler["statusMessage"], str):
        problems.append(f"{where}.statusMessage must be a string")
    return problems


# -- hook trust ----------------------------------------------------------------------------------
# None of this runs in the hook's hot path: its heavier imports happen inside the functions.


def _settings():
    from vacant.platforms import settings_file

    return settings_file

APP_SERVER_TIMEOUT_S = 30.0


class AppServerError(RuntimeError):
    pass


def codex_binary() -> str | None:
    """The `codex` to ask about trust: $VACANT_CODEX_BIN, else `codex` on PATH."""
    import shutil

    override = os.environ.get("VACANT_CODEX_BIN")
    if override:
        return override if os.path.exists(override) else None
    return shutil.which("codex")


def _toml_key(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a TOML basic string


def hook_hash(event: str, matcher: str | None, handler: dict[str, object]) -> str:
    """Codex's trust hash of one handler, computed offline (0.171: matched `hooks/list`)."""
    import hashlib

    timeout = handler.get("timeout") or DEFAULT_CODEX_TIMEOUT
    if event == "SessionEnd":
        timeout = min(timeout, TIMEOUTS["SessionEnd"])
    entry: dict[str, object] = {"type": "command", "command": handler.get("command"), "timeout": timeout,
                             "async": bool(handler.get("async", False))}
    if handler.get("statusMessage") is not None:
        entry["statusMessage"] = handler["statusMessage"]
    identity: dict[str, object] = {"event_name": SNAKE[event], "hooks": [entry]}
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
                if isinstance(handler, dict) and handler.get("type") == "command" and _settings().MARK in str(handler.get("command", "")):
                    found[f"{hooks_file}:{SNAKE[event]}:{g}:{h}"] = hook_hash(event, group.get("matcher"), handler)
    return found


class AppServer:
    """A minimal JSON-RPC client of `codex app-server` (stdio, one JSON object per line)."""

    def __init__(self, binary: str, cwd: Path, timeout: float = APP_SERVER_TIMEOUT_S) -> None:
        import subprocess

        self.timeout = timeout
        self.broken = False  # it stopped answering: no grace period at close
        self.buffer = b""
        self.next_id = 0
        try:
            self.proc = subprocess.Popen(
                [binary, "app-server"], cwd=str(cwd), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        except OSError as error:
            raise AppServerError(f"cannot start {binary} app-server: {error}") from None
        try:
            self.request("initialize", {"clientInfo": {"name": "vacant", "version": _version()}})
            self._send({"method": "initialized"})
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> "AppServer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _send(self, message: dict) -> None:
        try:
            self.proc.stdin.write(json.dumps(message).encode() + b"\n")
            self.proc.stdin.flush()
        except OSError as error:
            raise AppServerError(f"codex app-server went away: {error}") from None

    def _line(self, deadline: float) -> dict:
        import select
        import time

        while b"\n" not in self.buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.broken = True
                raise AppServerError("codex app-server did not answer in time")
            ready, _, _ = select.select([self.proc.stdout], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                raise AppServerError("codex app-server exited before answering")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        try:
            return json.loads(line)
        except ValueError:
            return {}

    def request(self, method: str, params: dict) -> object:
        import time

        self.next_id += 1
        ident = self.next_id
        self._send({"id": ident, "method": method, "params": params})
        deadline = time.monotonic() + self.timeout
        while True:
            message = self._line(deadline)
            if message.get("id") != ident or "method" in message:
                continue  # a notification, or a request from the server we do not serve
            if "error" in message:
                raise AppServerError(f"codex app-server {method}: {(message['error'] or {}).get('message')}")
            return message.get("result")

    def hooks(self, cwd: Path) -> list[dict]:
        result = self.request("hooks/list", {"cwds": [str(cwd)]}) or {}
        return [hook for entry in result.get("data") or [] for hook in entry.get("hooks") or []]

    def write(self, edits: list[tuple[str, object]]) -> None:
        if edits:
            self.request("config/batchWrite", {"edits": [
                {"keyPath": key, "mergeStrategy": "replace", "value": value} for key, value in edits
            ]})

    def close(self) -> None:
        import subprocess

        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=0 if self.broken else 5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)
        self.proc.stdout.close()


def _version() -> str:
    try:
        from vacant import __version__

        return str(__version__)
    except ImportError:
        return "0"


def config_path() -> Path:
    return codex_home() / "config.toml"


def _parse_toml(text: str, path: Path) -> dict[str, object]:
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise _settings().InstallError(f"{path} is not valid TOML ({error}); fix it by hand first") from None


def _read_config(path: Path) -> tuple[str | None, dict[str, object]]:
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None, {}
    return text, _parse_toml(text, path)


def _table(config: dict[str, object], *keys: str) -> dict[str, object]:
    for key in keys:
        config = config.get(key) if isinstance(config, dict) else None
    return config if isinstance(config, dict) else {}


def project_trust(config: dict[str, object], project: Path) -> str | None:
    level = _table(config, "projects", str(project)).get("trust_level")
    return level if isinstance(level, str) else None


def trusted_hash(config: dict[str, object], key: str) -> str | None:
    value = _table(config, "hooks", "state", key).get("trusted_hash")
    return value if isinstance(value, str) else None


def _record_path(hooks_file: Path) -> Path:
    import hashlib

    from vacant.core.locations import user_data_dir

    digest = hashlib.sha256(str(hooks_file).encode()).hexdigest()[:24]
    return user_data_dir() / "installs" / f"codex-trust-{digest}.json"


def _load_record(hooks_file: Path) -> dict[str, object] | None:
    try:
        return json.loads(_record_path(hooks_file).read_text())
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
        raise _settings().InstallError(
            f"{path} marks {project} as untrusted, so Codex ignores its .codex/ hooks; "
            "change that trust_level yourself first, or use --scope user"
        )


def trust(hooks_file: Path, project: Path | None, root: Path, created_dir: bool = False) -> dict[str, object]:
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
                if os.path.realpath(str(h.get("sourcePath"))) == real and _settings().MARK in str(h.get("command", ""))]
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


def _trust_offline(path: Path, text: str | None, config: dict[str, object], project: Path | None,
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
        raise _settings().InstallError(f"{path}: could not record trust for vacant's hooks; put `codex` on PATH and retry")
    _write_text(path, new)


def _pruned(value: object) -> object:
    if isinstance(value, dict):
        kept = {k: _pruned(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v != {}}
    return value


def _without(config: dict[str, object], keys: list[str], project: str | None) -> dict[str, object]:
    import copy

    result = copy.deepcopy(config)
    state = _table(result, "hooks", "state")
    for key in keys:
        state.pop(key, None)
    if project is not None:
        _table(result, "projects").pop(project, None)
    return _pruned(result)


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


def doctor(platform: Codex, root: Path, hook_command: str) -> list[tuple[str, bool, str]]:
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
        if problems or not _settings().count_ours(settings):
            continue
        installed.append((scope, path))
        commands = {
            handler.get("command")
            for groups in settings["hooks"].values() if isinstance(groups, list)
            for group in groups if isinstance(group, dict)
            for handler in group.get("hooks", []) if isinstance(handler, dict) and _settings().MARK in str(handler.get("command", ""))
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
    except _settings().InstallError as error:
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


PLATFORM = Codex()
