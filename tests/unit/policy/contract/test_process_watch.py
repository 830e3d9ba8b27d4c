"""The watch that decides whether a test's run changed the process the later tests run in
(runner_sources.WATCH_SOURCE, loaded by the inputs recorder in pytest's and unittest's process).

Generated: a module of nested containers, classes and plain objects (the workspace's own, watched
all the way down, or a library's, watched one level into its values), and a sequence of edits at
generated places. The oracle is how each edit was made, not what the watch saw: an edit that puts
another object where one was, adds or removes one, at a depth the watch covers, is a change; one
that puts the very same object back (even after removing it), writes a name the watch leaves out
(a module's dunder names, unittest's bookkeeping on a class, the runner's own environment
variable) is none. After each edit that is none, the next real one must still be seen."""

from __future__ import annotations

import decimal
import logging
import os
import random
import sys
import types
import warnings
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vacant.policy.contract.runner_sources import WATCH_SOURCE


def _namespace() -> dict:
    space: dict = {"__name__": "vacant_watch_under_test"}
    exec(compile(WATCH_SOURCE, "<watch>", "exec"), space)
    return space


WATCH = _namespace()


class Plain:
    """A plain object: its attributes are its state."""


def _node(draw, depth: int):
    kind = draw(st.sampled_from(("int", "str", "dict", "list", "object", "class", "tuple")
                                if depth < 4 else ("int", "str")))
    if kind == "int":
        return draw(st.integers(300, 10**6))  # past the small ints CPython shares
    if kind == "str":
        return "s" + draw(st.text("abc", max_size=3))
    children = [_node(draw, depth + 1) for _ in range(draw(st.integers(0, 3)))]
    if kind == "dict":
        return {f"k{n}": child for n, child in enumerate(children)}
    if kind == "list":
        return children
    if kind == "tuple":
        return tuple(children)
    holder = Plain() if kind == "object" else type(f"C{depth}", (), {})
    for n, child in enumerate(children):
        setattr(holder, f"a{n}", child)
    return holder


@st.composite
def modules(draw) -> dict:
    return {f"v{n}": _node(draw, 1) for n in range(draw(st.integers(1, 4)))}


def _places(value, depth: int, out: list) -> list:
    """(container, depth) for every container under `value` that an edit can reach."""
    if isinstance(value, (dict, list)) or isinstance(value, (Plain, type)):
        out.append((value, depth))
    members = (value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple))
               else [getattr(value, k) for k in _keys(value)] if isinstance(value, (Plain, type))
               else [])
    for member in list(members):
        _places(member, depth + 1, out)
    return out


@dataclass
class Edit:
    how: str  # "replace", "add", "remove", "same", "readd", "dunder", "bookkeeping"
    pick: int


edits = st.lists(st.builds(Edit, st.sampled_from(("replace", "add", "remove", "same", "readd", "dunder",
                                                  "bookkeeping")), st.integers(0, 10**6)), min_size=1, max_size=6)


def _apply(container, edit: Edit) -> bool:
    """Makes the edit on `container`; whether it changed what the container holds (the oracle)."""
    if edit.how == "dunder":  # left out of a module's values only (its warning registry)
        _put(container, "__warningregistry__", {})
        return container is not MODULE_DICT[0]
    if edit.how == "bookkeeping":  # left out on a class only
        _put(container, "tearDown_exceptions", [])
        return not isinstance(container, type)
    keys = _keys(container)
    if edit.how == "add" or not keys:
        _put(container, f"n{edit.pick}", [edit.pick])
        return True
    key = keys[edit.pick % len(keys)]
    if edit.how == "replace":
        _put(container, key, [edit.pick])
        return True
    if edit.how == "remove":
        _remove(container, key)
        return True
    value = _get(container, key)
    if edit.how == "readd" and not isinstance(container, list):
        _remove(container, key)
    _put(container, key, value)
    return False


MODULE_DICT: list = [None]


UNITTESTS_OWN = {"tearDown_exceptions", "_classSetupFailed", "_class_cleanups"}  # what unittest sets on a class


def _keys(container) -> list:
    if isinstance(container, dict):
        return [k for k in container if not k.startswith("__")]
    if isinstance(container, list):
        return list(range(len(container)))
    return [k for k in vars(container) if not k.startswith("__")
            and not (isinstance(container, type) and k in UNITTESTS_OWN)]


def _put(container, key, value) -> None:
    if isinstance(container, dict):
        container[key] = value
    elif isinstance(container, list):
        if isinstance(key, int) and key < len(container):
            container[key] = value
        else:
            container.append(value)
    else:
        setattr(container, key, value)


