"""The hot bundle (vacant/hook/bundle.py, read by the lean client's `HotModules`).

- Never stale: on generated histories of writes and builds under a clock with a coarse timestamp
  tick (the racy case: a rewrite of the same size in the tick a build saw), every module the
  client serves from the bundle holds the value last written to its source (the test's own record
  of what it wrote, not the bundle's); and after a build that saw no racy source, it serves them all.
- A torn or foreign bundle serves nothing wrong: cut anywhere, or of another format or
  interpreter, the client serves only whole entries, or none.
- The real launcher, from a copy of the package with its bundle: every vacant module a fallback
  Read, Write, Edit or Bash call imports comes from the bundle (HOT_MODULES is complete), and the
  answers are the ones the same calls get without it.
- A daemon builds it at start when it is missing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from vacant.core.locations import mark_installed, state_dir
from vacant.daemon import lifecycle
from vacant.hook import bundle
from vacant.hook.paths import daemon_dir, spawn

sys.path.insert(0, str(Path(bundle.__file__).parent))
import lean  # noqa: E402 - the tricks room, loaded as the client loads it

del sys.path[0]

REPO = Path(__file__).resolve().parents[3]
SITE = str(Path(xxhash.__file__).parents[1])
MODULES = ("vacant", "vacant.m0", "vacant.m1", "vacant.sub", "vacant.sub.m2")
TICK_NS = 4_000_000  # a coarse filesystem timestamp (ext4 takes the kernel's tick)
START_S = 1_700_000_000.0


def test_the_client_reads_what_the_builder_writes() -> None:
    assert lean.BUNDLE_FORMAT == bundle.FORMAT
    assert lean.HotModules.HEADER_BYTES == bundle.HEADER_BYTES
    assert lean.bundle_file("/some/root") == str(bundle.bundle_path(Path("/some/root")))


def _source(module: str) -> Path:
    parts = module.split(".")
    is_package = module in ("vacant", "vacant.sub")
    return Path(*parts, "__init__.py") if is_package else Path(*parts[:-1], parts[-1] + ".py")


def _write(root: Path, module: str, value: int, width: int, clock_s: float) -> None:
    """VALUE = value, padded to `width` digits (so that a rewrite can keep the size), with the
    mtime the clock's coarse tick gives."""
    path = root / _source(module)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"VALUE = int(\"{value:0{width}d}\")\n")
    mtime = int(clock_s * 1e9) // TICK_NS * TICK_NS
    os.utime(path, ns=(mtime, mtime))


def _served(root: Path) -> dict[str, int]:
    """What the client serves from the bundle: {module: its VALUE} (a module not served is imported
    from its source by the usual import system)."""
    try:
        fd = os.open(lean.bundle_file(str(root)), os.O_RDONLY)
    except FileNotFoundError:
        return {}
    try:
        finder = lean.HotModules.open(fd, f"{root}/vacant/")
        if finder is None:
            return {}
        values = {}
        for module in MODULES:
            parent = module.rpartition(".")[0]
            path = None if not parent else [str(root / _source(parent).parent)]
            spec = finder.find_spec(module, path)
            if spec is not None:
                namespace = types.ModuleType(module)
                finder.exec_module(namespace)
                values[module] = namespace.VALUE
        return values
    finally:
        os.close(fd)


operation = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(MODULES), st.integers(0, 10**6), st.booleans(),
              st.sampled_from([0.0, 0.001, 0.5, 4.0])),
    st.tuples(st.just("build"), st.sampled_from([0.0, 0.001, 0.5, 4.0])),
)


