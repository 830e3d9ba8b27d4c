"""vacant.core.leanjson answers what `json` answers: the same values from the same text, the same
text from the same values under every option combination vacant passes to json.dumps, the same
error (type and message) for text that is not JSON; and importing it loads neither `json` nor `re`.
The oracle is the standard library's json module, run on the same input."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vacant.core import leanjson

REPO = Path(__file__).resolve().parents[3]

# the option combinations vacant's code passes to json.dumps (indent is json's own path)
VACANT_OPTIONS = [
    {},
    {"sort_keys": True},
    {"separators": (",", ":")},
    {"sort_keys": True, "separators": (",", ":")},
    {"sort_keys": True, "separators": (",", ":"), "ensure_ascii": True, "allow_nan": False},
    {"ensure_ascii": False},
    {"ensure_ascii": False, "separators": (",", ":")},
    {"ensure_ascii": False, "sort_keys": True},
    {"ensure_ascii": False, "sort_keys": True, "separators": (",", ":")},
    {"default": str, "sort_keys": True},
    {"default": str, "sort_keys": True, "separators": (",", ":")},
    {"default": str, "ensure_ascii": False, "separators": (",", ":")},
    {"sort_keys": False},
    {"indent": 1},
    {"indent": 1, "sort_keys": True},
    {"indent": 2, "ensure_ascii": False},
]

text = st.one_of(st.text(), st.text(st.characters(codec="utf-8")),
                 st.text(st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)),  # lone surrogates
                 st.text(alphabet="\"\\/\b\f\n\r\t\x00\x1f\x7f\u2028\u00e9\U0001f600"))
ints = st.one_of(st.integers(), st.integers(min_value=-(10 ** 400), max_value=10 ** 400))
floats = st.one_of(st.floats(allow_nan=False, allow_infinity=False),
                   st.sampled_from([-0.0, 0.0, 1e308, -1e308, 5e-324, 1e-320, 2.0 ** 53, 0.1, 1e16, 1e22]))
scalars = st.one_of(st.none(), st.booleans(), ints, floats, text)
values = st.recursive(scalars, lambda children: st.one_of(st.lists(children, max_size=5),
                                                          st.dictionaries(text, children, max_size=5)),
                      max_leaves=40)


def same(a: object, b: object) -> bool:
    """Equal, and equal in type and sign too (1 vs 1.0 vs True, 0.0 vs -0.0: repr tells them apart)."""
    return a == b and repr(a) == repr(b)


def outcome(call, *args, **kwargs) -> tuple[str, object]:
    """("ok", value) or (exception type, message): what a call answered."""
    try:
        return "ok", call(*args, **kwargs)
    except Exception as error:  # noqa: BLE001 - the oracle's exception is part of the answer
        return type(error).__name__, str(error)


@pytest.mark.slow
@given(values)
@settings(max_examples=120)
def test_loads_reads_what_json_reads(value):
    for dumped in (json.dumps(value), json.dumps(value, ensure_ascii=False), json.dumps(value, indent=2)):
        assert same(leanjson.loads(dumped), json.loads(dumped)), dumped
    as_bytes = json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")
    assert same(leanjson.loads(as_bytes), json.loads(as_bytes))


@pytest.mark.slow
@given(values, st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32",
                                "utf-32-le", "utf-32-be"]))
@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow])  # a loaded CI machine draws slowly
def test_loads_reads_bytes_in_every_encoding_json_detects(value, encoding):
    data = json.dumps(value).encode(encoding)  # ensure_ascii: nothing a codec could refuse
    assert same(leanjson.loads(data), json.loads(data))
    assert same(leanjson.loads(bytearray(data)), json.loads(bytearray(data)))


@pytest.mark.slow
@given(values, st.sampled_from(VACANT_OPTIONS))
@settings(max_examples=200)
def test_dumps_writes_what_json_writes(value, options):
    assert leanjson.dumps(value, **options) == json.dumps(value, **options)


@pytest.mark.slow
@given(st.dictionaries(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=3)),
                       st.integers(), max_size=6),
       st.sampled_from(VACANT_OPTIONS + [{"skipkeys": True}, {"allow_nan": False}]))
def test_dumps_keys_and_refusals_are_jsons(mapping, options):
    """Non-string keys are converted, or refused (mixed types under sort_keys; NaN without allow_nan), as json does."""
    assert outcome(leanjson.dumps, mapping, **options) == outcome(json.dumps, mapping, **options)


def test_dumps_refuses_what_json_refuses_with_jsons_error():
    circular: list = []
    circular.append(circular)
    refused = [(circular, {}), ({"a": object()}, {}), ({(1, 2): 1}, {}), (float("nan"), {"allow_nan": False}),
               ({"x": {1, 2}}, {"sort_keys": True}), ({(1, 2): 1}, {"skipkeys": True})]
    for value, options in refused:
        expected = outcome(json.dumps, value, **options)
        assert outcome(leanjson.dumps, value, **options) == expected, (value, options, expected)
    assert leanjson.dumps({"x": {1}}, default=sorted) == json.dumps({"x": {1}}, default=sorted)


def test_the_constants_json_accepts_read_alike():
    for text in ("NaN", "[Infinity, -Infinity, NaN]", '{"a": -Infinity}', "1e400", "-1e400", "-0.0", "-0"):
        ours, theirs = leanjson.loads(text), json.loads(text)
        assert json.dumps(ours) == json.dumps(theirs)
        assert repr(ours).replace("nan", "") == repr(theirs).replace("nan", "")  # nan != nan: compare the rest
    assert math.isnan(leanjson.loads("NaN"))


BROKEN = ["", " ", "[", "[1,", "[1 2]", '{"a" 1}', '{"a": 1,}', '"abc', '"a\x01"', "[1]x", "[1] 2", "\ufeff[1]",
          "nul", "tru", "01", "1.", ".5", "+1", "'a'", '{1: 2}', "[1]]", '"\\x"', '"\\ud800"x', "-", "--1", "1e",
          b"\xff\xfe", b"[1, \xff]", b"\x00[", "\t\n", "[1,\n2,\n]"]


@pytest.mark.parametrize("bad", BROKEN, ids=range(len(BROKEN)))
def test_text_that_is_not_json_gets_jsons_error(bad):
    assert outcome(leanjson.loads, bad) == outcome(json.loads, bad)
    with pytest.raises(ValueError):
        leanjson.loads(bad)


@pytest.mark.slow
@given(values, st.integers(min_value=0), st.sampled_from(["", "x", ",", "]", "}", '"', "\\", ":", " 1", "\x00"]))
@settings(max_examples=150)
def test_mangled_json_reads_alike_or_fails_alike(value, at, insert):
    """A character cut or slipped into valid JSON: both read the same value, or both refuse it alike."""
    dumped = json.dumps(value)
    at %= len(dumped) + 1
    for broken in (dumped[:at] + insert + dumped[at:], dumped[:at] + dumped[at + 1:]):
        ours, theirs = outcome(leanjson.loads, broken), outcome(json.loads, broken)
        assert ours[0] == theirs[0] and (same(ours[1], theirs[1]) if ours[0] == "ok" else ours == theirs), broken


def test_loads_refuses_what_is_neither_text_nor_bytes_like_json():
    for value in (None, 1, [b"[]"], memoryview(b"[]")):
        assert outcome(leanjson.loads, value) == outcome(json.loads, value)


def _fresh(code: str) -> str:
    """What a fresh `python -I -S` (the hook's interpreter) prints after `code`, the package importable."""
    probe = f"import sys\nsys.path.insert(0, {str(REPO)!r})\n{code}"
    return subprocess.run([sys.executable, "-I", "-S", "-c", probe], capture_output=True, text=True, check=True).stdout


def test_importing_it_loads_neither_json_nor_re():
    out = _fresh("import vacant.core.leanjson as lj\n"
                 "v = lj.loads(b'{\"a\": [1, 2.5, null, \"\\\\u00e9\"]}')\n"
                 "print(lj.dumps(v, sort_keys=True, separators=(',', ':')))\n"
                 "print(sorted(m for m in ('re', 'json', 'typing', 'enum') if m in sys.modules))")
    assert out.splitlines() == ['{"a":[1,2.5,null,"\\u00e9"]}', "[]"], out


def test_without_the_c_module_it_is_json():
    """An interpreter without `_json`: json's own pure-Python path answers, the same way."""
    out = _fresh("sys.modules['_json'] = None  # the import of _json now fails\n"
                 "import vacant.core.leanjson as lj\n"
                 "assert lj.C_MODULE is None\n"
                 "print(lj.dumps(lj.loads('{\"b\": [1e400, -0.0], \"a\": \"\\u00e9\"}'), sort_keys=True))\n"
                 "try:\n    lj.loads('[1,')\nexcept ValueError as e:\n    print(type(e).__name__, e)")
    assert out.splitlines() == ['{"a": "\\u00e9", "b": [Infinity, -0.0]}',
                                "JSONDecodeError Expecting value: line 1 column 4 (char 3)"]
