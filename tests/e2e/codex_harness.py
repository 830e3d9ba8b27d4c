"""Helpers for end-to-end tests that drive the real Codex CLI offline.

The CLI (pinned in ``fixtures/agents/package.json``) talks to a scripted fake OpenAI Responses
upstream (``fixtures/upstreams/fake_responses.py``) with an isolated HOME and CODEX_HOME, so a run
needs no network, no account and no user config. Scratch directories live under the repo's
``.e2e-tmp/`` (or, for a checkout under a temporary directory, in the user's cache directory), never
under ``/tmp``: Codex refuses to create its helper binaries under a temporary directory.

Typical use::

    with CodexScratch("my-test") as scratch:
        ws = make_codex_workspace(scratch, {"a.txt": "hello\\n"})     # git repo, vacant init --platform codex
        with FakeResponses({"turns": [...]}, scratch.path / "upstream") as up:
            proc = run_codex_exec(ws, scratch.codex_home, up, "do the task")

This module holds no tests.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from harness import (
    person_key,
    AGENTS_BIN,
    BIN,
    REPO_ROOT,
    UPSTREAMS,
    RecordedRun,
    ScriptedUpstream,
    agent_binary,
    vacant,
)

FAKE_RESPONSES = UPSTREAMS / "fake_responses.py"


def _under_a_temp_dir(path: Path) -> bool:
    temps = {Path(tempfile.gettempdir()).resolve(), Path("/tmp").resolve(), Path("/var/tmp").resolve()}
    resolved = path.resolve()
    return any(temp == resolved or temp in resolved.parents for temp in temps)


def e2e_tmp_root() -> Path:
    """Where Codex scratch directories go: $VACANT_E2E_TMP, else the checkout's `.e2e-tmp/` -- unless
    the checkout itself lies under a temporary directory (a clone under /tmp), which Codex refuses:
    then a directory of this checkout's own in the user's cache directory."""
    override = os.environ.get("VACANT_E2E_TMP")
    if override:
        return Path(override)
    local = REPO_ROOT / ".e2e-tmp"
    if not _under_a_temp_dir(local):
        return local
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "vacant-e2e" / hashlib.sha256(str(REPO_ROOT).encode()).hexdigest()[:12]


E2E_TMP = e2e_tmp_root()

MODEL = "gpt-5.5"  # a slug from Codex's bundled catalog: the freeform apply_patch tool is offered
FAKE_API_KEY = "sk-fake-codex"
KEEP_ENV = "VACANT_KEEP_E2E"  # set to keep the scratch directories of passing tests


def codex_binary() -> Path:
    """Path of the pinned ``codex`` CLI; raises (never skips) when it is missing."""
    return agent_binary("codex", "Codex")


class CodexScratch:
    """A fresh directory under ``.e2e-tmp/`` holding HOME, CODEX_HOME and the workspace.

    Removed on a clean exit of the ``with`` block unless $VACANT_KEEP_E2E is set; kept when the
    block raised, for a look at what happened."""

    def __init__(self, name: str, base: Path | None = None) -> None:
        """`base`: a directory of the caller's (a test that runs no Codex needs no Codex-safe place)."""
        safe = "".join(c if c.isalnum() or c in "-_" else "-" for c in name)[:60]
        self.codex_safe = base is None
        self.path = (base or E2E_TMP) / f"{safe}-{uuid.uuid4().hex[:8]}"
        self.home = self.path / "home"
        self.codex_home = self.home / ".codex"
        self.vacant_home = self.path / "vacant-data"

    def __enter__(self) -> "CodexScratch":
        if self.codex_safe and _under_a_temp_dir(self.path.parent):
            raise RuntimeError(f"{self.path} is under a temporary directory: Codex refuses its helper binaries there")
        self.codex_home.mkdir(parents=True)
        self.vacant_home.mkdir(parents=True)
        person_key(self.home)
        return self

    def __exit__(self, exc_type, *exc) -> None:
        if exc_type is None and not os.environ.get(KEEP_ENV):
            shutil.rmtree(self.path, ignore_errors=True)


class FakeResponses(ScriptedUpstream):
    """Runs ``fake_responses.py`` with ``script`` in a subprocess for a ``with`` block (one line per
    ``*/responses`` or ``*/chat/completions`` request in ``requests.jsonl``)."""

    SERVER = FAKE_RESPONSES
    TITLE = "fake Responses upstream"

    @property
    def base_url(self) -> str:
        """What goes in the provider's ``base_url`` (Codex POSTs ``{base_url}/responses``)."""
        return self._origin() + "/v1"


def shell(cmd: str, call_id: str | None = None, **arguments) -> dict:
    """A scripted ``exec_command`` call; ``arguments`` go with ``cmd`` (e.g. ``workdir``)."""
    item = {"type": "function", "name": "exec_command", "arguments": {"cmd": cmd, **arguments}}
    return {**item, "call_id": call_id} if call_id else item


def patch(text: str, call_id: str | None = None) -> dict:
    """A scripted freeform ``apply_patch`` call."""
    item = {"type": "custom", "name": "apply_patch", "input": text}
    return {**item, "call_id": call_id} if call_id else item


def turn(*items, **extra) -> dict:
    """A scripted turn of items; ``extra`` is ``match``, ``delay``, ``write_files``..."""
    return {"items": list(items), **extra}


