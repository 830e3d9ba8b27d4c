"""The Python source vacant puts in front of a test runner (written to a scratch directory, never
into the workspace): the read trace both share, pytest's selection plugin, and the reporter that
makes `python -m unittest` write JUnit XML and run only the selected tests, the `go` in front
of the real one that has `go test` write its JSON events to a report, and the `cargo` in front of
the real one that keeps `cargo test`'s text as its report.

Each is a string: it runs inside the check's own Python, not vacant's, so it imports nothing of
vacant. vacant.policy.contract.runners writes them and sets the environment they read."""

from __future__ import annotations

SELECT_ENV = "VACANT_SELECT_TESTS"
READS_ENV = "VACANT_READS_FILE"
UNITTEST_REPORT_ENV = "VACANT_UNITTEST_REPORT"
GO_REPORT_ENV = "VACANT_GO_REPORT"
GO_RUN_ENV = "VACANT_GO_RUN"
CARGO_REPORT_ENV = "VACANT_CARGO_REPORT"
CARGO_SELECT_ENV = "VACANT_CARGO_SELECT"
INPUTS_ENV = "VACANT_INPUTS_FILE"
SKIP_ENV = "VACANT_SKIP_TESTS"
SKIP_FILES_ENV = "VACANT_SKIP_FILES"
UNITTEST_INPUTS_MODULE = "_vacant_unittest_inputs"

# every file opened and directory listed under the check's directory, and any child process
TRACE_SOURCE = r'''
import json, os, re, sys

_ROOT = os.path.realpath(os.getcwd())
_FILES, _DIRS, _CHILD = set(), set(), []
_PATHDIRS, _NAMES = set(), set()  # directories the import system listed; every module name an import looked for
_WALKED = set()  # directories pytest's collection listed
_SPAWN = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty")

def _inside(path):
    try:
        if isinstance(path, int):
            return None
        real = os.path.realpath(os.path.join(os.getcwd(), os.fsdecode(path)))
    except (TypeError, ValueError, OSError):
        return None
    if real == _ROOT:
        return "."
    if real.startswith(_ROOT + os.sep):
        return real[len(_ROOT) + 1:]
    return None

def _audit(event, args):
    if event == "open" and args:
        rel = _inside(args[0])
        if rel is not None:
            _FILES.add(rel)
    elif event in ("os.listdir", "os.scandir"):
        rel = _inside(args[0] if args and args[0] is not None else ".")
        if rel is not None:  # the import system lists a directory to find modules: only importable names matter
            caller = sys._getframe(1).f_code.co_filename
            walked = os.sep + "_pytest" + os.sep in caller
            (_PATHDIRS if caller.startswith("<frozen importlib") else _WALKED if walked else _DIRS).add(rel)
    elif event == "import" and args:
        _NAMES.update(str(args[0]).split("."))
    elif event in _SPAWN:
        _CHILD.append(event)

def _watch_imports():
    """The names importlib.import_module and importlib.util.find_spec look for (an import
    statement's are audited)."""
    import importlib, importlib.util

    def named(real):
        def wrapper(name, package=None):
            try:
                _NAMES.update(importlib.util.resolve_name(name, package).split("."))
            except (ImportError, ValueError, AttributeError, TypeError):
                _NAMES.update(str(name).lstrip(".").split("."))
            return real(name, package)
        return wrapper

    importlib.import_module = named(importlib.import_module)
    importlib.util.find_spec = named(importlib.util.find_spec)

def _write_reads():
    target = os.environ.get("''' + READS_ENV + r'''")
    if target:
        with open(target, "w") as out:
            json.dump({"files": sorted(_FILES), "dirs": sorted(_DIRS), "child": bool(_CHILD),
                       "pathdirs": sorted(_PATHDIRS), "names": sorted(_NAMES), "walked": sorted(_WALKED)}, out)

'''

# the id pytest's JUnit report gives a node (suite name, class name from the node id's path, name)
REPORT_ID_SOURCE = r'''
import re

def _report_id(nodeid, suite, prefix):
    path, bracket, params = nodeid.partition("[")
    names = path.split("::")
    names[0] = re.sub(r"\.py$", "", names[0].replace("/", "."))
    names[-1] += bracket + params
    classname = ".".join(names[:-1])
    if prefix:
        classname = prefix + "." + classname
    return "::".join(part for part in (suite, classname, names[-1]) if part)

'''

# the plugin pytest loads to run only the named tests; it computes each item's report id the way
# pytest's junitxml does (suite name, class name from the node id's path, name)
PLUGIN_SOURCE = TRACE_SOURCE + r'''
sys.addaudithook(_audit)
_watch_imports()

def pytest_unconfigure(config):
    _write_reads()

def _wanted_classes(config):
    classes = []
    prefix = getattr(config.option, "junitprefix", None)
    for test_id in json.loads(os.environ.get("''' + SELECT_ENV + r'''", "[]")):
        parts = test_id.split("[", 1)[0].split("::")
        if len(parts) < 2:
            return None
        name = parts[-2]
        if prefix and name.startswith(prefix + "."):
            name = name[len(prefix) + 1:]
        classes.append(name)
    return classes

def pytest_ignore_collect(collection_path, config):
    if collection_path.suffix != ".py" or collection_path.name in ("conftest.py", "__init__.py"):
        return None
    if "''' + SELECT_ENV + r'''" not in os.environ:
        left_out = json.loads(os.environ.get("''' + SKIP_FILES_ENV + r'''", "[]"))
        return True if left_out and os.path.relpath(os.path.realpath(collection_path), _ROOT) in left_out else None
    classes = _wanted_classes(config)
    try:
        rel = collection_path.relative_to(config.rootpath)
    except ValueError:
        return None
    if classes is None:
        return None
    dotted = ".".join(rel.with_suffix("").parts)
    if any(name == dotted or name.startswith(dotted + ".") for name in classes):
        return None
    return True

''' + REPORT_ID_SOURCE + r'''
def pytest_collection_modifyitems(session, config, items):
    selecting = "''' + SELECT_ENV + r'''" in os.environ
    wanted = set(json.loads(os.environ.get("''' + SELECT_ENV + r'''", "[]")))
    skipped = set(json.loads(os.environ.get("''' + SKIP_ENV + r'''", "[]")))
    try:
        suite = config.getini("junit_suite_name")
    except ValueError:
        suite = "pytest"
    prefix = getattr(config.option, "junitprefix", None)
    ids = [_report_id(item.nodeid, suite, prefix) for item in items]
    runs = [(ident in wanted or not selecting) and ident not in skipped for ident in ids]
    keep = [item for item, run in zip(items, runs) if run]
    dropped = [item for item, run in zip(items, runs) if not run]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = keep
'''


