"""The daemon's two doors, one set of rules, and the call they both lead to (vacant/hook/call.py).
Both carry what the in-process hook gets and gives: a platform, an environment and a payload in;
the stdout and exit code of the command hook out.

- Unix socket (the lean client, vacant/hook/client.py; `vacant daemon status|stop` through
  lifecycle.request): mode 0600 in the state directory, and the peer's uid must be ours
  (SO_PEERCRED). One framing for every request: the line `H2 <target> <env bytes> <payload
  bytes> <nonce hex>\\n`, then the environment as `key=value` items joined by NUL, then the
  payload. The target is a platform name (a hook call), or `@status` / `@stop` (the daemon's
  own: its figures as a JSON object, its end). The answer is one line `<status> <exit code>
  <body bytes> <proof hex>\\n` and the body (for a hook call, what the command hook prints):
  the proof is a keyed BLAKE2b over the nonce and the answer under this daemon's secret
  (`Core.secret`, written only to the pointer inside the state directory), the daemon's proof of
  identity; a request that is not one gets a 4xx status in the same shape. Every forwarded
  environment is scrubbed (vacant/core/trustenv.py) and the peer's pid comes from SO_PEERCRED,
  never from the request.
- HTTP on 127.0.0.1 (Claude's `http` hooks, whose framing is Claude's): `POST /hook/<platform>`
  with the workspace's secret in `X-Vacant-Token` (compared in constant time) and a `Host` of
  127.0.0.1 or localhost on our own port (anything else is a DNS-rebinding attempt). The body is
  the hook payload; the answer's body is what the command hook would print.

Every malformed, oversized or unauthenticated request gets a 4xx and one line in the error log;
nothing a request sends can crash the daemon, and a slow sender only ever holds its own thread
(socket timeouts). A call for another workspace is refused (409): the client then falls back to
the in-process path, and no other workspace's state is ever touched through this daemon.
"""

from __future__ import annotations

import hmac
import http.server
import json
import os
import socket
import socketserver
import struct
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from pathlib import Path

from vacant.hook import call as hookcall
from vacant.core.errlog import log_error
from vacant.core.locations import find_root
from vacant.core.trustenv import PEER_PID_ENV, scrub
from vacant.hook.client import CWD_ENV, proof
from vacant.daemon.scanner import WatchedScanner
from vacant.platforms.all_platforms import UnknownPlatform
from vacant.platforms.lean_registry import project_dir, project_env

MAX_BODY = 32 * 1024 * 1024  # a Read of a large file comes back whole in tool_response
MAX_HEADER = 256 * 1024
READ_TIMEOUT_S = 10.0
TOKEN_HEADER = "X-Vacant-Token"
OP_MARK = "@"  # a target naming one of the daemon's own requests (no platform name starts with it)


class Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class Core:
    """What both doors call: one hook call answered against this workspace's watched scanner."""

    def __init__(self, root: Path, scanner: WatchedScanner, secret: str | None = None) -> None:
        import secrets  # once per daemon

        self.secret_hex = secret or secrets.token_hex(32)
        self.secret = bytes.fromhex(self.secret_hex)
        self.root = Path(root).resolve()
        self.scanner = scanner
        self.last_request = time.monotonic()
        self.requests = 0
        self.refused = 0
        self.started = time.time()
        self.served = hookcall.Served(self.root, scanner, threading.Lock())

    def refuse(self, status: int, message: str, door: str) -> Refused:
        self.refused += 1
        log_error(self.root, f"vacant daemon ({door}): refused with {status}: {message}")
        return Refused(status, message)

    def answering(self, platform_name: str, raw: bytes, env: dict[str, str]) -> AbstractContextManager[tuple[str, int]]:
        """The answer to one hook call, to be sent inside the `with` (vacant.hook.call.serving: the
        call's remaining work, saving the run state, runs after it, so the agent does not wait)."""
        self.last_request = time.monotonic()
        self.requests += 1
        client_cwd = env.get(CWD_ENV)  # platforms that find the workspace from the hook's cwd (Codex)
        if client_cwd and not project_dir(platform_name, env) and find_root(Path(client_cwd)).resolve() != self.root:
            raise Refused(409, f"the hook ran in {client_cwd}, another workspace's directory")
        return _refusing(hookcall.serving(platform_name, raw, env, self.served))

    def status(self) -> dict[str, object]:
        from vacant.daemon.watcher import max_user_watches, watch_count  # cheap; status only

        watcher = self.scanner.watcher
        return {"pid": os.getpid(), "root": str(self.root), "started": self.started,
                "requests": self.requests, "refused": self.refused,
                "idle_s": round(time.monotonic() - self.last_request, 1),
                "watching": watcher.alive, "events": watcher.events,
                "watches": watch_count(), "max_user_watches": max_user_watches(),
                "scans": dict(self.scanner.scans), "last_rescan": self.scanner.last_rescan,
                "rss_kb": _rss_kb()}


