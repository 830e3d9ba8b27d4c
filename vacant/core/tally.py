"""The record's tally: what the hook checks at every call so that a loss of the record is said at
the next hook, not only by a later `vacant doctor` (issue 41).

Without the wall (`vacant init --no-wall`, a platform vacant cannot wall) the agent's own commands
run as the person and can write vacant's state directory: reset the spent-approvals ledger (one
approval then pushes twice), edit a run's `run.json` (later steps go to another agent), remove a
flag with its ledger entry, delete a run. The tally is kept beside the ledgers' anchors, next to
the person's key (`~/.config/vacant/anchors/<workspace>.tally`), signed with that key (HMAC-SHA256
over its exact bytes), and holds what only vacant's own writes change:

- `ledgers`: each signed ledger's size as vacant last appended to it (a ledger only grows: a reset,
  a cut, an edit of another length is a difference);
- `runs`: every run directory vacant made, and whether its `run.json` carries a MAC (`run.json`
  itself is written as `{"mac": "<hmac of the rest>", ...}`: an edit without the key breaks it);
- `runs_mtime`: the `runs/` directory's modification time as vacant last saw it (a deleted run
  changes it; only then is the directory listed);
- `lost`: the losses already found, kept until the person accepts them (`vacant init` again), so
  that every later ACT call stays held.

`check` costs a read of the tally, two HMACs (stdlib sha256, not hashlib: the hot path), and one
`stat` per ledger and for `runs/`. What this detects, and what it only makes visible, is said in
docs/TRUST.md: the agent runs as the person and can read the key without the wall; with the key
and vacant's source in hand it can rewrite the record, the ledgers and the tally consistently.
Stdlib only (hot path).
"""

from __future__ import annotations

import os

from vacant.core import leanjson as json
from vacant.core.filelock import file_lock
from vacant.core.leanstd import contextmanager
from vacant.core.sha import sha256

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hook path
if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path
    from typing import Any

MAC_PREFIX = b'{"mac": "'
MAC_HEX = 64
KEY_BYTES = 32
LEDGERS = {"spent": "asks/spent.jsonl", "flags": "flags/ledger.jsonl"}  # name -> path in the state directory
TALLY_CAP = 1 << 20  # a tally is small; a bigger one is not vacant's
LOCK_TIMEOUT_S = 5.0  # a tally lock held longer is not vacant's: the call fails (closed, for an ACT call)


class NoKey(Exception):
    """The person's key cannot be read here (missing, more than one name, not a key)."""


# -- HMAC-SHA256 without hashlib (its import loads libcrypto: milliseconds of a hook process) ------


def mac(key: bytes, data: bytes) -> str:
    """HMAC-SHA256 (hex) of `data` under `key` (RFC 2104; the same as hmac.new(key, data, sha256))."""
    if len(key) > 64:
        key = sha256(key).digest()
    key = key.ljust(64, b"\0")
    inner = sha256(key.translate(_IPAD) + data).digest()
    return sha256(key.translate(_OPAD) + inner).hexdigest()


_IPAD = bytes(byte ^ 0x36 for byte in range(256))  # each key byte xor'ed, as a translation table
_OPAD = bytes(byte ^ 0x5C for byte in range(256))


_config_dirs: dict[tuple[str | None, str | None], str] = {}  # (XDG_CONFIG_HOME, HOME) -> vacant's config dir


def config_dir() -> str:
    """vacant.core.locations.user_config_dir as a str, found once per environment (a hook call
    asks for it twice, a daemon at every call)."""
    env = (os.environ.get("XDG_CONFIG_HOME"), os.environ.get("HOME"))
    found = _config_dirs.get(env)
    if found is None:
        from vacant.core.locations import user_config_dir

        found = _config_dirs[env] = os.fspath(user_config_dir())
    return found


def person_key() -> bytes:
    """The key as vacant.core.keys reads it (one name only, 32 bytes), without its imports."""
    path = f"{config_dir()}/key"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as error:
        raise NoKey(f"{path}: {error.strerror}") from None
    try:
        info = os.fstat(fd)
        data = os.read(fd, KEY_BYTES + 1)
    finally:
        os.close(fd)
    if info.st_nlink > 1 or len(data) != KEY_BYTES:
        raise NoKey(f"{path} is refused (more than one name, or not a vacant key)")
    return data


# -- a file sealed with a MAC at its head (run.json) ------------------------------------------


def sealed_json(obj: dict[str, Any], key: bytes) -> bytes:
    """`obj` as JSON with a leading "mac" field over the rest of the bytes."""
    body = json.dumps(obj).encode()
    if body == b"{}" or not body.startswith(b"{"):
        body = b'{"empty": true}'
    rest = b", " + body[1:]
    return MAC_PREFIX + mac(key, rest).encode() + b'"' + rest