# the (suite, class name, name) a unittest test is reported under: its id `unittest::CLASS::NAME`
UNITTEST_ID_SOURCE = r'''
def _ident(test):
    # no import statement here: it runs inside each test, whose recorded inputs it would join
    if isinstance(test, getattr(sys.modules.get("unittest.loader"), "_FailedTest", ())):
        return ("unittest", test._testMethodName, "")
    kind = type(test)
    method = getattr(test, "_testMethodName", None)
    whole = test.id()
    own = f"{kind.__module__}.{kind.__qualname__}"
    if method and whole == f"{own}.{method}":
        return ("unittest", own, method)
    head, _, tail = whole.rpartition(".")
    return ("unittest", head, tail)

'''

# `sitecustomize` on the check's PYTHONPATH: in a `python -m unittest` process (and no other, not
# even its children: the variable is taken out of the environment), record each test's outcome
# and write JUnit XML at exit; with a selection, run only those tests, with tests to leave out,
# all others (a module that failed to load always runs: its error is the answer); asked to record
# each test's inputs, it loads UNITTEST_INPUTS_SOURCE first. The sitecustomize it shadows, if any,
# still runs.
UNITTEST_SITE_SOURCE = TRACE_SOURCE + r'''
def _shadowed():
    import importlib.machinery, importlib.util
    here = os.path.dirname(os.path.abspath(__file__))
    path = [p for p in sys.path if os.path.abspath(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)

def _is_unittest():
    argv = list(getattr(sys, "orig_argv", []))
    return any(a == "-m" and b == "unittest" for a, b in zip(argv, argv[1:])) or "-munittest" in argv

_REPORT = os.environ.pop("''' + UNITTEST_REPORT_ENV + r'''", None) if _is_unittest() else None
_WANTED = set(json.loads(os.environ.pop("''' + SELECT_ENV + r'''", "[]") or "[]")) if _REPORT else set()
_READS = os.environ.pop("''' + READS_ENV + r'''", None) if _REPORT else None
_SKIPPED = set(json.loads(os.environ.pop("''' + SKIP_ENV + r'''", "[]") or "[]")) if _REPORT else set()
_CASES = {}
_ORDER = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}

''' + UNITTEST_ID_SOURCE + r'''def _note(test, outcome, err=None, message=""):
    key = _ident(test)
    text = ""
    if err is not None:
        import traceback
        text = "".join(traceback.format_exception(*err))
        message = message or (traceback.format_exception_only(err[0], err[1])[-1].strip())
    old = _CASES.get(key)
    if old is None or _ORDER[outcome] >= _ORDER[old[0]]:
        _CASES[key] = (outcome, message, text)

def _write():
    from xml.sax.saxutils import escape, quoteattr
    out = ['<?xml version="1.0" encoding="utf-8"?>', '<testsuites><testsuite name="unittest">']
    for (_suite, classname, name), (outcome, message, text) in _CASES.items():
        tag = {"failed": "failure", "error": "error", "skipped": "skipped"}.get(outcome)
        body = f"<{tag} message={quoteattr(message[:4000])}>{escape(text[-60000:])}</{tag}>" if tag else ""
        out.append(f"<testcase classname={quoteattr(classname)} name={quoteattr(name)}>{body}</testcase>")
    out.append("</testsuite></testsuites>")
    with open(_REPORT, "w", encoding="utf-8") as handle:
        handle.write("\n".join(out))
    if _READS:
        os.environ["''' + READS_ENV + r'''"] = _READS
        _write_reads()

def _keep(suite):
    import unittest, unittest.loader
    if isinstance(suite, unittest.TestSuite):
        try:
            kept = type(suite)()
        except Exception:
            kept = unittest.TestSuite()
        for test in suite:
            chosen = _keep(test)
            if chosen is not None:
                kept.addTest(chosen)
        return kept if list(kept) else None
    if isinstance(suite, getattr(unittest.loader, "_FailedTest", ())):
        return suite
    ident = "::".join(p for p in _ident(suite) if p)
    return suite if (ident in _WANTED or not _WANTED) and ident not in _SKIPPED else None

def _install():
    import atexit, unittest, unittest.main, unittest.result
    result = unittest.result.TestResult
    wrap = [("addSuccess", lambda self, test: _note(test, "passed")),
            ("addFailure", lambda self, test, err: _note(test, "failed", err)),
            ("addError", lambda self, test, err: _note(test, "error", err)),
            ("addSkip", lambda self, test, reason: _note(test, "skipped", message=str(reason))),
            ("addExpectedFailure", lambda self, test, err: _note(test, "passed")),
            ("addUnexpectedSuccess", lambda self, test: _note(test, "failed", message="unexpected success")),
            ("addSubTest", lambda self, test, sub, err: err is not None and _note(
                test, "failed" if issubclass(err[0], test.failureException) else "error", err))]
    for name, note in wrap:
        original = getattr(result, name)
        def wrapped(self, *args, _original=original, _note_it=note):
            try:
                _note_it(self, *args)
            except Exception:
                pass
            return _original(self, *args)
        setattr(result, name, wrapped)
    if _WANTED or _SKIPPED:
        program = sys.modules["unittest.main"].TestProgram  # `unittest.main` is the class itself
        run_tests = program.runTests
        def selected(self):
            self.test = _keep(self.test) or unittest.TestSuite()
            return run_tests(self)
        program.runTests = selected
    atexit.register(_write)

_shadowed()
if _REPORT and os.environ.get("''' + INPUTS_ENV + r'''") and not _WANTED:
    import ''' + UNITTEST_INPUTS_MODULE + r'''
if _REPORT:
    if _READS:
        sys.addaudithook(_audit)
        _watch_imports()
    _install()
'''

