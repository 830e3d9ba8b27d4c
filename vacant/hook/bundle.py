"""The hot bundle: the compiled code of the modules a tool call answered in-process imports, in one
file the lean client loads them from (vacant/hook/lean.py `hot_bundle`).

Why: a call answered in-process (no daemon yet: a session's first calls, a daemon still starting)
imports about forty of vacant's modules, and the import system's own work per module (its finders
over the path, a pyc opened, checked and read) is a good part of that: from the bundle, each module
is one stat of its source, one `pread` and one `marshal.loads`, 2.8-3.7 ms less of each such call
here (measured in-process, paired; bench/README.md).

Never stale: each entry keeps its source's path, size and mtime (ns) as read before it was
compiled, and the client serves a module from the bundle only when its source still has them (the
pyc's own rule, with nanoseconds); any other module, and every module of a bundle whose index
cannot be read or is of another format or interpreter, goes through the usual import system. As in git's index (the racy-git rule), a source written within
RACY_S of the build is left out: a same-size rewrite in the same timestamp tick would otherwise
go unseen.

Where: beside the package's pycs (`vacant/__pycache__/`), inside vacant's installed package,
which the wall keeps read-only to every program the agent runs (vacant/core/wall.py): the bundle
is as trusted as the pycs the interpreter would load instead. Written whole (atomic_write) by
`vacant init` and by each daemon at its start when missing or stale; a package directory vacant
may not write (a system install) gets none, and the calls import as before.

Shape: an index, then each module's marshalled code. The file's first 8 bytes give the index's
length (little-endian); the index (marshal) is (FORMAT, the interpreter's pyc magic, {module:
(is_package, source path, size, mtime_ns, offset, length)}), offsets from the index's end; an
extension module (xxhash's, THIRD_PARTY) has offset -1 and no code: it is loaded from its own file,
found without a search of sys.path. Another package's module is served only from where the usual
import would find it (lean.HotModules._first_on_path). The
client checks the format and the magic before it serves any, and reads a module's code only when
it is imported (one pread): a call reads the code it runs, not the whole bundle.
"""

from __future__ import annotations

import marshal
import os
import sys
import time
from pathlib import Path
from typing import NamedTuple

from vacant.core.atomic import atomic_write
from vacant.platforms.lean_registry import MODULES as PLATFORM_MODULES

FORMAT = 2  # 2: another package's modules too (xxhash), an extension module's entry without code
THIRD_PARTY = ("xxhash", "xxhash.version", "xxhash._xxhash")
HEADER_BYTES = 8
RACY_S = 3.0
# what a tool call answered in-process imports (tests/unit/hook/test_hot_bundle.py holds every
# module a fallback Read, Write, Edit or Bash call of Claude imports to this list), and each
# platform's hook module with its package
HOT_MODULES: tuple[str, ...] = tuple(dict.fromkeys((
    "vacant", "vacant.hook", "vacant.hook.entry", "vacant.hook.call", "vacant.hook.paths",
    "vacant.core", "vacant.core.atomic", "vacant.core.calls", "vacant.core.children", "vacant.core.errlog",
    "vacant.core.events", "vacant.core.filelock", "vacant.core.githead", "vacant.core.globs",
    "vacant.core.installcheck", "vacant.core.lazyre", "vacant.core.leanjson", "vacant.core.leanstd",
    "vacant.core.locations", "vacant.core.platform_facts", "vacant.core.redact", "vacant.core.safeio", "vacant.core.seal", "vacant.core.tally",
    "vacant.core.secret_patterns", "vacant.core.sha", "vacant.core.trustenv", "vacant.core.wall",
    "vacant.platforms", "vacant.platforms.base", "vacant.platforms.dialect", "vacant.platforms.driver",
    "vacant.platforms.lean_registry",
    "vacant.policy", "vacant.policy.shipped", "vacant.policy.gate", "vacant.policy.gate.gate",
    "vacant.policy.gate.modes", "vacant.policy.gate.rules", "vacant.policy.gate.scope", "vacant.policy.gate.writes",
    # a shell command's gate
    "vacant.policy.gate.argv", "vacant.policy.gate.forms", "vacant.policy.gate.keyrefs",
    "vacant.policy.gate.recordguard", "vacant.policy.gate.shellscan", "vacant.policy.gate.shellwords",
    "vacant.record", "vacant.record.hookwatch", "vacant.record.losswatch", "vacant.record.recorder", "vacant.record.recovery",
    "vacant.store", "vacant.store.exclude", "vacant.store.hasher", "vacant.store.objects", "vacant.store.states",
    "vacant.store.steplog",
    # the hash of the store's content addresses: a Post that changed a file loads it (its extension
    # module is loaded from its own file; the bundle spares the search of sys.path for it)
    *THIRD_PARTY,
    *sorted({prefix for module in PLATFORM_MODULES.values()
             for prefix in (module.rpartition(".")[0], module) if prefix != "vacant.platforms"}),
)))


class Entry(NamedTuple):
    """One module as the bundle holds it: its source as read before it was compiled, and its code
    (None: an extension module, loaded from its own file)."""

    is_package: bool
    source: str
    size: int
    mtime_ns: int
    code: bytes | None


def package_root() -> Path:
    """The directory holding the `vacant` package this module belongs to."""
    return Path(__file__).resolve().parents[2]


