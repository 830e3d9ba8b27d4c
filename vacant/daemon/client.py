"""`vacant-hook-client PLATFORM`: the lean command hook. Forwards stdin to the workspace's daemon over
its unix socket and prints the answer; with no daemon it starts one (detached, not waited for)
and answers in-process exactly as `vacant-hook` does.

Its whole fast path costs the interpreter's start plus three small C modules (`_socket`,
`_blake2`, `_sha256`): the launcher (vacant/vacant-hook-client.py) imports this file as a top-level
module, without the `vacant` package, and this module imports only builtins and those at its top:
not even `os`, whose import costs about a millisecond. So it imports nothing from vacant; the
state-directory lookup it needs is written out here (a test holds it equal to
vacant.core.locations for every layout). A test lists what the fast path loads.

Trust: whatever goes wrong with the daemon (absent, stale, slow, frozen, refusal, garbage, an
impostor), the call is answered in-process, within the same whole-call deadline, so the gate keeps
failing closed and the recorder keeps failing open exactly as without a daemon:

- the deadline: a tool call gets `TOOL_CEILING_S` in all (or a shorter `VACANT_HOOK_BUDGET_S`),
  below the 60 s every platform gives a tool hook (the timeout `vacant init` writes for Claude
  and Codex, the OpenCode plugin's own); the daemon gets at most half of it, the in-process
  fallback the rest (vacant.hook.main denies a pre-tool call it cannot decide in time).
- the daemon is found only through the pointer *inside the workspace's state directory*
  (`<state>/daemon/socket`: root, socket path, the daemon's secret; 0600), never through anything
  in the temp directory, and trusted only when its answer carries the proof: a keyed BLAKE2b over
  the client's fresh nonce and the answer, under the secret the daemon wrote there. A socket that
  answers without it (a fake daemon bound where the socket was) gets no trust: errors.log says so.
- the environment forwarded is only what the daemon needs and may trust (vacant/core/trustenv.py).

Wire format (server.py): `H2 <platform> <env bytes> <payload bytes> <nonce hex>\\n`, then env as
`key=value` items joined by NUL, then the payload; the answer is `<status> <exit code> <stdout
bytes> <proof hex>\\n` and the stdout bytes. The client reads exactly that many bytes: the daemon
finishes the call's bookkeeping after sending them.
"""

import posix
import sys
import time

import _socket

TOOL_CEILING_S = 40.0  # the whole call, daemon and fallback: well below the platforms' 60 s
STOP_CEILING_S = 570.0  # below the 600 s Stop timeout `vacant init` writes
TOOL_TIMEOUT_S = 20.0  # the daemon's share of a tool call (at most half the whole deadline)
STOP_TIMEOUT_S = 560.0  # the Stop pipeline may replay for minutes
SESSION_START_WAIT_S = 10.0
CWD_ENV = "VACANT_CLIENT_CWD"
BUDGET_ENV = "VACANT_HOOK_BUDGET_S"
# what the daemon may use of the hook's environment (the daemon scrubs it again: trustenv.scrub)
FORWARDED_PREFIXES = ("CLAUDE", "CODEX", "OPENCODE")
FORWARDED_NAMES = ("HOME", "PWD", "XDG_DATA_HOME", "VACANT_HOME", "VACANT_DO", BUDGET_ENV, CWD_ENV)
MAX_FORWARDED_VALUE = 16 * 1024
PROOF_BYTES = 16
S_IFMT, S_IFDIR, S_IFSOCK, S_IFREG = 0o170000, 0o040000, 0o140000, 0o100000
POINTER = "daemon/socket"


def environ() -> dict[str, str]:
    return {key.decode("utf-8", "surrogateescape"): value.decode("utf-8", "surrogateescape")
            for key, value in posix.environ.items()}


def ceiling(raw: bytes, platform: str) -> float:
    return STOP_CEILING_S if _is_stop(raw, platform) else TOOL_CEILING_S