# `go` first on the check's PATH: `go test` runs as `go test -json` (and `-run PATTERN` for a
# selection, before any `-args`), its events and its stderr go to the report (at most CAP bytes),
# and the check's output is the text the events carry (what `go test -v` prints), so whatever reads
# the output reads the same words. Any other go command runs untouched; no real go: exit 127.
GO_WRAPPER_SOURCE = r'''
import json, os, shutil, subprocess, sys, threading

HERE = os.path.dirname(os.path.realpath(__file__))
CAP = int(sys.argv[1])

def real_go():
    dirs = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d and os.path.realpath(d) != HERE]
    return shutil.which("go", path=os.pathsep.join(dirs))

def own_json(args):
    cut = args.index("-args") if "-args" in args else len(args)
    return any(a.lstrip("-") in ("json", "json=true") for a in args[:cut] if a.startswith("-"))

def as_text(line):
    try:
        event = json.loads(line)
    except ValueError:
        return line
    if not isinstance(event, dict):
        return line
    output = event.get("Output")
    return output.encode("utf-8", "surrogateescape") if isinstance(output, str) else b""

def main():
    go, args = real_go(), sys.argv[2:]
    if go is None:
        sys.stderr.write("go: command not found\n")
        return 127
    report = os.environ.get("''' + GO_REPORT_ENV + r'''")
    if not args or args[0] != "test" or not report:
        os.execv(go, [go] + args)
    rest, mine = args[1:], own_json(args[1:])
    pattern = os.environ.get("''' + GO_RUN_ENV + r'''")
    if pattern:
        cut = rest.index("-args") if "-args" in rest else len(rest)
        rest = rest[:cut] + ["-run", pattern] + rest[cut:]
    proc = subprocess.Popen([go, "test"] + ([] if mine else ["-json"]) + rest,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    lock, left = threading.Lock(), [CAP + 1]
    out = open(report, "ab")

    def keep(line):
        with lock:
            if left[0] > 0:
                out.write(line[: left[0]])
                left[0] -= len(line)

    def pump(source, sink, convert):
        for line in iter(source.readline, b""):
            keep(line if convert else line.decode("utf-8", "replace").encode("utf-8"))
            sink.write(as_text(line) if convert and not mine else line)
            sink.flush()

    threads = [threading.Thread(target=pump, args=(proc.stdout, sys.stdout.buffer, True)),
               threading.Thread(target=pump, args=(proc.stderr, sys.stderr.buffer, False))]
    for thread in threads:
        thread.start()
    code = proc.wait()
    for thread in threads:
        thread.join()
    out.close()
    return code if code >= 0 else 128 - code

sys.exit(main())
'''

# `cargo` first on the check's PATH: `cargo test` runs with `--no-fail-fast` (every test binary
# runs, not only those before the first failing one) and, for a selection, `--exact NAME...`
# after its `--` (libtest's filters: each name exactly, in every binary); its stdout and stderr go
# through one pipe, in the order cargo wrote them, to the check's stdout and to the report (at
# most CAP bytes). Any other cargo command runs untouched; no real cargo: exit 127.
CARGO_WRAPPER_SOURCE = r'''
import json, os, shutil, subprocess, sys

HERE = os.path.dirname(os.path.realpath(__file__))
CAP = int(sys.argv[1])

def real_cargo():
    dirs = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d and os.path.realpath(d) != HERE]
    return shutil.which("cargo", path=os.pathsep.join(dirs))

def test_args(args, names):
    cut = args.index("--") if "--" in args else len(args)
    cargo_side, libtest = args[:cut], args[cut + 1:]
    if "--no-fail-fast" not in cargo_side:
        cargo_side = cargo_side + ["--no-fail-fast"]
    if names:
        libtest = libtest + ["--exact"] + names
    return cargo_side + (["--"] + libtest if libtest or "--" in args else [])

def main():
    cargo, args = real_cargo(), sys.argv[2:]
    if cargo is None:
        sys.stderr.write("cargo: command not found\n")
        return 127
    report = os.environ.get("''' + CARGO_REPORT_ENV + r'''")
    at = next((i for i, a in enumerate(args) if not a.startswith("+")), len(args))  # `cargo +nightly test`
    if at >= len(args) or args[at] not in ("test", "t") or not report:
        os.execv(cargo, [cargo] + args)
    names = json.loads(os.environ.get("''' + CARGO_SELECT_ENV + r'''") or "[]")
    proc = subprocess.Popen([cargo] + args[:at + 1] + test_args(args[at + 1:], names),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    left = CAP + 1
    with open(report, "ab") as out:
        for line in iter(proc.stdout.readline, b""):
            if left > 0:
                out.write(line[:left])
                left -= len(line)
            sys.stdout.buffer.write(line)
            sys.stdout.flush()
    code = proc.wait()
    return code if code >= 0 else 128 - code

sys.exit(main())
'''


