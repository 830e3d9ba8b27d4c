"""The few standard-library helpers the hook's hot path uses, without the modules that define
them: `namedtuple` (collections), `contextmanager`, `ExitStack` and `nullcontext` (contextlib),
and `bounded_cache` (in place of functools.lru_cache on a pure function).

Why: collections, functools and contextlib (with operator, reprlib, keyword and types, which they
import) are about 230 KB of bytecode, about 5 ms of every hook call answered in-process
(bench/bench_fallback.py), for a record type, two context managers and a cache. Builtins and
`_collections` (built into the interpreter) only.

Contract: each behaves as the standard library's does for the uses vacant makes of it, and a test
holds each to the standard library's own as the oracle on generated uses
(tests/unit/core/test_leanstd.py): the same values, attributes, reprs, pickles and exceptions
(their types; messages may be worded otherwise). Limits, where the stdlib does more:
- `namedtuple`: no `rename=`; field names are checked to be unique identifiers that do not
  start with an underscore, not against the keyword list (vacant's are its own literals).
- `contextmanager`: the result is a context manager, not also a decorator (no ContextDecorator).
- `ExitStack`: `enter_context`, `callback`, `close`, `pop_all`; no `push`.
- `bounded_cache`: forgets everything when full (not least recently used first); no
  `cache_info`. For pure functions of hashable arguments only.
"""

import sys
from _collections import _tuplegetter  # type: ignore[import-not-found]  # built in, no stub

TYPE_CHECKING = False  # typing's, without importing typing: that costs each hook call 15 ms CPU (hook/lean.py)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any, TypeVar

    _F = TypeVar("_F", bound="Callable[..., Any]")

_GenericAlias = type(list[int])  # types.GenericAlias, without importing types


# -- namedtuple ----------------------------------------------------------------------------------


def _namedtuple(typename: str, field_names: "str | Iterable[str]", *,
               defaults: "Iterable[object] | None" = None, module: str | None = None) -> type:
    """collections.namedtuple(typename, field_names, defaults=…, module=…), without exec."""
    fields = _field_names(typename, field_names)
    if defaults is not None:
        defaults = tuple(defaults)
    if len(defaults or ()) > len(fields):
        raise TypeError("Got more default values than field names")
    field_defaults = dict(reversed(list(zip(reversed(fields), reversed(defaults or ())))))
    size = len(fields)
    tuple_new = tuple.__new__

    def __new__(cls: type, *args: "Any", **kwargs: "Any") -> "Any":
        if not kwargs and len(args) == size:
            return tuple_new(cls, args)
        return tuple_new(cls, _bind(typename, fields, field_defaults, args, kwargs))

    __new__.__defaults__ = defaults  # as the stdlib's

    __new__.__qualname__ = f"{typename}.__new__"
    namespace: dict[str, object] = {
        "__doc__": f"{typename}({', '.join(fields)}{',' if size == 1 else ''})", "__slots__": (), "_fields": fields,
        "_field_defaults": field_defaults, "__new__": __new__, "_make": _MAKE, "_replace": _replace,
        "__repr__": _repr, "_asdict": _asdict, "__getnewargs__": _getnewargs,
        "__match_args__": fields, "__class_getitem__": _CLASS_GETITEM,
    }
    for index, name in enumerate(fields):
        namespace[name] = _tuplegetter(index, f"Alias for field number {index}")
    result = type(typename, (tuple,), namespace)
    result.__module__ = module if module is not None else sys._getframe(1).f_globals.get("__name__", "__main__")
    return result


# The methods every record type shares (each reads its type's `_fields`): a type is made by
# building one dict, not six functions (a dozen record types load with the hook).


def _make(cls: type, iterable: "Iterable[Any]") -> "Any":
    result: "tuple[Any, ...]" = tuple.__new__(cls, iterable)
    if len(result) != len(cls._fields):  # type: ignore[attr-defined]
        raise TypeError(f"Expected {len(cls._fields)} arguments, got {len(result)}")  # type: ignore[attr-defined]
    return result


def _replace(self: "Any", /, **kwds: "Any") -> "Any":
    result = self._make(map(kwds.pop, self._fields, self))
    if kwds:
        raise ValueError(f"Got unexpected field names: {list(kwds)!r}")
    return result


def _repr(self: "Any") -> str:
    return str(self.__class__.__name__) + "(" + ", ".join(
        f"{name}={value!r}" for name, value in zip(self._fields, self)) + ")"


