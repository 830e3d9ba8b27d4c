"""The hook path's import-time tricks, in one room, switched on once: by the lean client's slow
path (vacant/hook/client.py `slow_imports`), before the in-process answer imports the package.
Like Mercurial's hgdemandimport: the rest of the code imports as it would anywhere.

Loaded as a top-level module from its own directory (as the launcher loads the client, and the
last resort the deny table): it imports builtins only at its top.

Switched on here, and why (each measured on a call answered in-process, bench/bench_fallback.py
and bench/README.md):
- pathlib without its rare modules (`lean_pathlib`): pathlib imports at its top urllib.parse,
  fnmatch, re, ntpath, warnings, functools and operator (and through functools collections),
  more than half of an in-process answer's imports, for methods a hook call never uses.
- the hot bundle (`hot_bundle`, written by vacant/hook/bundle.py): vacant's hot modules from one
  file, one stat, one pread and one marshal.loads each: 2.8-3.7 ms less of each such call.

Switched on at the doors themselves, because they must come before anything is imported:
- `python -I -S` on the launcher (vacant/vacant-hook-client.py): no site processing, about 15 ms
  of every call; the client puts the package and site-packages on sys.path itself (`_importable`).
- the collector off for a tool call's process (client.main `gc.disable`, on again for a Stop:
  vacant/hook/entry.py): 1-2 ms of each call answered in-process.
- leaving by `os._exit` after a tool call (the launcher): 10-20 ms of module teardown.

Kept where they are, each saving at least 0.5 ms of a hook call, and saying so where it lives:
they are used by modules below the hook path (core, store, policy), which must not import this
package:
- vacant/core/leanjson.py: `json.loads`/`dumps` through `_json`; `import json` loads re, enum,
  functools and collections: 12-16 ms CPU of each call answered in-process at load 18 (none on a
  shell call's Pre, which loads re for shlex anyway).
- vacant/core/leanstd.py: namedtuple, contextmanager, ExitStack, a bounded cache without
  collections, functools and contextlib: about 5 ms of every call answered in-process.
- vacant/core/lazyre.py: patterns compiled on first use, and `re` imported then: about 30 ms of
  a Read call that compiles none of the gate's patterns, 4 ms for `re` and its enum.
- `TYPE_CHECKING = False` in place of `typing.TYPE_CHECKING` in the hot modules: importing typing
  costs about 3-5 ms of each call on an unloaded machine, 15-21 ms CPU at load 18; a test
  (tests/unit/hook/test_entry.py) keeps typing off the hook path.

Where they are (audited 2026-12-07 against what Claude's Read, Write, Edit and Bash calls, a
gated `git push` and a WebFetch import when answered in-process): `TYPE_CHECKING = False` in 25
modules and `leanjson as json` in 17, each imported by such a call (vacant/core/ledger.py by a
gated ACT call only), so each is kept, with a comment naming its saving; but for two that no
hook call imports, vacant/platforms/settings_file.py (install) and claude_transcript.py (read at
Stop), whose `leanjson` is to become `import json` with the platforms' strict pass. The
savings were measured by bench/bench_fallback.py --against a copy of the tree with `from typing
import TYPE_CHECKING` (resp. `import json`) in their place, interleaved in one run (bench/
README.md). Below the hook path nothing needs them: a module no hook call imports imports
normally.
"""

import posix
import sys

# pathlib imports at its top modules it uses only in rare methods: urllib.parse (for `Path.as_uri`
# alone; it builds a dozen namedtuples and imports ipaddress), fnmatch and re (for `match` and
# `glob`), ntpath (Windows paths), warnings (two deprecated methods), functools (to cache `glob`'s
# selectors) and operator (the `drive` and `root` properties), and through functools collections:
# together more than half of an in-process answer's imports (bench/bench_fallback.py), which makes
# no URI, matches no glob and warns of nothing (vacant's own patterns are compiled on first use:
# vacant/core/lazyre.py). So the slow path imports pathlib with stand-ins for them that import
# the real module on first use: pathlib behaves exactly as ever, and any other importer gets the
# real module (a stand-in is in sys.modules only while pathlib itself is imported).