WATCH_SOURCE = r'''
import os, sys
# Whether a span of a run (one test, a class's or module's fixture, a test module's collection)
# changed the process the later tests run in: `_Watch`. What it compares: the values of every
# module loaded before the span -- a module from outside the workspace one level down (its values,
# and a container's, class's or plain object's own items, by identity), the workspace's own modules
# all the way down within a budget (functions' defaults too); the modules loaded during the span as
# their own import left them (a submodule bound on its package is a change); and, beside them, the
# environment, the import hooks, warning filters, the working directory, the random state and the
# interpreter's state kept in C that code commonly sets, and logging's loggers (`_c_state`). Left out: caches of the
# standard library and the runner's own modules (`_CACHES`), a module's dunder names (its warning
# registry), unittest's bookkeeping on a class, and what cannot be read without running the
# object's own code (an object whose __dict__ is not a dict, state kept in C).
#
# Fast: a watch holds every member it saw (so no id can be reused while it looks) and looks again
# in one pass in C (a few ms on a process of 1,500 modules); only where that pass differs does it
# compare key by key, to leave out what is left out.
import bisect as _bisect, itertools as _itertools, operator as _operator

_KEYS, _VALUES, _IS = _operator.methodcaller("keys"), _operator.methodcaller("values"), _operator.is_
_CHAIN = _itertools.chain.from_iterable
_SEQUENCES = (list, set, frozenset, tuple, bytearray)
_SCALARS = (str, bytes, int, float, bool, complex, type(None))
_BOOKKEEPING = frozenset({"tearDown_exceptions", "_classSetupFailed", "_class_cleanups"})  # unittest's, on a class
_DEEP_BUDGET = 20000  # containers one workspace module's watch may hold (beyond: not watched)
_CACHES = {("re", "_cache"), ("re", "_cache2"), ("linecache", "cache"), ("sys", "modules"), ("sys", "path"),
           ("sys", "path_importer_cache"), ("encodings", "_cache"), ("typing", "_cleanups"),
           ("importlib._bootstrap", "_module_locks"), ("importlib._bootstrap", "_blocking_on"),
           ("_weakrefset", "_IterationGuard"), ("abc", "_abc_registry"), ("_pytest", None), ("pytest", None),
           ("_pytest.fixtures", None), ("pluggy", None), ("py", None),
           # what catch_warnings swaps for each test (the filters are compared by value, beside)
           ("warnings", "filters"), ("warnings", "_showwarnmsg_impl"),
           # what reporting a failure leaves: the last exception, inspect's caches of where code is
           ("sys", "last_type"), ("sys", "last_value"), ("sys", "last_traceback"), ("sys", "last_exc"),
           ("inspect", "_filesbymodname"), ("inspect", "modulesbyfile")}


_CACHED_KEYS = {module for module, key in _CACHES if key is not None}


def _own_dict(value):
    # an object's own attributes, read without running its code; None where it has none we can read
    try:
        if isinstance(value, type):
            return type.__dict__["__dict__"].__get__(value)
        space = object.__getattribute__(value, "__dict__")
    except Exception:
        return None
    return space if type(space) is dict else None


def _cached(name):
    return (name.split(".", 1)[0], None) in _CACHES


def _left_out(module, key, value, bindings):
    # a module's value the watch leaves out
    return (not isinstance(key, str) or key.startswith("__") or (module, key) in _CACHES
            or (not bindings and type(value) is type(sys) and getattr(value, "__name__", None) == module + "." + key))


def _c_state():
    # the interpreter's state kept in C that code commonly sets, as far as it can be read without
    # changing it
    out = [sys.getrecursionlimit(), sys.getswitchinterval()]
    try:
        if "decimal" in sys.modules:
            context = sys.modules["decimal"].getcontext()
            out.append((context.prec, context.rounding, context.Emin, context.Emax, context.capitals,
                        context.clamp, tuple(sorted(map(repr, (k for k, v in context.traps.items() if v))))))
        if "locale" in sys.modules:
            out.append(sys.modules["locale"].setlocale(sys.modules["locale"].LC_ALL, None))
        if "socket" in sys.modules:
            out.append(sys.modules["socket"].getdefaulttimeout())
        if "signal" in sys.modules:
            signal = sys.modules["signal"]
            out.append(tuple(id(signal.getsignal(n)) for n in sorted(signal.valid_signals())
                             if n not in (signal.SIGKILL, signal.SIGSTOP)))
        if "numpy.random" in sys.modules:
            state = sys.modules["numpy.random"].get_state()
            out.append((state[0], bytes(state[1]), state[2:]))
        if "logging" in sys.modules:
            out.append(_logging_state(sys.modules["logging"]))
    except Exception:
        out.append(object())
    return tuple(out)


def _logging_state(logging):
    # what a test commonly sets on logging, deeper than the watch looks into a library: every
    # logger's level, handlers and filters, and logging.disable's level
    manager = logging.root.manager
    loggers = [logging.root] + [value for value in list(manager.loggerDict.values()) if isinstance(value, logging.Logger)]
    return (manager.disable, tuple((id(logger), logger.level, logger.disabled, logger.propagate,
                                    tuple(map(id, logger.handlers)), tuple(map(id, logger.filters)))
                                   for logger in loggers))


def _beside(path):
    # what the process keeps outside its modules' values
    import random, warnings
    return (tuple(sorted((k, v) for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST")),
            tuple(map(id, sys.meta_path)), tuple(map(id, sys.path_hooks)), tuple(map(repr, warnings.filters)),
            os.getcwd(), hash(random.getstate()), _c_state(), tuple(sys.path) if path else ())


class _Watch:
    """The process's state as the modules `names` hold it, compared again by `changed()`.
    skip: a module left out whole; leave: a (module, name) left out; bindings: whether a submodule
    newly bound on its package counts; path: whether the import path counts; beside: whether what
    `_beside` reads counts; own(module): whether a module is the workspace's own (watched all the
    way down; None: the recorder's own, left out)."""

    def __init__(self, names, own, skip=None, leave=None, bindings=True, path=True, beside=True):
        self.names, self.leave, self.bindings = frozenset(names), leave, bindings
        self.path, self.beside = path, beside
        self.maps, self.labels, self.seqs, self.filtered, self.empty = [], [], [], [], []
        self.own, self.skip = own, skip
        # the environment's own mappings are compared by value, beside (the runner sets and unsets its own variables)
        self.seen = {id(os.environ), id(os.environb), id(getattr(os.environ, "_data", None))}
        try:
            self._walk(self.names)
            self.looked = self._look()
        except Exception:
            self.looked = None  # never equal

    def _walk(self, names):
        modules = [(name, sys.modules.get(name)) for name in sorted(names) if name != self.skip and not _cached(name)]
        deep = [None if module is None else self.own(module) for _name, module in modules]
        # the workspace's own first: what they share with another module is watched all the way down
        for is_own in (True, False):
            for (name, module), mine in zip(modules, deep):
                if mine is is_own:
                    self._module(name, module, mine, self.seen)

    def extend(self, names):
        """Watches the modules `names` too, as they are now; what it watched stays compared with
        what it saw then."""
        if self.looked is None:
            return
        first = (len(self.maps), len(self.seqs), len(self.filtered), len(self.empty))
        self.names = self.names | frozenset(names)
        try:
            self._walk(set(names))
            added = _Look(self.maps[first[0]:], self.seqs[first[1]:], self, self.filtered[first[2]:],
                          self.empty[first[3]:])
            was = self.looked
            self.looked = (was[0] + added[0], was[1] + added[1], was[2] + added[2], was[3] + added[3],
                           was[4] + added[4], was[5] + added[5], was[6], was[7])
        except Exception:
            self.looked = None

    def _module(self, name, module, deep, seen):
        space = _own_dict(module)
        if space is None or space is globals() or id(space) in seen:
            return
        seen.add(id(space))
        kept = {key: value for key, value in list(space.items())
                if not _left_out(name, key, value, self.bindings) and (name, key) != self.leave}
        if name in _CACHED_KEYS or (self.leave is not None and self.leave[0] == name):
            self.filtered.append((name, space))  # compared key by key: its caches change all the time
        else:
            self.maps.append(space)
            self.labels.append(name)
        values = list(kept.values())
        budget = _DEEP_BUDGET if deep else len(values)
        while values and budget > 0:
            value = values.pop()
            if type(value) in _SCALARS or type(value) is type(sys) or id(value) in seen:
                continue  # a module is watched as one of its own
            members = self._container(value, seen)
            budget -= 1
            if deep and members:
                values.extend(members)

    def _container(self, value, seen):
        # adds what holds the value's own state; returns its members
        kind = type(value)
        seen.add(id(value))
        if kind in _SEQUENCES:
            self.seqs.append(value)
            return list(value)
        if kind is dict:
            self._map(value, None)
            return list(value.values())
        space = _own_dict(value)
        members = []
        if space is not None and id(space) not in seen:
            seen.add(id(space))
            self._map(space, "class" if isinstance(value, type) else None)
            members = list(space.values())
        if kind is type(_own_dict):  # a function: its defaults are its state too
            for extra in (value.__defaults__, value.__kwdefaults__):
                if extra is not None and id(extra) not in seen:
                    members.append(extra)
        return members

    def _map(self, space, label):
        if not space and label is None:
            self.empty.append(space)  # most of them (a function's attributes): a look asks only whether still empty
        else:
            self.maps.append(space)
            self.labels.append(label)

    def _kept(self, name, space, bindings):
        return {key: value for key, value in list(space.items())
                if not _left_out(name, key, value, bindings) and (name, key) != self.leave}

    def _look(self):
        return _Look(self.maps, self.seqs, self, self.filtered, self.empty)

    def changed(self, bindings=None):
        """Whether anything it watches is not as it was (what is left out aside); `bindings`
        overrides whether a submodule newly bound on its package counts."""
        was = self.looked
        if was is None:
            return True
        try:  # the same look as _Look's, compared as it goes: most looks find everything as it was
            if (any(map(len, self.empty)) or list(map(len, self.seqs)) != was[3]
                    or not all(map(_IS, _CHAIN(self.seqs), was[4]))
                    or (_beside(self.path) if self.beside else ()) != was[6]
                    or not all(map(_same, [self._kept(name, space, self.bindings) for name, space in self.filtered],
                                   was[5]))):
                return True
            if (list(map(len, self.maps)) == was[0] and list(_CHAIN(map(_KEYS, self.maps))) == was[1]
                    and all(map(_IS, _CHAIN(map(_VALUES, self.maps)), was[2]))):
                return False  # the keys by equality (what a dict goes by), the values by identity
            now = self._look()
        except Exception:
            return True
        if self._keys_changed(was, now, self.bindings if bindings is None else bindings):
            return True
        self.looked = now  # only what is left out changed: the next look starts from here
        return False

    def _keys_changed(self, was, now, bindings):
        # the slow look, map by map from the first that differs: whether all that differs is left out
        ends = ([0, *_itertools.accumulate(was[0])], [0, *_itertools.accumulate(now[0])])
        at = _first_differing(was, now, ends, 0)
        while at is not None:
            before, after = (dict(zip(look[1][end[at]:end[at + 1]], look[2][end[at]:end[at + 1]]))
                             for look, end in ((was, ends[0]), (now, ends[1])))
            label = self.labels[at]
            for key in set(before) | set(after):
                if key in before and key in after and before[key] is after[key]:
                    continue
                if label == "class" and key in _BOOKKEEPING:
                    continue
                if label not in (None, "class") and _left_out(label, key, after.get(key, before.get(key)), bindings):
                    continue
                return True
            at = _first_differing(was, now, ends, at + 1)
        return False


def _first_differing(was, now, ends, start):
    # the first map from `start` whose length, keys or values are not the same objects, or None
    count = len(was[0])
    last = next(_itertools.compress(_itertools.count(start), map(_operator.ne, was[0][start:], now[0][start:])), count)
    for part in (1, 2):  # up to `last` the lengths agree, so the two looks line up
        a = was[part][ends[0][start]:ends[0][last]]
        b = now[part][ends[1][start]:ends[1][last]]
        first = next(_itertools.compress(_itertools.count(), map(_operator.is_not, a, b)), None)
        if first is not None:
            last = min(last, _bisect.bisect_right(ends[0], ends[0][start] + first) - 1)
    return last if last < count else None


def _Look(maps, seqs, watch, filtered, empty):
    # one pass in C over what a watch holds (the filtered few key by key)
    return (list(map(len, maps)), list(_CHAIN(map(_KEYS, maps))), list(_CHAIN(map(_VALUES, maps))),
            list(map(len, seqs)), list(_CHAIN(seqs)),
            [watch._kept(name, space, watch.bindings) for name, space in filtered],
            _beside(watch.path) if watch.beside else (), any(map(len, empty)))


def _same(now, was):
    # two mappings with the same keys holding the very same values
    return len(now) == len(was) and all(key in was and was[key] is value for key, value in now.items())
'''