def budget(env: dict[str, str], top: float) -> float:
    """`top`, or the shorter deadline VACANT_HOOK_BUDGET_S asks for (never a longer one)."""
    try:
        asked = float(env.get(BUDGET_ENV, ""))
    except ValueError:
        return top
    return min(top, asked) if asked == asked and asked > 0 else top


def _is_stop(raw: bytes, platform: str) -> bool:
    return b'Stop"' in raw or b'"session.idle"' in raw or "stop" in platform


# -- where the daemon is: only inside the state directory ----------------------------------------


def private(path: str, kind: int) -> bool:
    """A file of `kind` of this user's, closed to group and others."""
    try:
        st = posix.lstat(path)
    except OSError:
        return False
    return st.st_mode & S_IFMT == kind and st.st_uid == posix.getuid() and not st.st_mode & 0o077


def real_directory(path: str) -> str:
    """The directory's path with every symlink resolved (the kernel's own answer through /proc;
    elsewhere the path as given: a miss only costs the slow path)."""
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


def _env(name: str) -> str:
    return posix.environ.get(name.encode(), b"").decode("utf-8", "surrogateescape")


def data_dir() -> str:
    """vacant.core.locations.user_data_dir, without the package."""
    if _env("VACANT_HOME"):
        return _env("VACANT_HOME")
    base = _env("XDG_DATA_HOME") or f"{_env('HOME') or '/'}/.local/share"
    return f"{base}/vacant"


def _sha256_hex(data: bytes) -> str:
    try:
        import _sha256 as module  # Python <= 3.11
    except ImportError:
        import _sha2 as module  # 3.12+
    return module.sha256(data).hexdigest()


def external_state(directory: str) -> str:
    """vacant.core.locations.external_state_dir for a real path."""
    name = directory.rpartition("/")[2] or "root"
    safe = "".join(c if c.isascii() and (c.isalnum() or c in "._-") else "_" for c in name)[:40]
    return f"{data_dir()}/workspaces/{_sha256_hex(directory.encode('utf-8', 'surrogateescape'))[:16]}-{safe}"


def git_state(directory: str) -> str | None:
    """`<git dir>/vacant` when `directory` is a git top level (`.git` a directory or a gitdir file)."""
    dot = f"{directory}/.git"
    try:
        kind = posix.stat(dot).st_mode & S_IFMT
    except OSError:
        return None
    if kind == S_IFDIR:
        return f"{dot}/vacant"
    if kind != S_IFREG:
        return None
    try:
        fd = posix.open(dot, posix.O_RDONLY)
        try:
            text = posix.read(fd, 4096).decode("utf-8", "replace").strip()
        finally:
            posix.close(fd)
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    target = text[len("gitdir:"):].strip()
    return f"{target if target.startswith('/') else f'{directory}/{target}'}/vacant"


def state_candidates(directory: str):
    """Where `directory`'s state directory may be, most likely first (the slow path knows for
    sure); lazily, so a git workspace never hashes its path."""
    git = git_state(directory)
    if git:
        yield git
    yield external_state(directory)
    yield f"{directory}/.vacant"


def read_pointer(state: str, directory: str) -> tuple[str, bytes] | None:
    """(socket, secret) from `<state>/daemon/socket` when it is a private file naming `directory`."""
    path = f"{state}/{POINTER}"
    if not private(path, S_IFREG):
        return None
    try:
        fd = posix.open(path, posix.O_RDONLY)
        try:
            lines = posix.read(fd, 1 << 14).decode("utf-8", "surrogateescape").split("\n")
        finally:
            posix.close(fd)
        root, sock, secret = lines[:3]
        key = bytes.fromhex(secret)
    except (OSError, ValueError):
        return None
    if root != directory or len(key) < 16 or not private(sock, S_IFSOCK):
        return None
    return sock, key


def find(start: str, walk_up: bool) -> tuple[str, str, bytes] | None:
    """(root, socket, secret) of the daemon named in the state directory of `start` (or, walking
    up, of its nearest ancestor that has one); None when none is found on the fast path."""
    directory = real_directory(start)
    while True:
        for state in state_candidates(directory):
            found = read_pointer(state, directory)
            if found is not None:
                return directory, found[0], found[1]
        parent = directory.rpartition("/")[0] or "/"
        if not walk_up or parent == directory:
            return None
        directory = parent


