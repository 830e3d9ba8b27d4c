"""vacant.core.leanstd against the standard library's own helpers, the oracle, on generated uses."""

import collections
import contextlib
import copy
import keyword
import pickle
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from vacant.core import leanstd

NAMES = st.text(alphabet="abcxyz_0", min_size=1, max_size=4).filter(
    lambda name: name.isidentifier() and not name.startswith("_") and not keyword.iskeyword(name))
FIELDS = st.lists(NAMES, min_size=0, max_size=5, unique=True)
VALUES = st.one_of(st.integers(), st.text(max_size=3), st.none(), st.lists(st.integers(), max_size=2))


def outcome(action):
    """(value, None) or (None, the exception's type)."""
    try:
        return action(), None
    except Exception as error:  # noqa: BLE001 - the type is the answer
        return None, type(error)


def both(fields, defaults):
    return (collections.namedtuple("Rec", fields, defaults=defaults),
            leanstd.namedtuple("Rec", fields, defaults=defaults))


def same(left, right) -> None:
    """Two results of the two namedtuple types: values, repr, fields."""
    if left[1] or right[1]:
        assert left[1] == right[1], (left, right)
        return
    assert tuple(left[0]) == tuple(right[0])
    assert repr(left[0]) == repr(right[0])
    assert left[0]._asdict() == right[0]._asdict()


@settings(max_examples=300)
@given(fields=FIELDS, n_defaults=st.integers(0, 6), data=st.data())
def test_namedtuple_construction_binds_as_the_stdlib(fields, n_defaults, data) -> None:
    defaults = data.draw(st.lists(VALUES, min_size=n_defaults, max_size=n_defaults))
    made = [outcome(lambda: both(fields, defaults)[0]), outcome(lambda: both(fields, defaults)[1])]
    assert made[0][1] == made[1][1]
    if made[0][1]:
        return
    oracle, lean = both(fields, defaults)
    assert oracle._fields == lean._fields and oracle._field_defaults == lean._field_defaults
    assert oracle.__match_args__ == lean.__match_args__ and oracle.__doc__ == lean.__doc__
    assert oracle.__new__.__defaults__ == lean.__new__.__defaults__
    args = data.draw(st.lists(VALUES, max_size=len(fields) + 2))
    names = data.draw(st.lists(st.sampled_from([*fields, "other"]), unique=True, max_size=len(fields) + 1))
    kwargs = {name: data.draw(VALUES) for name in names}
    same(outcome(lambda: oracle(*args, **kwargs)), outcome(lambda: lean(*args, **kwargs)))
    same(outcome(lambda: oracle._make(args)), outcome(lambda: lean._make(args)))
    full = data.draw(st.lists(VALUES, min_size=len(fields), max_size=len(fields)))
    changes = {name: data.draw(VALUES) for name in names}
    same(outcome(lambda: oracle(*full)._replace(**changes)), outcome(lambda: lean(*full)._replace(**changes)))
    record = lean(*full)
    assert copy.deepcopy(record) == record and type(copy.copy(record)) is lean
    assert [getattr(record, name) for name in fields] == full
    assert isinstance(record, tuple) and record == tuple(full)
    assert outcome(lambda: hash(record)) == outcome(lambda: hash(tuple(full)))


def test_namedtuple_names_are_checked_as_the_stdlib() -> None:
    for fields in (["a", "a"], ["_a"], ["1a"], ["a b"], "a,,b", "a, b"):
        assert outcome(lambda: collections.namedtuple("R", fields))[1] == outcome(
            lambda: leanstd.namedtuple("R", fields))[1], fields
    assert outcome(lambda: leanstd.namedtuple("not valid", "a"))[1] is ValueError


Pickled = leanstd.namedtuple("Pickled", "a b", defaults=(2,))


def test_namedtuple_pickles_subclasses_and_module() -> None:
    assert Pickled.__module__ == __name__ and Pickled.__qualname__ == "Pickled"
    assert pickle.loads(pickle.dumps(Pickled(1))) == Pickled(1, 2)

    class Problem(leanstd.namedtuple("Problem", "line kind")):
        def __str__(self) -> str:
            return f"{self.line}: {self.kind}"
    assert str(Problem(3, "torn")) == "3: torn" and Problem(3, "x")._replace(kind="y") == (3, "y")
    assert Pickled[int] is not None  # __class_getitem__, as the stdlib's


# -- context managers: each behaviour of a generator, and of what the `with` body does ------------

class Boom(Exception):
    pass


class Other(Exception):
    pass


BEFORE = ["yield", "raise", "return"]  # before the one yield
AFTER = ["pass", "suppress", "reraise", "raise_other", "yield_again", "stop_iteration", "runtime_from"]
BODY = ["ok", "boom", "stop_iteration", "runtime", "base_exit"]


def generator(before: str, after: str, log: list):
    def gen():
        if before == "raise":
            raise Other("before")
        if before == "return":
            return
        try:
            yield "value"
        except BaseException as error:  # noqa: BLE001 - the behaviour under test
            log.append(type(error).__name__)
            if after == "suppress":
                return
            if after == "raise_other":
                raise Other("after") from error
            if after == "runtime_from":
                raise RuntimeError("wrapped") from error
            if after == "yield_again":
                yield "again"
            raise
        if after == "yield_again":
            try:
                yield "again"
            finally:
                log.append("closed after the second yield")
        if after == "stop_iteration":
            raise StopIteration
        if after == "raise_other":
            raise Other("after clean")
    return gen