# What records each test's inputs (vacant.attribute.testinputs), in pytest's plugin and in
# unittest's reporter alike. Every read (a file opened, a directory listed by anything but the
# runner's own walk for test files, a file outside the check's directory) goes to the innermost
# "sink" open: the session (every test's), the loading of one test module (its tests'), one test's
# run (it and every later test's: a value read once and cached in a module serves the tests after
# it), a class's or module's fixture (its tests'), or an import. An `import` statement that finds
# its module already loaded still adds what that module's first import read
# (builtins.__import__ and importlib.import_module are wrapped), so a test module's inputs do not
# depend on which module imported a shared one first. A process started or a socket opened makes
# its sink "unknown" (its reads are nobody's to see).
INPUTS_CORE_SOURCE = WATCH_SOURCE + r'''
import builtins, importlib, json, os, sys, tempfile

_ROOT = os.path.realpath(os.getcwd())
_TARGET = os.environ.pop("''' + INPUTS_ENV + r'''", "")
_SKIP_OUT = tuple(os.path.realpath(p) for p in {tempfile.gettempdir(), os.path.dirname(_TARGET) or _ROOT})
_SPAWN = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty",
          "socket.connect", "socket.bind", "socket.sendto", "pty.spawn")
_WALKS = (os.sep + "_pytest" + os.sep,)  # where the runner's own walk for test files runs (unittest's: its loader)
_GLOBAL = {"files": set(), "dirs": set(), "pathdirs": set(), "outside": set(), "unknown": False, "writes": False}
_MODULES, _TESTS, _CLOSURE = {}, [], {}
_STACK = [_GLOBAL]

def _sink():
    return {"files": set(), "dirs": set(), "pathdirs": set(), "outside": set(), "unknown": False, "writes": False}

def _merge(into, part, writes=True):
    for key in ("files", "dirs", "pathdirs", "outside"):
        into[key] |= part[key]
    into["unknown"] = into["unknown"] or part["unknown"]
    if writes:  # what a module's first import wrote is not written again by a later import of it
        into["writes"] = into["writes"] or part["writes"]

def _where(path):
    try:
        if isinstance(path, int):
            return None, None
        real = os.path.realpath(os.path.join(os.getcwd(), os.fsdecode(path)))
    except (TypeError, ValueError, OSError):
        return None, None
    if real == _ROOT:
        return ".", None
    if real.startswith(_ROOT + os.sep):
        rel = real[len(_ROOT) + 1:]
        return (None, None) if rel.startswith(".pytest_cache" + os.sep) else (rel, None)
    if real.startswith(("/proc/", "/dev/", "/sys/")) or any(real == p or real.startswith(p + os.sep) for p in _SKIP_OUT):
        return None, None  # the run's own temporary files, not an input
    return None, real

# what changes a file, and which of its arguments are paths: a file written where a later test
# may read it (the workspace, or outside it beyond the run's temporary files) is process state too
_CHANGES_FILES = {"os.remove": (0,), "os.rename": (0, 1), "os.mkdir": (0,), "os.rmdir": (0,), "os.truncate": (0,),
                  "os.symlink": (0, 1), "os.link": (0, 1), "os.chmod": (0,), "os.chown": (0,), "os.utime": (0,),
                  "shutil.rmtree": (0,), "os.chflags": (0,), "os.lchflags": (0,)}

def _wrote(path):
    rel, out = _where(path)
    if out is not None or (rel is not None and "__pycache__" not in rel.split(os.sep)):  # bytecode: a cache
        _STACK[-1]["writes"] = True

def _writes(args):
    mode, flags = (args[1] if len(args) > 1 else None), (args[2] if len(args) > 2 else 0)
    if isinstance(mode, str):
        return any(c in mode for c in "wax+")
    return isinstance(flags, int) and bool(flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND))

def _writes_only(args):
    mode, flags = (args[1] if len(args) > 1 else None), (args[2] if len(args) > 2 else 0)
    if isinstance(mode, str):
        return "+" not in mode and any(c in mode for c in "wax")
    return isinstance(flags, int) and flags & 3 == os.O_WRONLY

def _audit(event, args):
    if event in _CHANGES_FILES:
        for at in _CHANGES_FILES[event]:
            if len(args) > at and isinstance(args[at], (str, bytes, os.PathLike)):
                _wrote(args[at])
        return
    if event == "open" and args:
        if _writes(args):
            _wrote(args[0])
        if _writes_only(args):
            return  # written, not read: an output of the test, not an input
        rel, out = _where(args[0])
        if rel is not None:
            _STACK[-1]["files"].add(rel)
        elif out is not None:
            _STACK[-1]["outside"].add(out)
    elif event in ("os.listdir", "os.scandir"):
        caller = sys._getframe(1).f_code.co_filename
        if any(walk in caller for walk in _WALKS):
            return  # the runner's own walk for test files: which tests exist, never what one test saw
        rel, out = _where(args[0] if args and args[0] is not None else ".")
        if rel is not None:
            # the import system lists a directory to find modules: only importable names matter
            _STACK[-1]["pathdirs" if caller.startswith("<frozen importlib") else "dirs"].add(rel)
        elif out is not None:
            _STACK[-1]["outside"].add(out)
    elif event.startswith(_SPAWN):
        _STACK[-1]["unknown"] = True

def _touched(name, fromlist, level, globals_):
    try:
        if level:
            package = (globals_ or {}).get("__package__") or ""
            name = importlib.util.resolve_name("." * level + name, package)
    except (ImportError, ValueError, AttributeError):
        return []
    parts = name.split(".") if name else []
    names = [".".join(parts[:i]) for i in range(1, len(parts) + 1)]
    names += [name + "." + item for item in (fromlist or ()) if isinstance(item, str) and item != "*"]
    return names

def _tracked(real, resolve):
    def wrapper(*args, **kwargs):
        before = set(sys.modules)
        frame = _sink()
        _STACK.append(frame)
        try:
            return real(*args, **kwargs)
        finally:
            _STACK.pop()
            for loaded in set(sys.modules) - before:
                _CLOSURE.setdefault(loaded, frame)  # an inner import's own frame came first
                rel, out = _where(getattr(sys.modules.get(loaded), "__file__", None) or 0)
                if rel is not None or out is not None:  # an extension module is mapped, never open()ed
                    frame["files" if rel is not None else "outside"].add(rel if rel is not None else out)
            for name in resolve(*args, **kwargs):
                known = _CLOSURE.get(name)
                if known is not None and known is not frame:
                    _merge(frame, known, writes=False)
            _merge(_STACK[-1], frame)
    return wrapper

_NAMES = set()  # every name an import looked for: a directory added by that name may now be found

def _looked_for(names):
    for name in names:
        _NAMES.update(name.split("."))
    return names

def _import_names(name, globals=None, locals=None, fromlist=(), level=0):
    return _looked_for(_touched(name, fromlist, level, globals))

def _import_module_names(name, package=None):
    try:
        return _looked_for(_touched(importlib.util.resolve_name(name, package) if name.startswith(".") else name,
                                    (), 0, None))
    except (ImportError, ValueError):
        return []

_INERT, _PATH_ADDERS, _LOADED = set(), set(), {}
_SETS_MODULES = set()  # test modules whose collection (or loading, under unittest) changed the process

_OURS = os.path.realpath(os.path.dirname(_TARGET)) + os.sep if _TARGET else None  # the recorder's and reporter's

_OWN = {}  # a module's file -> whether the module is the workspace's own

def _own_module(module):
    """Whether a module is the workspace's own (True), from elsewhere (False), or the recorder's or
    its reporter's (None: what they keep is not the tests')."""
    try:
        where = object.__getattribute__(module, "__file__")
    except Exception:
        return False
    if not isinstance(where, str):
        return False
    if where not in _OWN:
        _OWN[where] = _file_own(where)
    return _OWN[where]

def _file_own(where):
    if _OURS and os.path.realpath(where).startswith(_OURS):
        return None
    rel = _where(where)[0]
    # an installed library is a library, even in a virtual environment inside the workspace
    return rel is not None and not _INSTALLED.intersection(rel.split(os.sep))

_INSTALLED = frozenset({"site-packages", "dist-packages"})

def _watch(names, **how):
    return _Watch(names, _own_module, **how)

def _loaded_changed(names, bindings):
    """Whether a module loaded during a span is not as its own import left it."""
    return any(_LOADED[name].changed(bindings) for name in names if name in _LOADED)

# the process as the last test left it, kept while no test changes it: one look after each test
# (what changed between two tests counts as the later one's: it runs)
_BETWEEN = [None]

def _before_test():
    watch, now = _BETWEEN[0], frozenset(sys.modules)
    if watch is not None and now != watch.names:
        if now > watch.names:  # loaded since, as their import left them or not: watched from here
            watch.extend(now - watch.names)
        else:
            watch = None
    if watch is None:
        watch = _BETWEEN[0] = _watch(now)
    return watch

def _test_set(watch):
    """Whether the test's run (its fixtures' setup and teardown with it) changed the process the
    tests after it run in: left out, it would not."""
    now = set(sys.modules)
    if watch.changed() or not now >= watch.names or _loaded_changed(now - watch.names, True):
        _BETWEEN[0] = None
        return True
    return False

def _path_added(before):
    """The import path entries the collection added (pytest adds a test file's base directory),
    or None when it took any away or reordered them."""
    kept = [entry for entry in sys.path if entry in before]
    if kept != [entry for entry in before if entry in sys.path] or len(kept) != len(before):
        return None
    return [entry for entry in sys.path if entry not in before]

def _own_frame(real):
    def exec_module(self, module):
        frame = _sink()
        _CLOSURE[module.__name__] = frame  # what this module's first run reads, apart from its package's
        # where it was found: a file added beside it, or earlier on the path, may shadow it
        searched = sys.path if "." not in module.__name__ else [os.path.dirname(getattr(module, "__file__", None) or ".")]
        for entry in searched:
            rel, _out = _where(entry or ".")
            if rel is not None:
                frame["pathdirs"].add(rel)
        _STACK.append(frame)
        try:
            return real(self, module)
        finally:
            _STACK.pop()
            _merge(_STACK[-1], frame)
            _LOADED[module.__name__] = _watch([module.__name__], beside=False)  # as its own import left it
    return exec_module

import importlib.util, importlib._bootstrap_external as _external
_external._LoaderBasics.exec_module = _own_frame(_external._LoaderBasics.exec_module)
builtins.__import__ = _tracked(builtins.__import__, _import_names)
importlib.import_module = _tracked(importlib.import_module, _import_module_names)
_find_spec = importlib.util.find_spec

def _finding(name, package=None):
    _import_module_names(name, package)
    return _find_spec(name, package)

importlib.util.find_spec = _finding
sys.addaudithook(_audit)

def _plain(sink):
    return {"files": sorted(sink["files"]), "dirs": sorted(sink["dirs"]), "pathdirs": sorted(sink["pathdirs"]),
            "outside": sorted(sink["outside"]), "unknown": bool(sink["unknown"])}

def _dump(tests, modules):
    with open(_TARGET, "w") as out:
        json.dump({"version": 1, "executable": sys.executable,
                   "python": sys.version, "global": _plain(_GLOBAL), "names": sorted(_NAMES),
                   "modules": {key: _plain(sink) for key, sink in modules.items()}, "tests": tests,
                   "inert": sorted(_INERT), "path_adders": sorted(_PATH_ADDERS),
                   "sets_modules": sorted(_SETS_MODULES)}, out)
'''