def _get(container, key):
    return container[key] if isinstance(container, (dict, list)) else getattr(container, key)


def _remove(container, key) -> None:
    if isinstance(container, dict):
        del container[key]
    elif isinstance(container, list):
        container.pop(key)
    else:
        delattr(container, key)


@pytest.mark.parametrize("own", [True, False], ids=["workspace module", "library module"])
@settings(max_examples=150, deadline=None)
@given(values=modules(), history=edits)
def test_the_watch_sees_every_change_it_covers_and_nothing_else(own, values, history):
    module = types.ModuleType("vacant_watched_module")
    module.__dict__.update(values)
    MODULE_DICT[0] = module.__dict__
    sys.modules[module.__name__] = module
    try:
        watch = WATCH["_Watch"]([module.__name__], lambda m: own if m is module else False, beside=False)
        assert not watch.changed()
        for edit in history:
            places = [(c, d) for c, d in _places(values, 0, []) if d >= 1] + [(module.__dict__, 0)]
            # a library module is watched one level into its values: its dict (0) and their containers (1)
            covered = [(c, d) for c, d in places if own or d <= 1]
            container, depth = covered[edit.pick % len(covered)]
            if container is module.__dict__ and edit.how == "readd":
                edit = Edit("same", edit.pick)
            changed = _apply(container, edit)
            if container is module.__dict__:
                values = {k: v for k, v in module.__dict__.items() if not k.startswith("__")}
            seen = watch.changed()
            assert seen == changed, (edit, depth, type(container).__name__)
            if changed:  # a new watch for the next edit, as after a test that set something
                watch = WATCH["_Watch"]([module.__name__], lambda m: own if m is module else False, beside=False)
    finally:
        del sys.modules[module.__name__]


logging.getLogger("vacant.watch.t")
HANDLER = logging.NullHandler()
PROCESS_EDITS = {
    "an environment variable": (lambda: os.environ.__setitem__("VACANT_WATCH_T", "1"),
                                lambda: os.environ.pop("VACANT_WATCH_T")),
    "decimal's precision": (lambda: setattr(decimal.getcontext(), "prec", 5),
                            lambda: setattr(decimal.getcontext(), "prec", 28)),
    "a warning filter": (lambda: warnings.filters.insert(0, ("ignore", None, Warning, None, 0)),
                         lambda: warnings.filters.pop(0)),
    "the import path": (lambda: sys.path.append("/vacant-watch-t"), lambda: sys.path.remove("/vacant-watch-t")),
    "the working directory": (lambda: os.chdir("/"), None),
    "a logger's level": (lambda: logging.getLogger("vacant.watch.t").setLevel(logging.ERROR),
                         lambda: logging.getLogger("vacant.watch.t").setLevel(logging.NOTSET)),
    "logging disabled": (lambda: logging.disable(logging.CRITICAL), lambda: logging.disable(logging.NOTSET)),
    "a handler on the root logger": (lambda: logging.root.addHandler(HANDLER), lambda: logging.root.removeHandler(HANDLER)),
}


@pytest.mark.parametrize("name", sorted(PROCESS_EDITS))
def test_what_the_process_keeps_beside_its_modules_is_watched(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    edit, undo = PROCESS_EDITS[name]
    watch = WATCH["_Watch"]([], lambda m: False)
    assert not watch.changed()
    edit()
    try:
        assert watch.changed(), name
    finally:
        if undo is not None:
            undo()
    if undo is not None:
        assert not watch.changed(), f"{name} put back"


def test_the_random_state_and_the_runners_own_variable():
    watch = WATCH["_Watch"]([], lambda m: False)
    os.environ["PYTEST_CURRENT_TEST"] = "another test (call)"
    assert not watch.changed()
    random.random()
    assert watch.changed()


def test_a_module_loaded_later_is_watched_from_then_and_the_others_as_before():
    first, later = types.ModuleType("vacant_watch_first"), types.ModuleType("vacant_watch_later")
    first.seen, later.registry = [], {}
    sys.modules.update({first.__name__: first, later.__name__: later})
    try:
        watch = WATCH["_Watch"]([first.__name__], lambda m: False, beside=False)
        first.seen.append("a test ran")
        watch.extend([later.__name__])
        assert watch.changed(), "what changed before the watch grew is still seen"
        watch = WATCH["_Watch"]([first.__name__], lambda m: False, beside=False)
        watch.extend([later.__name__])
        assert not watch.changed()
        later.registry["plugin"] = object()
        assert watch.changed(), "the module it grew by is watched"
    finally:
        for module in (first, later):
            del sys.modules[module.__name__]