def run_with(factory, body: str, log: list):
    """What a `with` over factory() gave: (what escaped, its cause's type, its context's type, the
    value entered); a summary both implementations must share."""
    entered = None
    try:
        with factory() as value:
            entered = value
            if body == "boom":
                raise Boom("body")
            if body == "stop_iteration":
                raise StopIteration("body")
            if body == "runtime":
                raise RuntimeError("body")
            if body == "base_exit":
                raise KeyboardInterrupt
    except BaseException as error:  # noqa: BLE001 - the escape is the answer
        # the log as the `with` left it: its traceback still holds the generator, closed or not
        return (type(error).__name__, str(error), type(error.__cause__).__name__,
                type(error.__context__).__name__, entered, list(log))
    return (None, None, None, None, entered, list(log))


@settings(max_examples=200)
@given(before=st.sampled_from(BEFORE), after=st.sampled_from(AFTER), body=st.sampled_from(BODY))
def test_contextmanager_behaves_as_contextlib(before, after, body) -> None:
    logs: tuple[list, list] = ([], [])
    oracle = contextlib.contextmanager(generator(before, after, logs[0]))
    lean = leanstd.contextmanager(generator(before, after, logs[1]))
    assert run_with(oracle, body, logs[0]) == run_with(lean, body, logs[1])


def cm_behaving(kind: str, log: list, index: int):
    class Manager:
        def __enter__(self):
            log.append(f"enter {index}")
            if kind == "fail_enter":
                raise Other(f"enter {index}")
            return index

        def __exit__(self, typ, value, tb):
            log.append(f"exit {index} {getattr(typ, '__name__', None)}")
            if kind == "suppress":
                return True
            if kind == "raise":
                raise Other(f"exit {index}")
            return False
    return Manager()


@settings(max_examples=300)
@given(kinds=st.lists(st.sampled_from(["pass", "suppress", "raise", "fail_enter"]), max_size=4),
       body=st.sampled_from(BODY), callback=st.booleans(), close_early=st.booleans(), in_handler=st.booleans())
def test_exitstack_unwinds_as_contextlib(kinds, body, callback, close_early, in_handler) -> None:
    def scenario(stack_type, log):
        def factory():
            return stack_type()

        class Wrapped:
            def __enter__(self):
                self.stack = factory().__enter__()
                return self.stack

            def __exit__(self, *exc):
                return self.stack.__exit__(*exc)

        def go():
            with stack_type() as stack:
                for index, kind in enumerate(kinds):
                    stack.enter_context(cm_behaving(kind, log, index))
                if callback:
                    stack.callback(log.append, "callback")
                if close_early:
                    stack.close()
                    log.append("closed")
                if body == "boom":
                    raise Boom("body")
                if body == "runtime":
                    raise RuntimeError("body")
        try:
            if in_handler:
                try:
                    raise ValueError("being handled")
                except ValueError:
                    go()
            else:
                go()
        except BaseException as error:  # noqa: BLE001 - the escape is the answer
            chain, seen = [], error
            while seen is not None and len(chain) < 8:
                chain.append((type(seen).__name__, str(seen)))
                seen = seen.__context__
            return chain
        return None

    logs: tuple[list, list] = ([], [])
    assert scenario(contextlib.ExitStack, logs[0]) == scenario(leanstd.ExitStack, logs[1])
    assert logs[0] == logs[1]


def test_exitstack_pop_all_and_refusal() -> None:
    for stack_type in (contextlib.ExitStack, leanstd.ExitStack):
        log: list = []
        with stack_type() as stack:
            stack.callback(log.append, 1)
            moved = stack.pop_all()
        assert log == []
        moved.close()
        assert log == [1]
        assert outcome(lambda: stack_type().enter_context(object()))[1] is TypeError


def test_nullcontext_and_bounded_cache() -> None:
    with leanstd.nullcontext(5) as value:
        assert value == 5
    calls: list = []

    @leanstd.bounded_cache(3)
    def square(n: int) -> int:
        calls.append(n)
        return n * n
    for n in [1, 2, 1, 3, 4, 5, 1, 1]:
        assert square(n) == n * n
    assert calls.count(1) <= 2 and len(calls) < 8  # cached, and bounded: it forgot when full
    assert square.__wrapped__(6) == 36 and square.__name__ == "square"


def test_no_heavy_module_at_import() -> None:
    """The point of the module: importing it loads none of collections, functools, contextlib."""
    import subprocess
    code = ("import sys; sys.path.insert(0, %r); import vacant.core.leanstd as l; "
            "l.namedtuple('R', 'a b', defaults=(1,))(0); "
            "print(sorted({'collections', 'functools', 'contextlib', 'types', 'operator', 'typing'} & set(sys.modules)))"
            % str(__import__("pathlib").Path(leanstd.__file__).parents[2]))
    out = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