def bundle_path(root: Path) -> Path:
    """Where the client looks for it (lean.bundle_file says the same: a test holds them equal)."""
    return root / "vacant" / "__pycache__" / f"vacant-hot.{sys.implementation.cache_tag}.bundle"


def source_of(root: Path, module: str) -> tuple[Path, bool] | None:
    """A module's source under `root` and whether it is a package; None when it has none."""
    base = root.joinpath(*module.split("."))
    for path, is_package in ((base.with_suffix(".py"), False), (base / "__init__.py", True)):
        if path.is_file():
            return path, is_package
    return None


def locate(root: Path, module: str) -> tuple[Path, bool, bool] | None:
    """(its file, a package, an extension module) for one of `modules`: vacant's under `root`,
    another's (THIRD_PARTY) where this interpreter imports it from; None when it has no file."""
    if module == "vacant" or module.startswith("vacant."):
        found = source_of(root, module)
        return (found[0], found[1], False) if found else None
    import importlib.util
    from importlib.machinery import EXTENSION_SUFFIXES

    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or not os.path.isfile(spec.origin):
        return None
    return Path(spec.origin), spec.submodule_search_locations is not None, spec.origin.endswith(tuple(EXTENSION_SUFFIXES))


def _entry(path: Path, is_package: bool, extension: bool, now: float) -> Entry | None:
    """The bundle's entry for one file: None when it is racy (written within RACY_S of `now`) or
    changed while it was compiled. An extension module's has no code (None): it is loaded from its
    file, and the bundle spares it only the search for it."""
    before = os.stat(path)
    if now - before.st_mtime < RACY_S:
        return None
    code = None
    if not extension:
        try:
            code = marshal.dumps(compile(path.read_bytes(), str(path), "exec", dont_inherit=True, optimize=0))
        except (SyntaxError, ValueError):
            return None  # its import raises the same from the source
    after = os.stat(path)
    if (after.st_size, after.st_mtime_ns) != (before.st_size, before.st_mtime_ns):
        return None
    return Entry(is_package, str(path), before.st_size, before.st_mtime_ns, code)


def pack(built: dict[str, Entry]) -> bytes:
    """The bundle's bytes for `built`; an extension module (code None) has the offset -1."""
    index: dict[str, tuple[bool, str, int, int, int, int]] = {}
    offset = 0
    for module, (is_package, source, size, mtime_ns, code) in built.items():
        index[module] = (is_package, source, size, mtime_ns, -1 if code is None else offset, len(code or b""))
        offset += len(code or b"")
    packed = marshal.dumps((FORMAT, _magic(), index))
    codes = b"".join(entry.code or b"" for entry in built.values())
    return len(packed).to_bytes(HEADER_BYTES, "little") + packed + codes


def entries(root: Path, modules: tuple[str, ...] = HOT_MODULES, now: float | None = None) -> dict[str, Entry]:
    """The entries of `modules`: those with a file that is not racy at `now`."""
    now = time.time() if now is None else now
    built: dict[str, Entry] = {}
    for module in modules:
        found = locate(root, module)
        if found is None:
            continue
        entry = _entry(*found, now)
        if entry is not None:
            built[module] = entry
    return built


def _magic() -> bytes:
    from importlib.util import MAGIC_NUMBER

    return MAGIC_NUMBER


def read(path: Path) -> dict[str, Entry] | None:
    """The bundle's entries, None when it is
    missing, unreadable, cut short or of another format or interpreter."""
    try:
        data = path.read_bytes()
        length = int.from_bytes(data[:HEADER_BYTES], "little")
        held = marshal.loads(data[HEADER_BYTES:HEADER_BYTES + length])
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if not (isinstance(held, tuple) and len(held) == 3 and held[0] == FORMAT and held[1] == _magic()
            and isinstance(held[2], dict)):
        return None
    base = HEADER_BYTES + length
    built: dict[str, Entry] = {}
    for module, (is_package, source, size, mtime_ns, offset, count) in held[2].items():
        code = None if offset < 0 else data[base + offset:base + offset + count]
        if code is not None and len(code) != count:
            return None
        built[module] = Entry(is_package, source, size, mtime_ns, code)
    return built


def current(entry: Entry) -> bool:
    """The entry's source still has the size and mtime it was compiled at."""
    try:
        status = os.stat(entry.source)
    except OSError:
        return False
    return (status.st_size, status.st_mtime_ns) == (entry.size, entry.mtime_ns)


def fresh(root: Path, modules: tuple[str, ...] = HOT_MODULES) -> bool:
    """The bundle serves every module of `modules` that has a source."""
    held = read(bundle_path(root))
    if held is None:
        return False
    return all(module in held and current(held[module]) for module in modules if locate(root, module))


def build(root: Path | None = None, modules: tuple[str, ...] = HOT_MODULES, now: float | None = None) -> Path:
    """Write the bundle for the package under `root` (this one by default); OSError when its
    directory cannot be written. `now`: the time racy sources are told by (the clock's)."""
    root = package_root() if root is None else root
    path = bundle_path(root)
    path.parent.mkdir(exist_ok=True)
    atomic_write(path, pack(entries(root, modules, now)), mode=0o644)
    return path


def ensure(root: Path | None = None) -> Path | None:
    """Build the bundle unless it is fresh; None when it was fresh or could not be written (the
    calls then import as before: slower, never wrong)."""
    root = package_root() if root is None else root
    if fresh(root):
        return None
    try:
        return build(root)
    except OSError:
        return None