# pytest's plugin: a test module's collection is its tests' loading
INPUTS_SOURCE = INPUTS_CORE_SOURCE + r'''
import pytest
''' + REPORT_ID_SOURCE + r'''
def _rel(path):
    rel, _out = _where(str(path))
    return rel

@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    if not isinstance(collector, pytest.Module):
        yield
        return
    key = _rel(collector.path) or str(collector.path)
    frame = _MODULES.setdefault(key, _sink())
    first, path = set(sys.modules), list(sys.path)
    before = _watch(first, bindings=False, path=False)
    _STACK.append(frame)
    try:
        yield
    finally:
        _STACK.pop()
        own = getattr(getattr(collector, "_obj", None), "__name__", None)
        added = _path_added(path)
        here = os.path.dirname(os.path.realpath(str(collector.path)))
        if (added is not None and all(os.path.realpath(entry) == here for entry in added)
                and not before.changed() and not _loaded_changed(set(sys.modules) - first - {own}, False)
                and not frame["writes"]):
            _INERT.add(key)
            if added:  # its directory added to the path: any other test file there adds it too
                _PATH_ADDERS.add(key)
        else:
            _SETS_MODULES.add(key)

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    frame, watch = _sink(), _before_test()
    _STACK.append(frame)
    try:
        yield
    finally:
        _STACK.pop()
        sets = _test_set(watch)
        path = getattr(item, "path", None)
        _TESTS.append({"nodeid": item.nodeid, "module": _rel(path) if path is not None else None,
                       "files": frame["files"], "dirs": frame["dirs"], "pathdirs": frame["pathdirs"],
                       "outside": frame["outside"],
                       "unknown": frame["unknown"], "sets": sets or frame["writes"]})

def pytest_configure(config):
    inipath = getattr(config, "inipath", None)
    if inipath is not None:
        rel = _rel(inipath)
        if rel is not None:
            _GLOBAL["files"].add(rel)

def pytest_unconfigure(config):
    if not _TARGET:
        return
    try:
        suite = config.getini("junit_suite_name")
    except ValueError:
        suite = "pytest"
    prefix = getattr(config.option, "junitprefix", None) or ""
    _dump([dict(_plain(test), id=_report_id(test["nodeid"], suite, prefix), module=test["module"], sets=test["sets"])
           for test in _TESTS],
          _MODULES)
'''


