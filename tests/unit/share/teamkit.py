"""A team for the share tests: a bare repository as the remote, people with their own HOME (own
signing key, own reputation table) and their own clone, and runs recorded through the real hook
(`vacant.hook.run`, the entry `vacant-hook claude` calls, with Claude Code's payload shapes).
Holds no tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from vacant.core.keys import create_user_key

from vacant.core.locations import mark_installed
from vacant.hook import call as hook
from vacant.core.locations import run_dir
from vacant.share import signing, sync

BIN = Path(sys.executable).parent
# `written` is red at the baseline (no out.txt yet), so a green Stop proves something and reviews its cell
CONTRACT = ('task_family = "share"\n\n[[check]]\nname = "no-bad"\ncommand = "! grep -q bad out.txt"\ntimeout = 30\n'
            '\n[[check]]\nname = "written"\ncommand = "test -f out.txt"\ntimeout = 30\n')
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
           "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env={**os.environ, **GIT_ENV})
    assert proc.returncode == 0, f"git {args}: {proc.stderr}"
    return proc.stdout


@dataclass
class Person:
    name: str
    home: Path
    data: Path
    ws: Path | None = None

    def env(self) -> dict[str, str]:
        return {"HOME": str(self.home), "XDG_CONFIG_HOME": str(self.home / ".config"), "VACANT_HOME": str(self.data)}


class Team:
    def __init__(self, base: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.base, self.monkeypatch = base, monkeypatch
        self.bare = base / "remote.git"
        git(base, "init", "-q", "--bare", str(self.bare))
        for name, value in GIT_ENV.items():
            monkeypatch.setenv(name, value)
        for name in ("VACANT_STATE_DIR", "VACANT_DO"):
            monkeypatch.delenv(name, raising=False)

    def person(self, name: str, key_of: Person | None = None) -> Person:
        """Someone with their own HOME; `key_of`: a second machine of that person (same key)."""
        home = key_of.home if key_of else self.base / f"home-{name}"
        person = Person(name, home, self.base / f"data-{name}")
        self.use(person)
        signing.own_signer()
        create_user_key()  # the person's own, as their `vacant init` made it (kept on a second machine)
        return person

    def use(self, person: Person) -> None:
        for name, value in person.env().items():
            self.monkeypatch.setenv(name, value)

    def key_line(self, person: Person) -> str:
        self.use(person)
        return signing.own_signer().team_line(person.name)

    def seed(self, trusted: list[Person], contract: str = CONTRACT, per_person: bool = False) -> None:
        """The remote's first commit; the keys in the older single file, or (`per_person`) one
        `.vacant-team-keys/<name>.pub` each."""
        seed = self.base / "seed"
        git(self.base, "clone", "-q", str(self.bare), str(seed))
        (seed / "vacant.toml").write_text(contract)
        if per_person:
            (seed / signing.TEAM_KEYS_FILE).mkdir()
            for p in trusted:
                (seed / signing.TEAM_KEYS_FILE / f"{p.name}.pub").write_text(self.key_line(p) + "\n")
        else:
            (seed / signing.TEAM_KEYS_FILE).write_text("".join(self.key_line(p) + "\n" for p in trusted))
        (seed / "README").write_text("project\n")
        git(seed, "add", "-A")
        git(seed, "commit", "-q", "-m", "seed")
        git(seed, "push", "-q", "origin", "HEAD:refs/heads/main")
        git(self.bare, "symbolic-ref", "HEAD", "refs/heads/main")

    def clone(self, person: Person) -> Path:
        person.ws = self.base / f"ws-{person.name}"
        git(self.base, "clone", "-q", str(self.bare), str(person.ws))
        mark_installed(person.ws)  # `vacant init`: hooks record only in an installed workspace
        return person.ws

    def record(self, person: Person, session: str, content: str) -> Path:
        """One run through the hook: Write out.txt, then Stop (a review: 0 if it wrote 'bad', 1 otherwise)."""
        self.use(person)
        ws = person.ws
        self._send(ws, session, "SessionStart", source="startup")
        fields = {"tool_name": "Write", "tool_input": {"file_path": str(ws / "out.txt"), "content": content},
                  "tool_use_id": f"toolu_{session}"}
        self._send(ws, session, "PreToolUse", **fields)
        (ws / "out.txt").write_text(content)
        self._send(ws, session, "PostToolUse", **fields, tool_response={"type": "create"})
        self._send(ws, session, "Stop", stop_hook_active=False)
        self._send(ws, session, "SessionEnd", reason="other")
        (ws / "out.txt").unlink()
        return run_dir(ws, session)

    def run_writes(self, person: Person, session: str, writes: list[tuple[str, str]]) -> Path:
        """One run through the hook: a Write step per (path, content), files left in place, then Stop."""
        self.use(person)
        ws = person.ws
        self._send(ws, session, "SessionStart", source="startup")
        for number, (rel, content) in enumerate(writes, start=1):
            fields = {"tool_name": "Write", "tool_input": {"file_path": str(ws / rel), "content": content},
                      "tool_use_id": f"toolu_{session}_{number}"}
            self._send(ws, session, "PreToolUse", **fields)
            (ws / rel).parent.mkdir(parents=True, exist_ok=True)
            (ws / rel).write_text(content)
            self._send(ws, session, "PostToolUse", **fields, tool_response={"type": "update"})
        self._send(ws, session, "Stop", stop_hook_active=False)
        self._send(ws, session, "SessionEnd", reason="other")
        return run_dir(ws, session)

    @staticmethod
    def _send(ws: Path, session: str, event: str, **fields) -> str:
        body = {"session_id": session, "cwd": str(ws), "hook_event_name": event, **fields}
        stdout, code = hook.run("claude", json.dumps(body).encode(), {"CLAUDE_PROJECT_DIR": str(ws)})
        assert code == 0
        return stdout

    def sync(self, person: Person, remote: str = "origin") -> sync.SyncResult:
        self.use(person)
        return sync.sync(person.ws, remote)

    def cli(self, person: Person, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
        env = {**os.environ, **GIT_ENV, **person.env()}
        return subprocess.run([str(BIN / "vacant"), *args], cwd=cwd or person.ws, capture_output=True, text=True,
                              env=env, timeout=300)