def write_config(codex_home: Path, extra: str = "") -> Path:
    """``config.toml`` with the fake provider. Its ``base_url`` is given per run with ``-c`` (the
    port changes), so nothing rewrites this file after `vacant init` recorded trust in it."""
    path = Path(codex_home) / "config.toml"
    path.write_text(
        f'model = "{MODEL}"\n'
        'model_provider = "fake"\n'
        f"{extra}"
        "\n[model_providers.fake]\n"
        'name = "Fake"\n'
        'base_url = "http://127.0.0.1:9/v1"\n'
        'env_key = "FAKE_API_KEY"\n'
        'wire_api = "responses"\n'
        "request_max_retries = 0\n"
        "stream_max_retries = 0\n"
    )
    return path


def codex_env(home: Path, codex_home: Path, vacant_home: Path | None = None) -> dict:
    """A copy of os.environ for an offline run: isolated HOME/CODEX_HOME, the fake key, the pinned
    codex first on PATH. Inherited ``CODEX*`` / ``OPENAI*`` variables are dropped."""
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith(("CODEX", "OPENAI"))}
    env.update({
        "HOME": str(home),
        "CODEX_HOME": str(codex_home),
        "FAKE_API_KEY": FAKE_API_KEY,
        "PATH": f"{AGENTS_BIN}{os.pathsep}{BIN}{os.pathsep}{env.get('PATH', '')}",
        "NO_COLOR": "1",
    })
    if vacant_home is not None:
        env["VACANT_HOME"] = str(vacant_home)
    return env


def git_workspace(workspace: Path, files: dict[str, str] | None = None) -> Path:
    """A git repository with `files` committed (Codex runs in git repos without extra flags)."""
    workspace.mkdir(parents=True, exist_ok=True)
    for rel, text in (files or {}).items():
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text(text)
    git = ["git", "-c", "user.email=e2e@vacant.invalid", "-c", "user.name=e2e", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q"], cwd=workspace, check=True)
    subprocess.run([*git, "add", "-A"], cwd=workspace, check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "fixture"], cwd=workspace, check=True)
    return workspace


def make_codex_workspace(scratch: CodexScratch, files: dict[str, str] | None = None,
                         install: bool = True, wall: bool = False) -> Path:
    """A git workspace with vacant's hooks installed (and trusted) by the real `vacant init`."""
    workspace = git_workspace(scratch.path / "ws", files)
    write_config(scratch.codex_home)
    if install:
        env = codex_env(scratch.home, scratch.codex_home, scratch.vacant_home)
        # unwalled unless asked: the wall has its own e2e (test_codex_wall.py), the rest test other things
        vacant(["init", "--platform", "codex", *([] if wall else ["--no-wall"])], workspace, env=env)
    return workspace


def run_codex_exec(
    workspace: Path,
    codex_home: Path,
    upstream: "FakeResponses | str",
    prompt: str,
    extra_args: Iterable[str] = (),
    sandbox: str = "workspace-write",
    home: Path | None = None,
    vacant_home: Path | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess:
    """Run ``codex exec PROMPT`` once in ``workspace`` and return the finished process.

    ``config.toml`` in ``codex_home`` must name the fake provider (:func:`write_config`); its
    ``base_url`` is pointed at ``upstream`` with ``-c``. No bypass flag is passed: hooks fire only
    when really trusted. stdout is the final message; stderr shows each hook run."""
    codex_home = Path(codex_home)
    home = Path(home) if home is not None else codex_home.parent
    url = upstream if isinstance(upstream, str) else upstream.base_url
    if not (codex_home / "config.toml").exists():
        write_config(codex_home)
    cmd = [str(codex_binary()), "exec", "--sandbox", sandbox, "--color", "never",
           "-c", f"model_providers.fake.base_url={json.dumps(url)}", *extra_args, prompt]
    return run_bounded(cmd, workspace, codex_env(home, codex_home, vacant_home), timeout)


def run_bounded(cmd: list[str], cwd: Path, env: dict, timeout: float) -> subprocess.CompletedProcess:
    """subprocess.run in its own process group: on timeout the whole group is killed (the npm
    launcher and the native binary under it, hooks included) and TimeoutExpired is raised, so a
    run that would loop forever fails the test instead of outliving it."""
    proc = subprocess.Popen(cmd, cwd=str(cwd), env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        raise subprocess.TimeoutExpired(cmd, timeout, output=stdout, stderr=stderr) from None
    return subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)


def session_id(process: subprocess.CompletedProcess) -> str:
    """The session (thread) id `codex exec` printed in its stderr header: what `resume` takes."""
    for line in process.stderr.splitlines():
        if line.startswith("session id: "):
            return line.split(": ", 1)[1].strip()
    raise AssertionError(f"no `session id:` line in codex's stderr:\n{process.stderr}")


@dataclass
class CodexRun(RecordedRun):
    workspace: Path
    scratch: CodexScratch
    upstream: FakeResponses
    process: subprocess.CompletedProcess

    def hook_runs(self) -> list[str]:
        """The `hook: X` lines Codex printed on stderr (start and finish of every hook run)."""
        return [line for line in self.process.stderr.splitlines() if line.startswith("hook: ")]


def run_scripted(scratch: CodexScratch, turns: list[dict], files: dict[str, str] | None = None,
                 prompt: str = "do the task", extra_args: tuple[str, ...] = ()) -> CodexRun:
    workspace = make_codex_workspace(scratch, files)
    upstream = FakeResponses({"turns": turns}, scratch.path / "upstream")
    with upstream:
        process = run_codex_exec(workspace, scratch.codex_home, upstream, prompt, extra_args=extra_args,
                                 home=scratch.home, vacant_home=scratch.vacant_home)
    return CodexRun(workspace, scratch, upstream, process)