# -- the exchange ------------------------------------------------------------------------------


class Impostor(Exception):
    """A socket named in the state directory answered without the daemon's proof."""


def proof(secret: bytes, nonce: bytes, head: bytes, body: bytes) -> str:
    import _blake2

    return _blake2.blake2b(nonce + head + b"\n" + body, key=secret, digest_size=PROOF_BYTES).hexdigest()


def _is_session_start(raw: bytes) -> bool:
    return b'"SessionStart"' in raw or b'"session.created"' in raw or b'"event": "start"' in raw


def forwarded(env: dict[str, str]) -> bytes:
    return b"\0".join(f"{k}={v}".encode("utf-8", "surrogateescape") for k, v in env.items()
                      if (k.startswith(FORWARDED_PREFIXES) or k in FORWARDED_NAMES)
                      and "\0" not in k + v and len(v) <= MAX_FORWARDED_VALUE)


def _exchange(found: tuple[str, str, bytes], platform: str, raw: bytes, env: dict[str, str],
              timeout: float) -> tuple[str, int] | None:
    _root, sock_path, secret = found
    env = {**env, CWD_ENV: posix.getcwd()}  # the daemon checks it is this directory's workspace
    envb = forwarded(env)
    nonce = posix.urandom(16).hex().encode()
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        conn.settimeout(timeout)
        conn.connect(sock_path)
        conn.sendall(b"H2 %s %d %d %s\n" % (platform.encode(), len(envb), len(raw), nonce) + envb + raw)
        data = conn.recv(1 << 16)
        head, newline, body = data.partition(b"\n")
        while not newline and len(data) < 4096:
            chunk = conn.recv(1 << 16)
            if not chunk:
                return None
            data += chunk
            head, newline, body = data.partition(b"\n")
        status, code, length, mac = head.split()
        status, code, length = int(status), int(code), int(length)
        while len(body) < length:
            chunk = conn.recv(1 << 16)
            if not chunk:
                break
            body += chunk
    finally:
        conn.close()
    if mac.decode("ascii", "replace") != proof(secret, nonce, head.rpartition(b" ")[0], body):
        raise Impostor(sock_path)
    if status != 200 or len(body) != length:
        return None
    return body.decode("utf-8", "surrogateescape"), code


NO_DAEMON = ("", -1)  # a sentinel: nobody listening (distinct from an answer or a failed one)


def _try(project: str | None, platform: str, raw: bytes, env: dict[str, str], timeout: float):
    found = find(project or posix.getcwd(), walk_up=not project) or _find_slow(project)
    if found is None:
        return NO_DAEMON
    try:
        return _exchange(found, platform, raw, env, timeout)
    except (ConnectionRefusedError, FileNotFoundError):
        return NO_DAEMON  # a stale pointer: its daemon died
    except Impostor:
        raise
    except (OSError, ValueError):
        return None


def _find_slow(project: str | None) -> tuple[str, str, bytes] | None:
    """The state directory the package knows (the registry's, a workspace installed before `git
    init`): only when the fast lookup missed."""
    from pathlib import Path

    from vacant.core.locations import find_root, state_dir

    root = Path(project) if project else find_root(Path.cwd())
    directory = real_directory(str(root))
    found = read_pointer(str(state_dir(root)), directory)
    return (directory, found[0], found[1]) if found else None


