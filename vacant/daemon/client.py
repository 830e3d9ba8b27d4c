"""`vacant-hook-client PLATFORM`: the lean command hook. Forwards stdin to the workspace's daemon over
its unix socket and prints the answer; with no daemon it starts one (detached, not waited for)
and answers in-process exactly as `vacant-hook` does.

Its whole fast path costs the interpreter's start plus the C `_socket` module: the launcher
(vacant/vacant-hook-client.py) imports this file as a top-level module, without the `vacant`
package, and this module imports only builtins (`posix`, `sys`, `_socket`) at its top: not even
`os`, whose import costs about a millisecond. So it imports nothing from vacant; the pointer
lookup the daemon writes for it (pointer.py) is defined here. A test lists what the fast path
loads. Everything else (locating the state directory, starting a daemon, the in-process hook) is
imported only on the slow path. Trust: whatever goes wrong with the daemon (absent, stale,
timeout, refusal, garbage answer), the call is answered in-process, so the gate keeps failing
closed and the recorder keeps failing open exactly as without a daemon.

Pointers: `<TMPDIR or /tmp>/vacant-<uid>/roots/<fnv1a64 of the root's real path>` holds two
lines, the root and the socket path. The client trusts the directory only when it is a real
directory owned by the user with no group/other permissions, and the socket only when the user
owns it: anyone else could otherwise plant a "daemon" that allows every call. A missing or stale
pointer only costs the slow path.

Wire format (the compact protocol of server.py): `H1 <platform> <env bytes> <payload bytes>\\n`,
then env as `key=value` items joined by NUL, then the payload; the answer is
`<status> <exit code> <stdout bytes>\\n` and the stdout bytes. The client reads exactly that many
bytes: the daemon finishes the call's bookkeeping after sending them.
"""

import posix
import sys

import _socket

TOOL_TIMEOUT_S = 20.0  # well inside the 60 s hook timeout: a stuck daemon still leaves time to fall back
STOP_TIMEOUT_S = 560.0  # the Stop pipeline may replay for minutes (the hook's own budget is 570 s)
SESSION_START_WAIT_S = 10.0
CWD_ENV = "VACANT_CLIENT_CWD"
FORWARDED_ENV = ("CLAUDE", "CODEX", "OPENCODE", "VACANT", "HOME", "PWD")
FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
S_IFMT, S_IFDIR, S_IFSOCK = 0o170000, 0o040000, 0o140000


def environ() -> dict[str, str]:
    return {key.decode("utf-8", "surrogateescape"): value.decode("utf-8", "surrogateescape")
            for key, value in posix.environ.items()}


# -- pointers (the daemon writes them: pointer.py) -------------------------------------------


def fnv(data: bytes) -> str:
    value = FNV_OFFSET
    for byte in data:
        value = ((value ^ byte) * FNV_PRIME) & 0xFFFFFFFFFFFFFFFF
    return f"{value:016x}"


def base_dir() -> str:
    tmp = posix.environ.get(b"TMPDIR", b"").decode("utf-8", "surrogateescape") or "/tmp"
    return f"{tmp.rstrip('/') or ''}/vacant-{posix.getuid()}/roots"


def private(path: str, directory: bool) -> bool:
    """A directory (or socket) of this user's, closed to group and others."""
    try:
        st = posix.lstat(path)
    except OSError:
        return False
    kind = st.st_mode & S_IFMT
    return kind == (S_IFDIR if directory else S_IFSOCK) and st.st_uid == posix.getuid() and not st.st_mode & 0o077


def real_directory(path: str) -> str:
    """The directory's path with every symlink resolved (what the daemon keys its pointer by).
    Linux: the kernel's own answer through /proc. Elsewhere: the path as given (a pointer miss
    only costs the slow path)."""
    try:
        fd = posix.open(path, posix.O_RDONLY | posix.O_DIRECTORY)
    except (OSError, AttributeError):
        return path
    try:
        return posix.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return path
    finally:
        posix.close(fd)


def find(start: str, walk_up: bool) -> tuple[str, str] | None:
    """(root, socket) of a running daemon for `start` (or, walking up, for its nearest ancestor
    that has one); None when there is no trustworthy pointer."""
    base = base_dir()
    if not (private(base.rpartition("/")[0], True) and private(base, True)):
        return None
    directory = real_directory(start)
    while True:
        try:
            fd = posix.open(f"{base}/{fnv(directory.encode('utf-8', 'surrogateescape'))}", posix.O_RDONLY)
            try:
                root, sock = posix.read(fd, 1 << 14).decode("utf-8", "surrogateescape").split("\n")[:2]
            finally:
                posix.close(fd)
        except (OSError, ValueError):
            root = sock = ""
        if root == directory and private(sock, False):
            return root, sock
        parent = directory.rpartition("/")[0] or "/"
        if not walk_up or parent == directory:
            return None
        directory = parent


# -- the exchange ------------------------------------------------------------------------------