@contextmanager
def _refusing(answer: AbstractContextManager[tuple[str, int]]) -> Iterator[tuple[str, int]]:
    """A payload the daemon cannot read, or a call for another workspace, as a refusal (the lean
    client then answers in-process)."""
    with ExitStack() as stack:
        try:
            entered = stack.enter_context(answer)
        except UnknownPlatform as error:
            raise Refused(404, str(error)) from None
        except hookcall.Foreign as error:
            raise Refused(409, str(error)) from None
        except (ValueError, TypeError, AttributeError) as error:
            if hookcall.decided_read(error):  # recording failed on a READ call, not the payload
                raise
            raise Refused(400, f"malformed payload: {type(error).__name__}: {error}") from None
        yield entered


def _rss_kb() -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


# -- the unix socket ----------------------------------------------------------------------------


class _UnixHandler(socketserver.StreamRequestHandler):
    timeout = READ_TIMEOUT_S
    server: "UnixServer"

    def handle(self) -> None:
        core = self.server.core
        self.nonce = b""
        try:
            self._check_peer()
            target, env, raw = self._request()
        except Refused as refusal:
            core.refuse(refusal.status, str(refusal), "socket")
            self._answer(refusal.status, 0, b"")
            return
        except (OSError, socket.timeout) as error:
            core.refuse(408, f"{type(error).__name__}: {error}", "socket")
            return
        except ValueError as error:  # the request line or header itself, never what answering it raised
            core.refuse(400, f"malformed request: {error}", "socket")
            self._answer(400, 0, b"")
            return
        if target.startswith(OP_MARK):
            self._op(target[len(OP_MARK):])
            return
        try:
            with core.answering(target, raw, env) as (stdout, code):
                self._answer(200, code, stdout.encode("utf-8", "surrogateescape"))
            return
        except Refused as refusal:
            core.refuse(refusal.status, str(refusal), "socket")
            status, code, body = refusal.status, 0, b""
        except Exception as error:  # noqa: BLE001 - a request never takes the daemon down
            log_error(core.root, f"vacant daemon (socket): {type(error).__name__}: {error}")
            status, code, body = 500, 0, b""
        self._answer(status, code, body)

    def _request(self) -> tuple[str, dict[str, str], bytes]:
        """(target, scrubbed environment, payload) of one request in the daemon's framing."""
        line = self.rfile.readline(1024)
        parts = line.split()
        if not line.startswith(b"H2 ") or len(parts) != 5 or not line.endswith(b"\n"):
            raise Refused(400, "not an H2 request line")
        self.nonce = parts[4][:64]
        target = parts[1].decode("ascii", "replace")
        env_length, length = int(parts[2]), int(parts[3])
        if not (0 <= env_length <= MAX_HEADER and 0 <= length <= MAX_BODY):
            raise Refused(413, f"request of {env_length} + {length} bytes is over the limits")
        envb, raw = self.rfile.read(env_length), self.rfile.read(length)
        if len(envb) != env_length or len(raw) != length:
            raise Refused(400, "request cut short")
        env = dict(item.split("=", 1) for item in envb.decode("utf-8", "surrogateescape").split("\0") if "=" in item)
        scrub(env)
        env[PEER_PID_ENV] = str(self.peer_pid)
        return target, env, raw

    def _op(self, op: str) -> None:
        """The daemon's own requests: its figures (`@status`, a JSON object) and its end (`@stop`)."""
        core = self.server.core
        if op == "status":
            self._answer(200, 0, json.dumps(core.status()).encode())
        elif op == "stop":
            self._answer(200, 0, b"")
            self.server.on_stop("asked to stop over the socket")
        else:
            core.refuse(400, f"unknown op {op!r}", "socket")
            self._answer(400, 0, b"")

    def _answer(self, status: int, code: int, body: bytes) -> None:
        head = f"{status} {code} {len(body)}".encode()
        mark = proof(self.server.core.secret, self.nonce, head, body)
        try:
            self.wfile.write(head + b" " + mark.encode() + b"\n" + body)
            self.wfile.flush()
        except OSError:
            pass

    def _check_peer(self) -> None:
        creds = self.request.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        self.peer_pid, uid, _gid = struct.unpack("3i", creds)
        if uid != os.getuid():
            raise Refused(403, f"peer uid {uid} is not the workspace owner's")


class UnixServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def __init__(self, path: str, core: Core, on_stop) -> None:
        self.core = core
        self.on_stop = on_stop
        Path(path).parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            os.unlink(path)  # stale: the caller holds the instance lock
        except FileNotFoundError:
            pass
        old = os.umask(0o177)  # the socket is born 0600: no window where another user could connect
        try:
            super().__init__(path, _UnixHandler)
        finally:
            os.umask(old)
        os.chmod(path, 0o600)


# -- HTTP on 127.0.0.1 --------------------------------------------------------------------------


class _HttpHandler(http.server.BaseHTTPRequestHandler):
    timeout = READ_TIMEOUT_S
    protocol_version = "HTTP/1.1"
    server: "HttpServer"

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - http.server's signature
        pass  # refusals go to the error log; accepted calls are in the step log

    def _send(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _refuse(self, status: int, message: str) -> None:
        self.server.core.refuse(status, message, "http")
        self.close_connection = True
        self._send(status, json.dumps({"error": message}).encode())

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self._refuse(405, "only POST /hook/<platform>")

    do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = do_GET

    def do_POST(self) -> None:  # noqa: N802
        try:
            platform, raw = self._admit()
        except Refused as refusal:
            self._refuse(refusal.status, str(refusal))
            return
        core = self.server.core
        try:
            with core.answering(platform, raw, project_env(platform, str(core.root))) as (stdout, _code):
                self._send(200, stdout.encode())
        except Refused as refusal:
            self._refuse(refusal.status, str(refusal))
        except Exception as error:  # noqa: BLE001 - fail open, like the command hook
            log_error(core.root, f"vacant daemon (http): {type(error).__name__}: {error}")
            self._send(200, b"")

    def _admit(self) -> tuple[str, bytes]:
        port = self.server.server_address[1]
        if self.headers.get("Host", "") not in (f"127.0.0.1:{port}", f"localhost:{port}"):
            raise Refused(403, f"foreign Host {self.headers.get('Host')!r}")
        token = self.headers.get(TOKEN_HEADER, "").encode()
        if not hmac.compare_digest(token, self.server.secret):
            raise Refused(401, f"missing or wrong {TOKEN_HEADER}")
        parts = self.path.split("/")
        if len(parts) != 3 or parts[1] != "hook" or not parts[2].isidentifier():
            raise Refused(404, f"no such endpoint {self.path[:200]!r}")
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            raise Refused(411, "Content-Length required") from None
        if not 0 <= length <= MAX_BODY:
            raise Refused(413, f"body of {length} bytes is over {MAX_BODY}")
        raw = self.rfile.read(length)
        if len(raw) != length:
            raise Refused(400, "body cut short")
        return parts[2], raw


class HttpServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int, secret: str, core: Core) -> None:
        self.core = core
        self.secret = secret.encode()
        super().__init__(("127.0.0.1", port), _HttpHandler)

    def handle_error(self, request, client_address) -> None:
        log_error(self.core.root, f"vacant daemon (http): a request from {client_address} failed")


def serve(server: socketserver.BaseServer, name: str) -> threading.Thread:
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 3600}, name=name, daemon=True)
    thread.start()
    return thread