def ask_daemon(platform: str, raw: bytes, env: dict[str, str], deadline: float) -> tuple[str, int] | None:
    """The daemon's answer, or None when it cannot give one (then the caller falls back).

    With none running (no pointer, or a stale one whose socket refuses), the call starts one and
    does not wait for it, except at session start: Claude's http hooks that follow have no
    fallback, so the session start waits (up to SESSION_START_WAIT_S) until the daemon answers.
    The daemon gets at most half of what is left of the deadline: the fallback needs the rest."""
    project = env.get("CLAUDE_PROJECT_DIR")
    share = min(STOP_TIMEOUT_S if _is_stop(raw, platform) else TOOL_TIMEOUT_S,
                (deadline - time.monotonic()) / 2)
    if share <= 0.05:
        return None
    answer = _try(project, platform, raw, env, share)
    if answer is not NO_DAEMON:
        return answer
    if not _start_daemon(project) or not _is_session_start(raw):
        return None
    wait_until = min(time.monotonic() + SESSION_START_WAIT_S, time.monotonic() + share)
    while time.monotonic() < wait_until:
        time.sleep(0.02)
        answer = _try(project, platform, raw, env, max(0.05, wait_until - time.monotonic()))
        if answer is not NO_DAEMON:
            return answer
    return None


def _start_daemon(project: str | None) -> bool:
    """The slow path: no daemon known for this workspace. Start one (detached)."""
    from pathlib import Path  # only when no daemon runs: the in-process fallback follows anyway

    from vacant.core.locations import find_root, installed
    from vacant.daemon.paths import spawn

    root = Path(project) if project else find_root(Path.cwd())
    if not installed(root):
        return False  # not a vacant workspace (or a broken one: the fallback says so): nothing to start
    spawn(root)
    return True


def _say_impostor(project: str | None, sock_path: str) -> None:
    from pathlib import Path

    from vacant.core.errlog import log_error

    log_error(Path(project) if project else None,
              f"vacant-hook-client: the socket {sock_path} named in the state directory answered without the "
              "daemon's proof of identity (an impostor listening there?): it was given no trust, and this call "
              "was answered in-process")


def main(argv: list[str] | None = None, package_root: str | None = None) -> int:
    """`package_root`: the directory holding the `vacant` package, given by the launcher, which
    imports this module on its own; the slow path then makes the package importable. Nothing
    escapes: whatever fails, the in-process hook answers, and if even that cannot start, a
    pre-tool call is denied (`last_resort`)."""
    started = time.monotonic()
    raw, argv = b"", sys.argv[1:] if argv is None else argv
    try:
        raw = sys.stdin.buffer.read()
        env = environ()
        platform = argv[0] if argv else ""
        deadline = started + budget(env, ceiling(raw, platform))
        if package_root is not None:
            _importable(package_root)
        answer = None
        if len(argv) == 1:
            try:
                answer = ask_daemon(platform, raw, env, deadline)
            except Impostor as impostor:
                _say_impostor(env.get("CLAUDE_PROJECT_DIR"), str(impostor))
            except Exception:  # noqa: BLE001 - any client trouble: the in-process path answers
                answer = None
        if answer is None:
            from vacant import hook  # the fallback: only when the daemon could not answer

            return hook.main(argv, raw, deadline=deadline)
        stdout, code = answer
        if stdout:
            sys.stdout.write(stdout)
            sys.stdout.flush()
        return code
    except BaseException as error:  # noqa: BLE001 - the last line: never an exit that lets a tool run
        return last_resort(raw, error)


DENY_LAST = ("Not run: vacant's hook could not start ({error}), so it cannot tell whether this call acts beyond "
             "the work. Nothing has been done. This is vacant's own error, not yours: tell the person "
             "(`vacant doctor` says what is wrong).")


def last_resort(raw: bytes, error: BaseException) -> int:
    """No part of vacant could answer: a call that names a pre-tool event is denied in the shape
    every platform reads (Claude/Codex hookSpecificOutput, the OpenCode plugin's action); any other
    call gets nothing (the recorder fails open)."""
    if not isinstance(error, KeyboardInterrupt) and (b"PreToolUse" in raw or b"tool.execute.before" in raw):
        reason = DENY_LAST.format(error=type(error).__name__).replace('"', "'")
        sys.stdout.write('{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", '
                         f'"permissionDecisionReason": "{reason}"}}, "action": "deny", "reason": "{reason}"}}')
        sys.stdout.flush()
    return 0


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