def _is_session_start(raw: bytes) -> bool:
    return b'"SessionStart"' in raw or b'"session.created"' in raw or b'"event": "start"' in raw


def _exchange(sock_path: str, platform: str, raw: bytes, env: dict[str, str]) -> tuple[str, int] | None:
    timeout = STOP_TIMEOUT_S if b'Stop"' in raw or "stop" in platform else TOOL_TIMEOUT_S
    env = {**env, CWD_ENV: posix.getcwd()}  # the daemon checks it is this directory's workspace
    envb = b"\0".join(f"{k}={v}".encode("utf-8", "surrogateescape") for k, v in env.items()
                      if k.startswith(FORWARDED_ENV) and "\0" not in k + v)
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        conn.settimeout(timeout)
        conn.connect(sock_path)
        conn.sendall(f"H1 {platform} {len(envb)} {len(raw)}\n".encode() + envb + raw)
        data = conn.recv(1 << 16)
        head, newline, body = data.partition(b"\n")
        while not newline and len(data) < 4096:
            chunk = conn.recv(1 << 16)
            if not chunk:
                return None
            data += chunk
            head, newline, body = data.partition(b"\n")
        status, code, length = (int(part) for part in head.split())
        while len(body) < length:
            chunk = conn.recv(1 << 16)
            if not chunk:
                break
            body += chunk
    finally:
        conn.close()
    if status != 200 or len(body) != length:
        return None
    return body.decode("utf-8", "surrogateescape"), code


NO_DAEMON = ("", -1)  # a sentinel: nobody listening (distinct from an answer or a failed one)


def _try(project: str | None, platform: str, raw: bytes, env: dict[str, str]):
    found = find(project or posix.getcwd(), walk_up=not project)
    if found is None:
        return NO_DAEMON
    try:
        return _exchange(found[1], platform, raw, env)
    except (ConnectionRefusedError, FileNotFoundError):
        return NO_DAEMON  # a stale pointer: its daemon died
    except (OSError, ValueError):
        return None


def ask_daemon(platform: str, raw: bytes, env: dict[str, str]) -> tuple[str, int] | None:
    """The daemon's answer, or None when it cannot give one (then the caller falls back).

    With none running (no pointer, or a stale one whose socket refuses), the call starts one and
    does not wait for it, except at session start: Claude's http hooks that follow have no
    fallback, so the session start waits (up to SESSION_START_WAIT_S) until the daemon answers."""
    project = env.get("CLAUDE_PROJECT_DIR")
    answer = _try(project, platform, raw, env)
    if answer is not NO_DAEMON:
        return answer
    if not _start_daemon(project) or not _is_session_start(raw):
        return None
    import time  # the slow path only

    deadline = time.monotonic() + SESSION_START_WAIT_S
    while time.monotonic() < deadline:
        time.sleep(0.02)
        answer = _try(project, platform, raw, env)
        if answer is not NO_DAEMON:
            return answer
    return None


def _start_daemon(project: str | None) -> bool:
    """The slow path: no daemon known for this workspace. Start one (detached)."""
    from pathlib import Path  # only when no daemon runs: the in-process fallback follows anyway

    from vacant.core.locations import find_root, state_dir
    from vacant.daemon.paths import spawn

    root = Path(project) if project else find_root(Path.cwd())
    if not state_dir(root).is_dir():
        return False  # not a vacant workspace: nothing to start
    spawn(root)
    return True


def main(argv: list[str] | None = None, package_root: str | None = None) -> int:
    """`package_root`: the directory holding the `vacant` package, given by the launcher, which
    imports this module on its own; the slow path then makes the package importable."""
    argv = sys.argv[1:] if argv is None else argv
    raw = sys.stdin.buffer.read()
    env = environ()
    if package_root is not None:
        _importable(package_root)
    answer = None
    if len(argv) == 1:
        try:
            answer = ask_daemon(argv[0], raw, env)
        except Exception:  # noqa: BLE001 - any client trouble: the in-process path answers
            answer = None
    if answer is None:
        from vacant import hook  # the fallback: only when the daemon could not answer

        return hook.main(argv, raw)
    stdout, code = answer
    if stdout:
        sys.stdout.write(stdout)
        sys.stdout.flush()
    return code


def _importable(package_root: str) -> None:
    """Put the package's root and the environment's site-packages on sys.path (the launcher runs
    with -I -S, so no site processing did). Paths only: nothing is imported here."""
    lib = "lib/python%d.%d/site-packages" % sys.version_info[:2]
    environment = sys.executable.rpartition("/")[0].rpartition("/")[0]
    found = [package_root] + [path for path in (f"{environment}/{lib}", f"{sys.prefix}/{lib}") if _is_dir(path)]
    sys.path[:0] = [path for path in found if path not in sys.path]


def _is_dir(path: str) -> bool:
    try:
        return posix.stat(path).st_mode & S_IFMT == S_IFDIR
    except OSError:
        return False


if __name__ == "__main__":
    sys.exit(main())