def _lazy_lru_cache(*args: object, **kwargs: object) -> object:
    """functools.lru_cache(…), whose cache is made (and functools imported) at the first call."""
    def decorate(func):  # type: ignore[no-untyped-def]
        cached = None

        def call(*call_args, **call_kwargs):  # type: ignore[no-untyped-def]
            nonlocal cached
            if cached is None:
                cached = _real_module("functools").lru_cache(*args, **kwargs)(func)  # type: ignore[attr-defined]
            return cached(*call_args, **call_kwargs)
        call.__name__ = call.__qualname__ = getattr(func, "__name__", "cached")
        return call
    return decorate


def _lazy_attrgetter(*names: str) -> object:
    """operator.attrgetter(*names), made (and operator imported) at the first call."""
    getter = None

    def get(obj):  # type: ignore[no-untyped-def]
        nonlocal getter
        if getter is None:
            getter = _real_module("operator").attrgetter(*names)  # type: ignore[attr-defined]
        return getter(obj)
    return get


# module: {name pathlib takes at import: what stands in for it}; any other attribute is the real
# module's, imported then.
DEFERRED_BY_PATHLIB: dict[str, dict[str, object]] = {
    "urllib.parse": {"quote_from_bytes": None},  # None: a function calling the real one
    "fnmatch": {}, "re": {}, "ntpath": {}, "warnings": {},
    "functools": {"lru_cache": _lazy_lru_cache}, "operator": {"attrgetter": _lazy_attrgetter},
}


class _Deferred:
    """A module's stand-in: a name pathlib takes at import (`from urllib.parse import …`) is a
    function that calls the real one (or its lazy stand-in); any other attribute is the real
    module's, imported then."""

    def __init__(self, name: str, functions: dict[str, object]) -> None:
        self._name, self._functions = name, functions

    def __getattr__(self, attr: str) -> object:
        if attr.startswith("__"):  # the import system's probes (__path__, __spec__): not a package, not loading
            raise AttributeError(attr)
        if attr in self._functions:
            return self._functions[attr] or _deferred_call(self._name, attr)
        return getattr(_real_module(self._name), attr)


def _real_module(name: str) -> object:
    if isinstance(sys.modules.get(name), _Deferred):
        del sys.modules[name]  # asked while pathlib is still being imported
    __import__(name)
    return sys.modules[name]


def _deferred_call(module: str, name: str) -> object:
    def call(*args: object, **kwargs: object) -> object:
        return getattr(_real_module(module), name)(*args, **kwargs)
    call.__name__ = call.__qualname__ = name
    return call


def lean_pathlib() -> None:
    """Import pathlib, if nothing has yet, without the modules it uses only in rare methods."""
    if "pathlib" in sys.modules:
        return
    stand_ins = {name: _Deferred(name, functions) for name, functions in DEFERRED_BY_PATHLIB.items()
                 if name not in sys.modules}
    modules: dict[str, object] = sys.modules  # type: ignore[assignment]  # a stand-in is not a module
    modules.update(stand_ins)
    try:
        import pathlib  # noqa: F401 - imported for its place in sys.modules
    finally:
        for name, stand_in in stand_ins.items():
            if modules.get(name) is stand_in:
                del modules[name]


# -- the hot bundle (vacant/hook/bundle.py) ----------------------------------------------------

BUNDLE_FORMAT = 2  # vacant.hook.bundle.FORMAT (a test holds them equal)
BUNDLE_MAX_INDEX = 1 << 20
_bundle_tried = False


def bundle_file(package_root: str) -> str:
    """vacant.hook.bundle.bundle_path, for the package under `package_root`."""
    return f"{package_root}/vacant/__pycache__/vacant-hot.{sys.implementation.cache_tag}.bundle"


def hot_bundle(package_root: str) -> bool:
    """Serve vacant's hot modules from the bundle beside the package's pycs: True when its index was
    read and is of this format and interpreter (tried once a process). Each module is then served
    only while its source is as compiled (`HotModules.find_spec`); any other goes through the
    usual import system, as does every module when the bundle is missing or unreadable."""
    global _bundle_tried
    if _bundle_tried:
        return False
    _bundle_tried = True
    if sys.flags.optimize:
        return False  # compiled without -O: its asserts and docstrings would differ
    try:
        fd = posix.open(bundle_file(package_root), posix.O_RDONLY | posix.O_CLOEXEC)
    except OSError:
        return False
    try:
        finder = HotModules.open(fd, f"{package_root}/vacant/")
    except Exception:  # noqa: BLE001 - a torn bundle, a foreign one: the usual imports
        finder = None
    if finder is None:
        posix.close(fd)
        return False
    sys.meta_path.insert(0, finder)  # its fd stays open: each module's code is read when imported
    return True


