"""One daemon per workspace: the lock, its files, its end, and starting/stopping it from outside.

The daemon holds an flock on `<state>/daemon/lock` for its whole life: a second one exits at
once, and a killed one's lock is released by the kernel, so its leftover pid file and socket are
recognised as stale and replaced. It ends on SIGTERM/SIGINT, on a `@stop` request, after
`idle` seconds without a request (default 30 min, `VACANT_DAEMON_IDLE_S` or `--idle`), and when its
workspace or state directory disappears (checked on the watcher's delete event for the root and at
each idle check: no polling of the tree).
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import secrets
import signal
import socket
import sys
import threading
import time
from pathlib import Path

from vacant.core.errlog import log_error
from vacant.core.locations import ensure_state_dir, state_dir
from vacant.daemon import pointer
from vacant.hook import bundle, client
from vacant.hook.paths import daemon_dir, info, read_json, socket_path
from vacant.daemon.scanner import WatchedScanner
from vacant.daemon.server import Core, HttpServer, UnixServer, serve
from vacant.daemon.watcher import Watcher, WatchLimit

IDLE_ENV = "VACANT_DAEMON_IDLE_S"
DEFAULT_IDLE_S = 30 * 60
IDLE_CHECK_S = 60.0
SWITCH_INTERVAL_S = float(os.environ.get("VACANT_DAEMON_SWITCH_S", "0.0005"))


def _write_private(path: Path, data: dict) -> None:
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(data, handle)
    os.replace(temp, path)


def ensure_config(root: Path) -> dict:
    """The workspace's HTTP port and secret (0600), made once and kept: installed hooks name them."""
    directory = daemon_dir(root)
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = directory / "config.json"
    config = read_json(path)
    if config and isinstance(config.get("port"), int) and isinstance(config.get("secret"), str):
        return config
    config = {"port": _free_port(), "secret": secrets.token_hex(32)}
    _write_private(path, config)
    return config


PORT_FLOOR = 10000  # above the registered services most machines run
EPHEMERAL = "/proc/sys/net/ipv4/ip_local_port_range"


