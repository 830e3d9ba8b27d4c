"""What the e2e harnesses of every agent share: where the pinned binaries are, `vacant` itself, a
scripted fake upstream in a subprocess, a recorded run read back, and the turn and step helpers
of the tests that run the same scenario on more than one agent.

This module holds no tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import xxhash
from vacant.core.locations import state_dir

REPO_ROOT = Path(__file__).resolve().parents[2]
AGENTS_DIR = REPO_ROOT / "fixtures" / "agents"
AGENTS_BIN = AGENTS_DIR / "node_modules" / ".bin"
UPSTREAMS = REPO_ROOT / "fixtures" / "upstreams"
BIN = Path(sys.executable).parent


def agent_binary(name: str, title: str) -> Path:
    """Path of the pinned ``name`` CLI; raises (never skips) when it is missing."""
    path = AGENTS_BIN / name
    if not path.exists():
        raise RuntimeError(
            f"{title} CLI not found at {path}. "
            "Run the README test command: it runs npm ci "
            f"(npm ci --prefix {AGENTS_DIR.relative_to(REPO_ROOT)})."
        )
    return path


def vacant(args: list[str], cwd: Path, env: dict | None = None, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [str(BIN / "vacant"), *args], cwd=cwd, env=env or os.environ.copy(), capture_output=True, text=True, timeout=300
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"vacant {args} failed ({proc.returncode}): {proc.stderr}\n{proc.stdout}")
    return proc


class ScriptedUpstream:
    """Runs the fake upstream ``SERVER`` (a script in ``fixtures/upstreams/``) with ``script`` in a
    subprocess for a ``with`` block.

    Files go to ``workdir``: ``script.json``, ``requests.jsonl`` (one line per model request),
    ``port`` and ``server.log`` (stderr/access log)."""

    SERVER: Path  # set by each subclass
    TITLE: str  # how a failure to start names it

    def __init__(self, script: dict, workdir: Path, start_timeout: float = 10.0):
        self.script = script
        self.workdir = Path(workdir)
        self.start_timeout = start_timeout
        self.script_path = self.workdir / "script.json"
        self.log_path = self.workdir / "requests.jsonl"
        self.port_file = self.workdir / "port"
        self.server_log = self.workdir / "server.log"
        self.proc: subprocess.Popen | None = None
        self.port: int | None = None

    def _origin(self) -> str:
        if self.port is None:
            raise RuntimeError(f"{type(self).__name__} is not running")
        return f"http://127.0.0.1:{self.port}"

    def start(self):
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.script_path.write_text(json.dumps(self.script, indent=1), encoding="utf-8")
        for p in (self.log_path, self.port_file):
            if p.exists():
                p.unlink()
        self.log_path.touch()
        with open(self.server_log, "ab") as err:
            self.proc = subprocess.Popen(
                [sys.executable, str(self.SERVER),
                 "--script", str(self.script_path),
                 "--log", str(self.log_path),
                 "--port-file", str(self.port_file)],
                stdin=subprocess.DEVNULL, stdout=err, stderr=err,
            )
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.port_file.exists():
                text = self.port_file.read_text().strip()
                if text:
                    self.port = int(text)
                    return self
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        log = self.server_log.read_text(errors="replace")
        self.stop()
        raise RuntimeError(f"{self.TITLE} did not start; its output:\n{log}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        self.proc = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def requests(self) -> list[dict]:
        """Parsed log lines, in the order they were written (``n`` ascending for serial runs)."""
        if not self.log_path.exists():
            return []
        data = self.log_path.read_bytes()
        complete = data[:data.rfind(b"\n") + 1]  # a last line without its newline is still being written
        return [json.loads(line) for line in complete.decode("utf-8").splitlines() if line.strip()]

    def scripted_requests(self) -> list[dict]:
        """Only the requests that were answered with a scripted turn."""
        return [r for r in self.requests() if r.get("turn") is not None]


class RecordedRun:
    """A finished agent run in ``self.workspace``, read back through `vacant log --json`."""

    workspace: Path

    def log(self) -> list[dict]:
        out = vacant(["log", "--json"], self.workspace).stdout
        return [json.loads(line) for line in out.splitlines() if line.strip()]

    def steps(self):
        from vacant.store.run import RunView

        return RunView.build(self.log()).ordered()

    def view(self):
        from vacant.store.run import RunView

        return RunView.build(self.log())

    def errors(self) -> str:
        path = state_dir(self.workspace) / "errors.log"
        return path.read_text() if path.exists() else ""


# -- the same scenario on more than one agent -----------------------------------------------------

MARK = "#!/bin/sh\n# MODE: ACT\necho marked >> marker.txt\n"  # an ACT arm whose only effect is a marker
LOOK = "#!/bin/sh\n# MODE: READ\necho looked-around\n"
BEHIND_THE_BACK = "changed behind the agent's back\n"  # what the upstream writes into notes.txt


def text(words: str) -> dict:
    """A text block (Claude) or item (Codex): the same shape in both scripts."""
    return {"type": "text", "text": words}


def h(data: bytes) -> str:
    return xxhash.xxh3_128_hexdigest(data)


def summary(steps) -> list[tuple]:
    return [(s.tool, s.outcome, s.exit_code, sorted(s.changed_paths())) for s in steps]


def marks(ws: Path) -> list[str]:
    path = ws / "marker.txt"
    return path.read_text().splitlines() if path.exists() else []


def assert_out_of_band(steps, writer: str) -> None:
    """The agent's `writer` step that adds a.txt, then the upstream's rewrite of notes.txt (an
    out-of-band step with no actor), then the agent's `cat a.txt`."""
    assert summary(steps) == [
        (writer, "ok", None, ["a.txt"]),
        ("oob", "ok", None, ["notes.txt"]),
        ("Bash", "ok", 0, []),
    ]
    assert steps[1].actor is None and steps[1].out_of_band
    assert steps[1].changes[0]["changed"]["notes.txt"][3] == h(BEHIND_THE_BACK.encode())


def person_key(home: Path) -> Path:
    """The person's signing key in HOME's config directory, as their one `vacant init` made it
    (vacant creates it nowhere else but in a person's terminal: vacant/core/keys.py); kept if there."""
    path = Path(home) / ".config" / "vacant" / "key"
    if path.exists():
        return path
    path.parent.mkdir(parents=True, mode=0o700, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(os.urandom(32))
    return path