class HotModules:
    """Finder and loader of the bundle's modules (a meta path entry, before the path finder)."""

    HEADER_BYTES = 8  # vacant.hook.bundle.HEADER_BYTES

    def __init__(self, fd: int, index: "dict[str, tuple[bool, str, int, int, int, int]]", base: int, size: int,
                 prefix: str) -> None:
        self.fd, self.index, self.base, self.size, self.prefix = fd, index, base, size, prefix
        self.spec_type = sys.modules["_frozen_importlib"].ModuleSpec

    @classmethod
    def open(cls, fd: int, prefix: str) -> "HotModules | None":
        """The finder over the bundle open at `fd`; None when it is not one this client may serve."""
        size = posix.fstat(fd).st_size
        head = posix.read(fd, 1 << 16)
        length = int.from_bytes(head[:cls.HEADER_BYTES], "little")
        base = cls.HEADER_BYTES + length
        if base > size or length > BUNDLE_MAX_INDEX:
            return None
        if base > len(head):
            head += posix.pread(fd, base - len(head), len(head))
        import marshal

        held = marshal.loads(head[cls.HEADER_BYTES:base])
        magic = sys.modules["_frozen_importlib_external"].MAGIC_NUMBER
        if not (type(held) is tuple and len(held) == 3 and held[0] == BUNDLE_FORMAT and held[1] == magic
                and type(held[2]) is dict):
            return None
        return cls(fd, held[2], base, size, prefix)

    def find_spec(self, name: str, path=None, target=None):  # type: ignore[no-untyped-def]
        entry = self.index.get(name)
        if entry is None:
            return None
        try:
            is_package, origin, size, mtime_ns, offset, length = entry
            if self.base + offset + length > self.size:
                return None
            directory = origin.rpartition("/")[0]
            where = directory.rpartition("/")[0] if is_package else directory  # its parent's, or sys.path's, directory
            if path is not None and where not in path:
                return None  # the parent package's __path__ names another directory
            if not origin.startswith(self.prefix) and path is None and not self._first_on_path(name, where):
                return None  # another module of that name comes first on sys.path
            status = posix.stat(origin)
        except Exception:  # noqa: BLE001 - a malformed entry, a source gone: the usual import
            return None
        if status.st_size != size or status.st_mtime_ns != mtime_ns:
            return None  # the source changed since it was compiled: the usual import
        if offset < 0:  # an extension module (xxhash's): loaded from its own file, found without a search
            loader = sys.modules["_frozen_importlib_external"].ExtensionFileLoader(name, origin)
            return self.spec_type(name, loader, origin=origin)
        # no `has_location`: the import system would derive __cached__ from the origin (about 7 us a
        # module); exec_module sets __file__, which is all vacant's modules read of their place
        spec = self.spec_type(name, self, origin=origin, is_package=bool(is_package))
        if is_package:
            spec.submodule_search_locations = [directory]
        return spec

    @staticmethod
    def _first_on_path(name: str, directory: str) -> bool:
        """A top-level module outside vacant (xxhash) is served only from the directory the usual
        import would find it in: `directory` is on sys.path, and no entry before it holds `name`
        as a package, a source or an extension module."""
        if directory not in sys.path:
            return False
        import _imp

        forms = ("", ".py", *_imp.extension_suffixes())
        for entry in sys.path[:sys.path.index(directory)]:
            for form in forms:
                try:
                    posix.stat(f"{entry or '.'}/{name}{form}")
                    return False
                except OSError:
                    pass
        return True

    def create_module(self, spec):  # type: ignore[no-untyped-def]
        return None

    def exec_module(self, module) -> None:  # type: ignore[no-untyped-def]
        import marshal

        _is_package, origin, _size, _mtime_ns, offset, length = self.index[module.__name__]
        code = posix.pread(self.fd, length, self.base + offset)
        if len(code) != length:
            raise ImportError(f"the hot bundle was cut short under {module.__name__}", name=module.__name__)
        module.__file__ = origin
        exec(marshal.loads(code), module.__dict__)


def switch_on(package_root: str | None) -> None:
    """Before the in-process answer imports the package: pathlib without its rare modules, and
    vacant's hot modules from the bundle of `package_root` when there is one (the launcher's, or
    the console script's own package)."""
    lean_pathlib()
    if package_root is not None:
        hot_bundle(package_root)