@settings(max_examples=150, deadline=None)
@given(history=st.lists(operation, min_size=1, max_size=12))
def test_a_module_is_served_only_as_last_written(tmp_path_factory, history) -> None:
    root = tmp_path_factory.mktemp("pkg")
    clock = START_S
    written = {module: 0 for module in MODULES}
    widths = {module: 7 for module in MODULES}
    last_write = {module: clock for module in MODULES}
    for module in MODULES:
        _write(root, module, 0, 7, clock)
    clean_build = False
    for op in history:
        clock += op[-1]
        if op[0] == "write":
            _, module, value, same_size, _ = op
            widths[module] = widths[module] if same_size else widths[module] + 1
            _write(root, module, value, widths[module], clock)
            written[module], last_write[module] = value, clock
            clean_build = False
        else:
            bundle.build(root, MODULES, now=clock)
            clean_build = all(clock - at >= bundle.RACY_S + TICK_NS / 1e9 for at in last_write.values())
        served = _served(root)
        stale = {module: (value, written[module]) for module, value in served.items() if value != written[module]}
        assert not stale, f"served (bundle's, source's): {stale}"
        if clean_build:
            assert set(served) == set(MODULES), "a build that saw no racy source serves every module"


def test_a_torn_or_foreign_bundle_serves_nothing_wrong(tmp_path) -> None:
    root = tmp_path / "pkg"
    for n, module in enumerate(MODULES):
        _write(root, module, n, 3, START_S)
    whole = bundle.bundle_path(root)
    bundle.build(root, MODULES, now=START_S + 10)
    data = whole.read_bytes()
    assert _served(root) == {module: n for n, module in enumerate(MODULES)}
    served_counts = set()
    for cut in range(0, len(data), max(1, len(data) // 97)):
        whole.write_bytes(data[:cut])
        served = _served(root)
        assert served == {module: n for n, module in enumerate(MODULES) if module in served}
        served_counts.add(len(served))
    assert len(served_counts) > 2, "the cuts never left part of the bundle served: the test saw no torn bundle"
    length = int.from_bytes(data[:bundle.HEADER_BYTES], "little")
    index = data[bundle.HEADER_BYTES:bundle.HEADER_BYTES + length]
    import marshal

    fmt, magic, entries = marshal.loads(index)
    for foreign in ((fmt + 1, magic, entries), (fmt, magic[:2] + b"\0\0", entries), (fmt, magic, list(entries))):
        packed = marshal.dumps(foreign)
        whole.write_bytes(len(packed).to_bytes(bundle.HEADER_BYTES, "little") + packed
                          + data[bundle.HEADER_BYTES + length:])
        assert _served(root) == {}


# -- the real launcher --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def packages(tmp_path_factory) -> dict[str, Path]:
    """Two copies of the package (mtimes kept: none is racy), one with its bundle."""
    made = {}
    for name in ("bundled", "plain"):
        root = tmp_path_factory.mktemp(name)
        shutil.copytree(REPO / "vacant", root / "vacant", copy_function=shutil.copy2,
                        ignore=shutil.ignore_patterns("__pycache__"))
        made[name] = root
    bundle.build(made["bundled"])
    return made


DRIVER = """
import json, posix, sys
sys.path.insert(0, {root!r} + "/vacant/hook")
import client
del sys.path[0]
sys.argv = ["client", "claude"]
code = client.main(package_root={root!r})
loaders = {{name: [type(getattr(getattr(module, "__spec__", None), "loader", None)).__name__,
                  getattr(module, "__file__", "").replace({root!r}, "ROOT"), module.__package__]
           for name, module in list(sys.modules.items()) if name.startswith(("vacant", "xxhash"))}}
# the directories the usual import searched (a finder for each): none of the environment's packages'
loaders["searched"] = sorted(key for key in sys.path_importer_cache if "-packages" in key)
sys.stdout.flush()
sys.stderr.write("\\nLOADERS " + json.dumps(loaders) + "\\n")
sys.stderr.flush()
posix._exit(code)
"""


def calls(root: Path) -> list[dict]:
    target = str(root / "a.txt")
    read = {"file_path": target}
    write = {"file_path": target, "content": "b\n"}
    edit = {"file_path": target, "old_string": "b", "new_string": "c"}
    bash = {"command": "cat a.txt > b.txt"}
    out = []
    for tool, tool_input, response in (("Read", read, {"type": "text", "file": {"filePath": target, "content": "a\n"}}),
                                       ("Write", write, None), ("Edit", edit, None),
                                       ("Bash", bash, {"stdout": "", "stderr": "", "interrupted": False})):
        out.append({"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input})
        out.append({"hook_event_name": "PostToolUse", "tool_name": tool, "tool_input": tool_input,
                    **({"tool_response": response} if response else {})})
    return out


def _fallback(package: Path, workspace: Path, call: dict, n: int) -> tuple[str, int, dict[str, list]]:
    marker = daemon_dir(workspace) / "spawned"
    marker.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    marker.write_text("test")  # a daemon starting: the client starts none and answers in-process
    body = json.dumps({"session_id": "s1", "cwd": str(workspace), "tool_use_id": f"t{n}", **call}).encode()
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", DRIVER.format(root=str(package))],
                          input=body, capture_output=True, cwd=workspace, timeout=120,
                          env=dict(os.environ, CLAUDE_PROJECT_DIR=str(workspace)))
    stderr = proc.stderr.decode()
    assert "LOADERS " in stderr, stderr[-2000:]
    modules = json.loads(stderr.rpartition("LOADERS ")[2])
    return proc.stdout.decode(), proc.returncode, modules


def _workspace(base: Path) -> Path:
    base.mkdir()
    (base / "a.txt").write_text("a\n")
    mark_installed(base)
    return base


@pytest.mark.slow
def test_a_fallback_call_imports_vacant_from_the_bundle_alone_and_answers_alike(packages, tmp_path, monkeypatch):
    monkeypatch.setenv("VACANT_HOME", str(tmp_path / "data"))
    spaces = {name: _workspace(tmp_path / name) for name in packages}
    hashed = False
    for n, call in enumerate(calls(spaces["bundled"])):
        where = f"{call['hook_event_name']}:{call['tool_name']}"
        answers, places = {}, {}
        for name, package in packages.items():
            body = json.loads(json.dumps(call).replace(str(spaces["bundled"]), str(spaces[name])))
            act(spaces[name], call, n)
            stdout, code, modules = _fallback(package, spaces[name], body, n)
            answers[name] = (stdout.replace(str(spaces[name]), "WS"), code)
            assert "vacant.hook.entry" in modules, f"{where}: not answered in-process"
            searched = modules.pop("searched")
            hashed |= "xxhash" in modules
            extension = modules.pop("xxhash._xxhash", None)  # an extension module: its own loader either way
            if name == "bundled":
                assert not searched, f"{where} searched {searched} for a module (the bundle names where it is)"
                assert extension is None or "xxhash" in modules
            elsewhere = sorted(module for module, (loader, _, _) in modules.items() if loader != "HotModules")
            places[name] = {module: where_from for module, (_, *where_from) in modules.items()}
            if name == "bundled":
                assert not elsewhere, f"{where} imported these not from the bundle (add them to HOT_MODULES): {elsewhere}"
            else:
                assert len(elsewhere) == len(modules), f"{where}: the plain copy served from a bundle"
        assert answers["bundled"] == answers["plain"], where
        assert places["bundled"] == places["plain"], f"{where}: the modules' __file__ or __package__ differ"
    assert hashed, "no call hashed a changed file: xxhash was never asked for"
    for name, space in spaces.items():
        errors = state_dir(space) / "errors.log"
        assert not errors.exists(), f"{name}: {errors.read_text()}"
        assert not lifecycle.running(space)


def act(workspace: Path, call: dict, n: int) -> None:
    """What the tool did before its Post: a Write wrote, an Edit changed the file (the Post then
    hashes it, with xxhash)."""
    if call["hook_event_name"] == "PostToolUse" and call["tool_name"] in ("Write", "Edit"):
        (workspace / "a.txt").write_text(f"{call['tool_name']} {n}\n")


CONSOLE_DRIVER = """
import json, posix, sys
sys.path.insert(0, {root!r})
sys.path.append({site!r})  # where site processing puts the environment's packages (xxhash)
from vacant.hook import client  # as the `vacant-hook` console script imports it
before = set(sys.modules)
sys.argv = ["vacant-hook", "claude"]
code = client.main()
loaders = {{name: type(getattr(getattr(module, "__spec__", None), "loader", None)).__name__
           for name, module in list(sys.modules.items()) if name.startswith("vacant") and name not in before}}
sys.stdout.flush()
sys.stderr.write("\\nLOADERS " + json.dumps(loaders) + "\\n")
sys.stderr.flush()
posix._exit(code)
"""


@pytest.mark.slow
def test_the_console_script_serves_the_bundle_of_the_package_it_runs_from(packages, tmp_path, monkeypatch):
    monkeypatch.setenv("VACANT_HOME", str(tmp_path / "data"))
    workspace = _workspace(tmp_path / "ws")
    call = calls(workspace)[2]  # Pre:Write
    marker = daemon_dir(workspace) / "spawned"
    marker.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    marker.write_text("test")
    body = json.dumps({"session_id": "s1", "cwd": str(workspace), "tool_use_id": "t1", **call}).encode()
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", CONSOLE_DRIVER.format(root=str(packages["bundled"]), site=SITE)],
                          input=body, capture_output=True, cwd=workspace, timeout=120,
                          env=dict(os.environ, CLAUDE_PROJECT_DIR=str(workspace)))
    stderr = proc.stderr.decode()
    assert "LOADERS " in stderr, stderr[-2000:]
    loaders = json.loads(stderr.rpartition("LOADERS ")[2])
    assert "vacant.hook.entry" in loaders, "not answered in-process"
    assert {loader for loader in loaders.values()} == {"HotModules"}, loaders
    errors = state_dir(workspace) / "errors.log"
    assert not errors.exists(), errors.read_text()


def test_each_hot_module_has_a_source() -> None:
    missing = [module for module in bundle.HOT_MODULES if bundle.locate(REPO, module) is None]
    assert not missing


@pytest.mark.slow
def test_a_daemon_builds_a_missing_bundle(tmp_path, monkeypatch):
    monkeypatch.setenv("VACANT_HOME", str(tmp_path / "data"))
    workspace = _workspace(tmp_path / "ws")
    path = bundle.bundle_path(bundle.package_root())
    moved = path.with_name(path.name + f".test-{os.getpid()}")
    if path.exists():
        path.rename(moved)
    try:
        assert not bundle.fresh(bundle.package_root())
        spawn(workspace, reason="test")
        deadline = time.monotonic() + 30
        while not bundle.fresh(bundle.package_root()) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert bundle.fresh(bundle.package_root()), "the daemon built no bundle"
    finally:
        lifecycle.stop(workspace)
        if moved.exists():
            moved.unlink()


def test_doctor_says_whether_the_bundle_is_fresh(tmp_path) -> None:
    from vacant.commands.doctor import bundle_line

    package = tmp_path / "pkg"
    shutil.copytree(REPO / "vacant", package / "vacant", copy_function=shutil.copy2,
                    ignore=shutil.ignore_patterns("__pycache__"))
    missing = bundle_line(package)
    assert (missing.status, "missing" in missing.detail) == ("warn", True), missing
    bundle.build(package)
    assert bundle_line(package).status == "ok"
    source = package / "vacant" / "hook" / "call.py"
    source.write_text(source.read_text() + "\n")
    stale = bundle_line(package)
    assert (stale.status, "stale" in stale.detail) == ("warn", True), stale


@pytest.mark.parametrize("shadow", [None, "xxhash", "xxhash.py", "xxhash" + __import__("_imp").extension_suffixes()[0]])
def test_another_package_is_served_only_from_where_the_usual_import_finds_it(tmp_path, monkeypatch, shadow):
    """xxhash from the bundle only when no sys.path entry before its directory holds a module of
    that name (a package, a source or an extension module): the usual import would load that one."""
    first, site = tmp_path / "first", tmp_path / "site"
    first.mkdir(), site.mkdir()
    if shadow == "xxhash":
        (first / shadow).mkdir()
    elif shadow:
        (first / shadow).write_text("")
    monkeypatch.setattr(sys, "path", [str(first), str(site)])
    assert lean.HotModules._first_on_path("xxhash", str(site)) is (shadow is None)
    monkeypatch.setattr(sys, "path", [str(first)])
    assert lean.HotModules._first_on_path("xxhash", str(site)) is False  # not on sys.path at all
