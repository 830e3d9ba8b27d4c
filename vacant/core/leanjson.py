"""`json.loads` and `json.dumps` through the interpreter's C module `_json`, without `import json`.

`import json` compiles regular expressions at import (its scanner, decoder and encoder modules),
so it loads `re` and, with it, `enum`, `functools` and `collections`: a hook process that only
reads a small payload and appends a line pays for all of them. The C module is what `json` itself
uses on the same calls (its C scanner and C encoder); this module builds them the way `json` does
and returns what `json` returns, value for value and character for character (a generated test
holds it to `json`'s answers).

What stays with `json` (imported on those paths only): an `indent`, which `json` serialises in
Python; input that does not parse, so that the error is `json`'s own `JSONDecodeError` (a
ValueError) with `json`'s message; and an interpreter without `_json`.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing's, without importing typing: that costs each hook call 15 ms CPU (hook/lean.py)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def _c_module() -> Any:
    """`_json`, or None in an interpreter built without it (json then answers: its pure-Python path)."""
    try:
        import _json
    except ImportError:
        return None
    return _json


C_MODULE = _c_module()

WHITESPACE = " \t\n\r"  # json.decoder.WHITESPACE: r'[ \t\n\r]*'
CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}  # json.decoder._CONSTANTS


class _Context:
    """What `_json.make_scanner` reads from its context: a default `json.JSONDecoder`'s attributes."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = CONSTANTS.__getitem__

    def __init__(self) -> None:
        self.memo: dict[str, str] = {}  # json's pure-Python scanner keeps its key memo here; the C one keeps its own


_scan_once = C_MODULE.make_scanner(_Context()) if C_MODULE is not None else None


def loads(text: str | bytes | bytearray) -> Any:
    """`json.loads(text)`: the same value, the same errors (json's JSONDecodeError, a ValueError)."""
    if _scan_once is None:
        return _json_loads(text)
    if isinstance(text, str):
        if text.startswith("\ufeff"):
            return _json_loads(text)  # json's "Unexpected UTF-8 BOM" error
        source = text
    elif isinstance(text, (bytes, bytearray)):
        source = text.decode(detect_encoding(text), "surrogatepass")
    else:
        raise TypeError(f"the JSON object must be str, bytes or bytearray, not {text.__class__.__name__}")
    start = len(source) - len(source.lstrip(WHITESPACE))
    try:
        value, end = _scan_once(source, start)
    except (StopIteration, SystemError):
        # Not JSON. The C scanner raises json.decoder.JSONDecodeError itself only once that module
        # is loaded (before that: StopIteration, or a SystemError on 3.11): json answers instead,
        # with its own error and message.
        return _json_loads(text)
    if end != len(source) and source[end:].lstrip(WHITESPACE):
        return _json_loads(text)  # json's "Extra data" error
    return value


def detect_encoding(data: bytes | bytearray) -> str:
    """json.detect_encoding: the encoding of a JSON document given as bytes (RFC 8259 / 4627)."""
    if data.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return "utf-32"
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    if data.startswith(b"\xef\xbb\xbf"):
        return "utf-8-sig"
    if len(data) >= 4:
        if not data[0]:
            return "utf-16-be" if data[1] else "utf-32-be"
        if not data[1]:
            return "utf-16-le" if data[2] or data[3] else "utf-32-le"
    elif len(data) == 2:
        if not data[0]:
            return "utf-16-be"
        if not data[1]:
            return "utf-16-le"
    return "utf-8"


def dumps(obj: Any, *, skipkeys: bool = False, ensure_ascii: bool = True, check_circular: bool = True,
          allow_nan: bool = True, indent: int | str | None = None, separators: tuple[str, str] | None = None,
          default: Callable[[Any], Any] | None = None, sort_keys: bool = False) -> str:
    """`json.dumps(obj, ...)` with the same keyword arguments (but `cls`): the same text, the same errors."""
    if C_MODULE is None or indent is not None:
        import json

        return json.dumps(obj, skipkeys=skipkeys, ensure_ascii=ensure_ascii, check_circular=check_circular,
                          allow_nan=allow_nan, indent=indent, separators=separators, default=default,
                          sort_keys=sort_keys)
    item_separator, key_separator = separators if separators is not None else (", ", ": ")
    encode_string = C_MODULE.encode_basestring_ascii if ensure_ascii else C_MODULE.encode_basestring
    if isinstance(obj, str):
        return str(encode_string(obj))  # as JSONEncoder.encode
    encoder = C_MODULE.make_encoder({} if check_circular else None, default or _not_serializable, encode_string,
                                    None, key_separator, item_separator, sort_keys, skipkeys, allow_nan)
    return "".join(encoder(obj, 0))


def _not_serializable(obj: Any) -> Any:
    """json.JSONEncoder.default: what json raises for a value it cannot serialise."""
    raise TypeError(f"Object of type {obj.__class__.__name__} is not JSON serializable")


def _json_loads(text: str | bytes | bytearray) -> Any:
    """json.loads itself: on the paths that need its answer (its errors), or its pure-Python scanner."""
    import json

    return json.loads(text)