def _asdict(self: "Any") -> "dict[str, Any]":
    return dict(zip(self._fields, self))


def _getnewargs(self: "Any") -> "tuple[Any, ...]":
    return tuple(self)


_MAKE: "classmethod[Any, Any, Any]" = classmethod(_make)
_CLASS_GETITEM: "classmethod[Any, Any, Any]" = classmethod(_GenericAlias)


def _field_names(typename: str, field_names: "str | Iterable[str]") -> tuple[str, ...]:
    if isinstance(field_names, str):
        field_names = field_names.replace(",", " ").split()
    fields = tuple(map(str, field_names))
    typename = sys.intern(str(typename))
    for name in (typename, *fields):
        if not name.isidentifier():
            raise ValueError(f"Type names and field names must be valid identifiers: {name!r}")
    seen: set[str] = set()
    for name in fields:
        if name.startswith("_"):
            raise ValueError(f"Field names cannot start with an underscore: {name!r}")
        if name in seen:
            raise ValueError(f"Encountered duplicate field name: {name!r}")
        seen.add(name)
    return fields


def _bind(typename: str, fields: tuple[str, ...], defaults: dict[str, object], args: "tuple[Any, ...]",
          kwargs: dict[str, object]) -> "tuple[Any, ...]":
    """The values of a call that is not all positional, as the stdlib's generated signature binds
    them (the same cases raise TypeError)."""
    if len(args) > len(fields):
        raise TypeError(f"{typename}.__new__() takes {len(fields) + 1} positional arguments "
                        f"but {len(args) + 1} were given")
    for name in kwargs:
        if name not in fields:
            raise TypeError(f"{typename}.__new__() got an unexpected keyword argument {name!r}")
        if fields.index(name) < len(args):
            raise TypeError(f"{typename}.__new__() got multiple values for argument {name!r}")
    values = list(args)
    for name in fields[len(args):]:
        if name in kwargs:
            values.append(kwargs[name])
        elif name in defaults:
            values.append(defaults[name])
        else:
            raise TypeError(f"{typename}.__new__() missing required argument: {name!r}")
    return tuple(values)


# -- context managers -----------------------------------------------------------------------------


class _GeneratorContextManager:
    """contextlib._GeneratorContextManager's `with` half (Python 3.11's, line for line)."""

    def __init__(self, func: "Callable[..., Any]", args: "tuple[Any, ...]", kwds: "dict[str, Any]") -> None:
        self.gen = func(*args, **kwds)

    def __enter__(self):  # type: ignore[no-untyped-def]
        try:
            return next(self.gen)
        except StopIteration:
            raise RuntimeError("generator didn't yield") from None

    def __exit__(self, typ, value, traceback) -> bool:  # type: ignore[no-untyped-def]
        if typ is None:
            try:
                next(self.gen)
            except StopIteration:
                return False
            else:
                try:
                    raise RuntimeError("generator didn't stop")
                finally:
                    self.gen.close()
        if value is None:
            value = typ()  # a plain type raised, not an instance
        try:
            self.gen.throw(typ, value, traceback)
        except StopIteration as exc:
            return exc is not value  # the generator caught it (True: suppressed) or re-raised it
        except RuntimeError as exc:
            if exc is value:
                exc.__traceback__ = traceback
                return False
            if isinstance(value, StopIteration) and exc.__cause__ is value:
                value.__traceback__ = traceback
                return False
            raise
        except BaseException as exc:
            if exc is not value:
                raise
            exc.__traceback__ = traceback
            return False
        try:
            raise RuntimeError("generator didn't stop after throw()")
        finally:
            self.gen.close()


def _contextmanager(func: "Callable[..., Any]") -> "Callable[..., Any]":
    """contextlib.contextmanager, for `with` only."""
    def helper(*args, **kwds):  # type: ignore[no-untyped-def]
        return _GeneratorContextManager(func, args, kwds)
    for attr in ("__module__", "__name__", "__qualname__", "__doc__"):
        try:
            setattr(helper, attr, getattr(func, attr))
        except AttributeError:
            pass
    helper.__dict__.update(getattr(func, "__dict__", {}))
    helper.__wrapped__ = func  # type: ignore[attr-defined]
    return helper