# unittest's recorder, imported by its reporter (UNITTEST_SITE_SOURCE) in the `python -m unittest`
# process before any test module loads. What loading a test module read (its import, as every
# import statement sees it whatever imported it first, and its load_tests) is its tests'; a class's
# setUpClass/tearDownClass and a module's setUpModule/tearDownModule are each of that class's or
# module's tests; a test's own run (setUp, the test, tearDown, cleanups) is its own and every
# later test's. Whatever runs outside these (unittest's own start, its discovery of test files
# beyond listing them, a fixture hook this Python does not have) is the session's: every test's.
UNITTEST_INPUTS_SOURCE = INPUTS_CORE_SOURCE + UNITTEST_ID_SOURCE + r'''
import atexit, unittest.case, unittest.loader, unittest.suite

_LOADS, _FIXTURES, _ORIGIN, _RAN = {}, {}, {}, []  # module -> its loading; fixture -> its run; test -> its loader's module

def _flat(suite):
    if isinstance(suite, unittest.suite.BaseTestSuite):
        for test in suite:
            yield from _flat(test)
    elif suite is not None:
        yield suite

def _charged(real, keys, before=False):
    # `real` with what it read charged to the sinks `keys` names (the session's when none)
    def wrapper(*args, **kwargs):
        frame, result = _sink(), None
        named = _named(keys, args, None) if before else None
        _STACK.append(frame)
        try:
            result = real(*args, **kwargs)
            return result
        finally:
            _STACK.pop()
            named = named if before else _named(keys, args, result)
            for table, key in named or [(None, None)]:
                _merge(_STACK[-1] if table is None else table.setdefault(key, _sink()), frame)
    return wrapper

def _named(keys, args, result):
    try:
        return [item for item in keys(args, result) if item[1] is not None]
    except Exception:
        return []

def _loaded_by(name):
    def keys(args, result):
        for test in _flat(result):
            _ORIGIN.setdefault(id(test), (test, name))
        return [(_LOADS, name)]
    return keys

def _by_name(args, result):
    names = set()
    for test in _flat(result):
        names.add(_ORIGIN.setdefault(id(test), (test, type(test).__module__))[1])
    return [(_LOADS, name) for name in sorted(names)]

_WALKS = (os.sep + os.path.join("unittest", "loader.py"),)

def _previous(args):  # the class of the test run before (args end with the result)
    return getattr(args[-1], "_previousTestClass", None)

def _class_key(kind):
    return None if kind is None else kind.__module__ + "." + kind.__qualname__

_loader, _suite = unittest.loader.TestLoader, unittest.suite.TestSuite
def _watched_load(real):
    # whether loading a test module changed the process its tests and the others run in
    def wrapper(self, name, *args, **kwargs):
        first = set(sys.modules)
        before = _watch(first, bindings=False, path=False)
        try:
            return real(self, name, *args, **kwargs)
        finally:
            if before.changed() or _loaded_changed(set(sys.modules) - first - {name}, False):
                _SETS_MODULES.add(_module_key(name))
    return wrapper

_loader._get_module_from_name = _watched_load(
    _charged(_loader._get_module_from_name, lambda a, r: [(_LOADS, a[1])]))
_loader.loadTestsFromModule = _charged(_loader.loadTestsFromModule,
                                       lambda a, r: _loaded_by(getattr(a[1], "__name__", None))(a, r))
_loader.loadTestsFromName = _charged(_loader.loadTestsFromName, _by_name)
_fixtures = {"_handleClassSetUp": lambda a, r: [(_FIXTURES, ("class", _class_key(type(a[1]))))],
             "_tearDownPreviousClass": lambda a, r: [(_FIXTURES, ("class", _class_key(_previous(a))))],
             "_handleModuleFixture": lambda a, r: [(_FIXTURES, ("module", type(a[1]).__module__))],
             "_handleModuleTearDown": lambda a, r: [(_FIXTURES, ("module", getattr(_previous(a), "__module__", None)))]}

def _defines(kind, *names):
    return kind is not None and any(getattr(getattr(kind, name, None), "__func__", None)
                                    is not getattr(getattr(unittest.case.TestCase, name), "__func__", 0) for name in names)

def _class_of(kind):  # its module and its name there: what its own fixture may set
    return (kind.__module__, kind.__qualname__.split(".", 1)[0])

def _module_of(name):
    module = sys.modules.get(name)
    return name if name is not None and any(hasattr(module, f) for f in ("setUpModule", "tearDownModule")) else None

# which fixture of its own the call runs, as (module, name left out of the comparison), or None
_owners = {"_handleClassSetUp": lambda a: _class_of(type(a[1])) if (
               getattr(a[2], "_previousTestClass", None) is not type(a[1]) and _defines(type(a[1]), "setUpClass")) else None,
           "_tearDownPreviousClass": lambda a: _class_of(_previous(a)) if (
               _previous(a) is not type(a[1]) and (_defines(_previous(a), "tearDownClass")
                                                     or getattr(_previous(a), "_class_cleanups", None))) else None,
           "_handleModuleFixture": lambda a: (_module_of(type(a[1]).__module__), None) if (
               getattr(_previous(a), "__module__", None) != type(a[1]).__module__) else None,
           "_handleModuleTearDown": lambda a: (_module_of(getattr(_previous(a), "__module__", None)), None)}
_SETS = set()  # fixtures whose run changed the process the later tests run in

def _fixture(real, keys, owner):
    charged = _charged(real, keys, before=True)
    def wrapper(*args, **kwargs):
        try:
            own = owner(args)
        except Exception:
            own = ("", None)  # not known: compared whole
        if own is None or own[0] is None:
            return charged(*args, **kwargs)
        first = set(sys.modules)
        before = _watch(first, skip=own[0] if own[1] is None else None, leave=own if own[1] is not None else None)
        try:
            return charged(*args, **kwargs)
        finally:
            _BETWEEN[0] = None  # what its fixture did is not the next test's
            if before.changed() or _loaded_changed(set(sys.modules) - first, True):
                _SETS.update(key for _table, key in _named(keys, args, None))
    return wrapper

for _name, _keys in _fixtures.items():
    if hasattr(_suite, _name):
        setattr(_suite, _name, _fixture(getattr(_suite, _name), _keys, _owners[_name]))

def _run_one(real):
    def wrapper(self, *args, **kwargs):
        frame, watch = _sink(), _before_test()
        _STACK.append(frame)
        try:
            return real(self, *args, **kwargs)
        finally:
            _STACK.pop()
            if len(_STACK) > 1:  # a test run inside another's, or inside a fixture: theirs too
                _merge(_STACK[-1], frame)
            frame["sets"] = _test_set(watch)
            _RAN.append((self, _ORIGIN.get(id(self), (self, type(self).__module__))[1], frame))
    return wrapper

unittest.case.TestCase.__call__ = _run_one(unittest.case.TestCase.__call__)

def _module_reads(name):
    # what loading it read, with its packages' loading: every import of it saw them
    sink, parts = _sink(), name.split(".")
    for end in range(1, len(parts) + 1):
        prefix = ".".join(parts[:end])
        for table in (_LOADS, _CLOSURE):
            if prefix in table:
                _merge(sink, table[prefix])
    return sink

def _module_key(name):
    rel, _out = _where(getattr(sys.modules.get(name), "__file__", None) or 0)
    return rel if rel is not None else "unittest:" + name

@atexit.register
def _write_inputs():
    if not _TARGET:
        return
    tests, modules = [], {}
    for test, origin, frame in _RAN:
        kind = type(test)
        fixtures = (("class", _class_key(kind)), ("module", kind.__module__))
        for key in fixtures:
            if key in _FIXTURES:
                _merge(frame, _FIXTURES[key])
        key = _module_key(origin)
        _merge(modules.setdefault(key, _sink()), _module_reads(origin))
        tests.append(dict(_plain(frame), id="::".join(p for p in _ident(test) if p), module=key,
                          sets=frame["sets"] or frame["writes"] or any(fixture in _SETS for fixture in fixtures)))
    _dump(tests, modules)
'''