def seal_holds(raw: bytes, key: bytes) -> bool:
    """Whether `raw` (a file written by sealed_json) still carries its MAC."""
    head = len(MAC_PREFIX)
    if not raw.startswith(MAC_PREFIX) or raw[head + MAC_HEX:head + MAC_HEX + 1] != b'"':
        return False
    return raw[head:head + MAC_HEX].decode("ascii", "replace") == mac(key, raw[head + MAC_HEX + 1:])


# -- the tally ------------------------------------------------------------------------------


_workspace_keys: dict[str, str] = {}  # a workspace's root -> its key (realpath and a hash: once per process)


def tally_path(root: Path | str) -> str:
    name = _workspace_keys.get(os.fspath(root))
    if name is None:
        from pathlib import Path  # already loaded with vacant.core.locations

        from vacant.core.locations import workspace_key

        name = _workspace_keys[os.fspath(root)] = workspace_key(Path(root))
    return f"{config_dir()}/anchors/{name}.tally"


def read(root: Path | str, key: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """(the tally, None), or (None, why it cannot be believed): gone, not vacant's, edited."""
    path = tally_path(root)
    try:
        raw = _small_file(path)
    except FileNotFoundError:
        return None, f"the record's tally {path} is gone (deleted since vacant last wrote it)"
    except OSError as error:
        return None, f"the record's tally {path} cannot be read ({error.strerror})"
    signature, _, body = raw.partition(b"\n")
    if signature.decode("ascii", "replace") != mac(key, body):
        return None, (f"the record's tally {path} was edited (its signature does not hold; "
                      "or the person's key was replaced since `vacant init` took it)")
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        return None, f"the record's tally {path} is not vacant's"
    return data, None


def write(root: Path | str, data: dict[str, Any], key: bytes) -> None:
    """Sign and replace the tally (temp then rename, in the anchors directory next to the key)."""
    path = tally_path(root)
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    body = json.dumps(data, sort_keys=True).encode()
    temp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, mac(key, body).encode() + b"\n" + body)
    finally:
        os.close(fd)
    os.replace(temp, path)


def take(root: Path | str, state: Path | str, key: bytes) -> dict[str, Any]:
    """The tally of the record as it is now (the person's own act: `vacant init` accepts it)."""
    runs = os.path.join(os.fspath(state), "runs")
    data = {"ledgers": {name: _size(os.path.join(os.fspath(state), rel)) for name, rel in LEDGERS.items()},
            "runs": {name: _sealed_now(os.path.join(runs, name), key) for name in _listed(runs)},
            "runs_mtime": _mtime(runs), "lost": []}
    write(root, data, key)
    return data


# -- the check at each hook call ------------------------------------------------------------


def check(root: Path | str, state: Path | str, key: bytes, run_name: str | None = None,
          run_raw: bytes | None = None) -> tuple[list[str], dict[str, Any] | None]:
    """(every loss of the record, the tally as it now stands): losses found now are added to the
    tally's `lost`, which keeps them until the person runs `vacant init`. `run_name`/`run_raw`:
    the current run's directory name and its run.json bytes as read (None: missing)."""
    with held(root):  # vacant's own writers append and note under it (a person's flag: outside the workspace lock)
        return _checked(root, state, key, run_name, run_raw)


def _checked(root: Path | str, state: Path | str, key: bytes, run_name: str | None,
             run_raw: bytes | None) -> tuple[list[str], dict[str, Any] | None]:
    data, why = read(root, key)
    if data is None:
        return [why or "the record's tally cannot be read"], None
    lost = [str(item) for item in data.get("lost") or []]
    found = _differences(state, data, key, run_name, run_raw)
    fresh = [item for item in found if item not in lost]
    if fresh:  # kept until the person accepts them; what is there now is what later calls compare with
        data = {**_now(state, data), "lost": lost + fresh}
        write(root, data, key)
    return lost + fresh, data


def _differences(state: Path | str, data: dict[str, Any], key: bytes, run_name: str | None,
                 run_raw: bytes | None) -> list[str]:
    return _ledger_losses(state, data) + _run_losses(state, data, key, run_name, run_raw)


def _now(state: Path | str, data: dict[str, Any]) -> dict[str, Any]:
    """The tally's expectations brought to the record as it is now (after its losses were noted)."""
    runs_dir = os.path.join(os.fspath(state), "runs")
    present = set(_listed(runs_dir))
    return {**data, "ledgers": {name: _size(os.path.join(os.fspath(state), rel)) for name, rel in LEDGERS.items()},
            "runs": {name: sealed for name, sealed in (data.get("runs") or {}).items() if name in present},
            "runs_mtime": _mtime(runs_dir)}