class _nullcontext:
    """contextlib.nullcontext."""

    def __init__(self, enter_result: object = None) -> None:
        self.enter_result = enter_result

    def __enter__(self) -> object:
        return self.enter_result

    def __exit__(self, *excinfo: object) -> None:
        pass


class _ExitStack:
    """contextlib.ExitStack (Python 3.11's unwinding, exception contexts included)."""

    def __init__(self) -> None:
        self._exit_callbacks: "list[Callable[..., Any]]" = []

    def pop_all(self) -> "_ExitStack":
        new_stack = type(self)()
        new_stack._exit_callbacks = self._exit_callbacks
        self._exit_callbacks = []
        return new_stack

    def enter_context(self, cm):  # type: ignore[no-untyped-def]
        cls = type(cm)
        try:
            _enter = cls.__enter__
            _exit = cls.__exit__
        except AttributeError:
            raise TypeError(f"'{cls.__module__}.{cls.__qualname__}' object does "
                            f"not support the context manager protocol") from None
        result = _enter(cm)
        self._exit_callbacks.append(_exit.__get__(cm, cls))
        return result

    def callback(self, callback, /, *args, **kwds):  # type: ignore[no-untyped-def]
        def _exit_wrapper(exc_type, exc, tb):  # type: ignore[no-untyped-def]
            callback(*args, **kwds)
        _exit_wrapper.__wrapped__ = callback  # type: ignore[attr-defined]
        self._exit_callbacks.append(_exit_wrapper)
        return callback

    def close(self) -> None:
        self.__exit__(None, None, None)

    def __enter__(self) -> "_ExitStack":
        return self

    def __exit__(self, *exc_details) -> bool:  # type: ignore[no-untyped-def]
        received_exc = exc_details[0] is not None
        frame_exc = sys.exc_info()[1]  # the innermost exception being handled where the stack unwinds

        def _fix_exception_context(new_exc: "Any", old_exc: "Any") -> None:
            # context to the previous exception in the stack, not to the one the frame handles
            while 1:
                exc_context = new_exc.__context__
                if exc_context is None or exc_context is old_exc:
                    return
                if exc_context is frame_exc:
                    break
                new_exc = exc_context
            new_exc.__context__ = old_exc

        suppressed_exc = False
        pending_raise = False
        while self._exit_callbacks:
            cb = self._exit_callbacks.pop()
            try:
                if cb(*exc_details):
                    suppressed_exc = True
                    pending_raise = False
                    exc_details = (None, None, None)
            except BaseException:  # noqa: BLE001 - passed on to the next callback, raised at the end
                new_exc_details = sys.exc_info()
                _fix_exception_context(new_exc_details[1], exc_details[1])
                pending_raise = True
                exc_details = new_exc_details
        if pending_raise:
            try:
                fixed_ctx = exc_details[1].__context__  # raising it again would reset its context
                raise exc_details[1]
            except BaseException:
                exc_details[1].__context__ = fixed_ctx
                raise
        return received_exc and suppressed_exc


# -- a cache ----------------------------------------------------------------------------------------


def bounded_cache(maxsize: int) -> "Callable[[_F], _F]":
    """A memo of a pure function of hashable positional arguments, of at most `maxsize` entries:
    when full it starts again empty (simpler than least-recently-used, the same answers)."""
    def decorate(func: "_F") -> "_F":
        memo: "dict[tuple[Any, ...], Any]" = {}

        def cached(*args):  # type: ignore[no-untyped-def]
            try:
                return memo[args]
            except KeyError:
                pass
            result = func(*args)
            if len(memo) >= maxsize:
                memo.clear()
            memo[args] = result
            return result
        cached.__name__, cached.__qualname__, cached.__doc__ = func.__name__, func.__qualname__, func.__doc__
        cached.__wrapped__ = func  # type: ignore[attr-defined]
        cached.cache_clear = memo.clear  # type: ignore[attr-defined]
        return cached  # type: ignore[return-value]  # the same signature
    return decorate


if TYPE_CHECKING:  # mypy knows the standard library's by name (a namedtuple's fields, a manager's types)
    from collections import namedtuple as namedtuple
    from contextlib import ExitStack as ExitStack
    from contextlib import contextmanager as contextmanager
    from contextlib import nullcontext as nullcontext
else:
    namedtuple, contextmanager, ExitStack, nullcontext = _namedtuple, _contextmanager, _ExitStack, _nullcontext