def _free_port() -> int:
    """A free port below the kernel's ephemeral range, kept for the life of the install: every
    outgoing connection of every program takes its local port from that range, so a port chosen
    there (bind to 0) is soon someone's, and the daemon then serves elsewhere (measured: an e2e run
    lost its http hooks so). Falls back to the kernel's choice when no such range is known."""
    low = _ephemeral_low()
    if low is not None and low - PORT_FLOOR > 1000:
        for _ in range(64):
            port = PORT_FLOOR + secrets.randbelow(low - PORT_FLOOR)
            if _bindable(port):
                return port
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _ephemeral_low() -> int | None:
    try:
        with open(EPHEMERAL) as handle:
            return int(handle.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _bindable(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def running(root: Path) -> bool:
    """True when a daemon holds the workspace's lock (a stale pid file alone does not count)."""
    path = daemon_dir(root) / "lock"
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


def request(root: Path, target: str, body: bytes = b"", env: dict[str, str] | None = None,
            timeout: float = 10.0) -> tuple[int, int, bytes]:
    """One request over the socket, in the daemon's one framing (server.py): a platform name with a
    hook payload, or `@status` / `@stop`. (status, exit code, body) of an answer that carries the
    proof of the daemon named in the state directory's pointer; OSError when no daemon answers,
    ValueError when the answer is malformed or unproven."""
    found = pointer.read_pointer(str(daemon_dir(root).parent), os.path.realpath(root))
    if found is None:
        raise FileNotFoundError(f"no daemon pointer in {daemon_dir(root).parent}")
    sock, secret = found
    envb = b"\0".join(f"{key}={value}".encode("utf-8", "surrogateescape") for key, value in (env or {}).items())
    try:
        return client.exchange(sock, secret, target.encode(), envb, body, timeout)
    except client.Impostor:
        raise ValueError(f"the socket {sock} answered without the daemon's proof") from None


def ask_status(root: Path, timeout: float = 10.0) -> dict:
    """The running daemon's own figures (Core.status)."""
    status, _code, body = request(root, "@status", timeout=timeout)
    if status != 200:
        raise ValueError(f"status request refused with {status}")
    return json.loads(body)


def stop(root: Path, timeout: float = 10.0) -> bool:
    """Stop the workspace's daemon; True when one was running and is gone now."""
    if not running(root):
        return False
    try:
        request(root, "@stop", timeout=timeout)
    except (OSError, ValueError):
        pid = (info(root) or {}).get("pid")
        if isinstance(pid, int):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + timeout
    while running(root) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not running(root)


def _idle_from_env() -> float:
    """VACANT_DAEMON_IDLE_S when it is a positive number, else the default (never a crash)."""
    try:
        value = float(os.environ.get(IDLE_ENV, DEFAULT_IDLE_S))
    except ValueError:
        return DEFAULT_IDLE_S
    return value if value == value and value > 0 else DEFAULT_IDLE_S


class Daemon:
    def __init__(self, root: Path, idle_s: float | None = None) -> None:
        self.root = Path(root).resolve()
        self.state = ensure_state_dir(self.root)
        self.dir = daemon_dir(self.root)
        self.dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.idle_s = idle_s if idle_s is not None else _idle_from_env()
        os.chdir(self.root)  # platforms that read os.getcwd() (Codex) see the workspace, never a stray directory
        self.done = threading.Event()
        self.why = ""
        # what wakes the main thread: finish() from any thread, and (set_wakeup_fd) any signal, on
        # whichever thread the kernel delivers it (a SIGTERM landing on a watcher thread after a
        # SIGSTOP/SIGCONT left the main thread asleep until its next idle check, 60 s)
        self._wake_r, self._wake_w = os.pipe()
        for fd in (self._wake_r, self._wake_w):
            os.set_blocking(fd, False)

    def finish(self, why: str) -> None:
        self.why = self.why or why
        self.done.set()
        try:
            os.write(self._wake_w, b"\0")
        except OSError:  # the pipe is full: the main thread is being woken already
            pass

    def run(self) -> int:
        lock = os.open(self.dir / "lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(lock)
            return 0  # one is running already
        try:
            return self._serve()
        finally:
            os.close(lock)

    def _serve(self) -> int:
        # A call waits on the watcher's threads (the cookie passes three of them) while a request
        # thread may be computing: hand the interpreter over sooner than the default 5 ms.
        sys.setswitchinterval(SWITCH_INTERVAL_S)
        watcher = Watcher(self.root)
        watcher.on_root_gone = lambda: self.finish("the workspace disappeared")
        try:
            watcher.start()
        except WatchLimit as error:
            log_error(self.root, f"vacant daemon: {error}; every full scan will be a recorded rescan")
            watcher.mark_lost(str(error))
        scanner = WatchedScanner(self.root, watcher, self.state)
        core = Core(self.root, scanner, secret=secrets.token_hex(32))
        config = ensure_config(self.root)
        unix = UnixServer(socket_path(self.root), core, self.finish)
        try:
            http = HttpServer(config["port"], config["secret"], core)
        except OSError as error:
            if error.errno != errno.EADDRINUSE:
                raise
            log_error(self.root, f"vacant daemon: port {config['port']} is taken; serving HTTP on a random port "
                                 "(the installed http hooks will not reach it: the command hooks and Stop reconcile)")
            http = HttpServer(0, config["secret"], core)
        serve(unix, "vacant-daemon-socket")
        serve(http, "vacant-daemon-http")
        _write_private(self.dir / "daemon.json", {"pid": os.getpid(), "port": http.server_address[1],
                                                  "socket": socket_path(self.root), "started": time.time(),
                                                  "root": str(self.root)})
        try:
            pointer.write(self.dir.parent, str(self.root), socket_path(self.root), core.secret_hex)
        except OSError as error:  # the lean clients then take the slow path: slower, never wrong
            log_error(self.root, f"vacant daemon: no pointer for the lean client: {error}")
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda *_: self.finish("signal"))
        threading.Thread(target=self._bundle, name="vacant-daemon-bundle", daemon=True).start()
        self._wait(core)
        watcher.stop()
        for server in (unix, http):
            server.server_close()
        self._cleanup(core)
        return 0

    def _bundle(self) -> None:
        """The hot bundle for the calls answered in-process (vacant/hook/bundle.py), when missing or
        stale (a few ms to check; about 0.1 s to build, once per install or upgrade), at start-up:
        an idle daemon wakes for nothing."""
        try:
            bundle.ensure()
        except Exception as error:  # noqa: BLE001 - the calls then import as before: slower, never wrong
            log_error(self.root, f"vacant daemon: the hot bundle: {type(error).__name__}: {error}")

    def _wait(self, core: Core) -> None:
        """Sleep until finish() or a signal wakes the pipe, or until the next idle check."""
        import select

        signal.set_wakeup_fd(self._wake_w, warn_on_full_buffer=False)
        while not self.done.is_set():
            select.select([self._wake_r], [], [], min(IDLE_CHECK_S, self.idle_s))
            try:
                os.read(self._wake_r, 4096)  # the handlers themselves run as this thread goes on
            except BlockingIOError:
                pass
            if self.done.is_set():
                break
            if not self.root.is_dir() or not state_dir(self.root).is_dir():
                self.finish("the workspace disappeared")
            elif time.monotonic() - core.last_request >= self.idle_s:
                self.finish(f"idle for {self.idle_s:g} s")

    def _cleanup(self, core: Core) -> None:
        pointer.remove(self.dir.parent, str(self.root), socket_path(self.root), core.secret_hex)
        mine = (info(self.root) or {}).get("pid") == os.getpid()
        for path in ([self.dir / "daemon.json", Path(socket_path(self.root))] if mine else []):
            try:
                path.unlink()
            except OSError:
                pass