def _ledger_losses(state: Path | str, data: dict[str, Any]) -> list[str]:
    out = []
    for name, rel in LEDGERS.items():
        was = int((data.get("ledgers") or {}).get(name) or 0)
        now = _size(os.path.join(os.fspath(state), rel))
        if now != was:
            change = "cut or reset" if now < was else "written by something other than vacant"
            out.append(f"the {name} ledger ({rel}) was {change}: {was} bytes as vacant left it, {now} now")
    return out


def _run_losses(state: Path | str, data: dict[str, Any], key: bytes, run_name: str | None,
                run_raw: bytes | None) -> list[str]:
    runs_dir = os.path.join(os.fspath(state), "runs")
    runs = data.get("runs") or {}
    out = []
    if _mtime(runs_dir) != data.get("runs_mtime"):
        present = set(_listed(runs_dir))
        out += [f"the run {name} was deleted (runs/{name} is gone)" for name in runs if name not in present]
    if run_name in runs:
        if run_raw is None:
            out.append(f"runs/{run_name}/run.json is gone (deleted while the run went on)")
        elif runs[run_name] and not seal_holds(run_raw, key):
            out.append(f"runs/{run_name}/run.json was edited (its MAC does not hold): its steps and agents "
                       "are not what vacant wrote")
    return out


def note_runs(root: Path | str, state: Path | str, data: dict[str, Any], key: bytes,
              run_name: str | None = None) -> None:
    """After vacant's own write: the current run registered (its run.json sealed) and `runs/`'s
    modification time as it is now (written only when either changed)."""
    runs_dir = os.path.join(os.fspath(state), "runs")
    runs = dict(data.get("runs") or {})
    changed = False
    if run_name is not None and runs.get(run_name) is not True:
        runs[run_name], changed = True, True
    mtime = _mtime(runs_dir)
    if not changed and mtime == data.get("runs_mtime"):
        return
    with held(root):
        latest, _why = read(root, key)  # as it is now: a ledger appended during this call noted its size there
        if latest is not None:
            runs = {**(latest.get("runs") or {}), **({run_name: True} if run_name is not None else {})}
            write(root, {**latest, "runs": runs, "runs_mtime": _mtime(runs_dir)}, key)


def note_ledger(root: Path | str, state: Path | str, name: str) -> None:
    """After vacant appended to (or restarted) a ledger, under `held` with the append: its size as
    vacant left it."""
    try:
        key = person_key()
    except NoKey:
        return
    data, _why = read(root, key)
    if data is None:
        return  # no tally (an install before it, or one lost: that loss is said by check)
    ledgers = dict(data.get("ledgers") or {})
    ledgers[name] = _size(os.path.join(os.fspath(state), LEDGERS[name]))
    write(root, {**data, "ledgers": ledgers}, key)


@contextmanager
def held(root: Path | str) -> Iterator[None]:
    """The tally's lock (a file beside it): a check, and vacant's own append to a ledger with its
    note in the tally, each whole under it, so that a check never sees one without the other.
    Not reentrant: the holder calls nothing that takes it again."""
    path = f"{tally_path(root)}.lock"
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    with file_lock(path, LOCK_TIMEOUT_S):  # type: ignore[arg-type]  # a str path: os.open takes it
        yield


def _small_file(path: str) -> bytes:
    """A small file's bytes, at most TALLY_CAP (a read sized by fstat: no 1 MiB buffer per call)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.read(fd, min(os.fstat(fd).st_size + 1, TALLY_CAP))
    finally:
        os.close(fd)


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _mtime(path: str) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


def _listed(path: str) -> list[str]:
    try:
        return sorted(entry.name for entry in os.scandir(path) if entry.is_dir(follow_symlinks=False))
    except OSError:
        return []


def _sealed_now(run_dir: str, key: bytes) -> bool:
    """Whether the run's run.json carries a MAC, after sealing one that did not (a run from before
    the tally, accepted as it is by the person's `vacant init`)."""
    from vacant.core.atomic import atomic_write

    path = os.path.join(run_dir, "run.json")
    try:
        raw = _small_file(path)
        if seal_holds(raw, key):
            return True
        state = json.loads(raw)
    except (OSError, ValueError):
        return False
    if not isinstance(state, dict):
        return False
    state.pop("mac", None)
    atomic_write(path, sealed_json(state, key))
    return True


def accept(root: Path | str) -> None:
    """Take the tally of the record as it is now and mark the install watched (the person's own
    act: `vacant init`; what was lost before stays in the step logs' `record_lost` events)."""
    from pathlib import Path

    from vacant.core.locations import read_install, state_dir, write_install

    record = read_install(Path(root))
    if record is None:
        return
    with held(root):
        take(root, state_dir(Path(root)), person_key())
    if not record.get("tally"):
        record["tally"] = True
        write_install(Path(root), record)
