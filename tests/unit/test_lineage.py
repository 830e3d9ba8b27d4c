"""The wrong value's tokens and exact matching."""

from __future__ import annotations

import pytest

from vacant.lineage import contains, salient, tokens


def test_tokens_split_literals_from_identifiers():
    literal, identifiers = tokens('RATE = 0.0725  # "net rate" for region_eu, x = 4')
    assert literal == {"0.0725", "net rate", "4"}
    assert identifiers == {"RATE", "region_eu"}  # short names and keywords are not salient


def test_salient_prefers_new_literals_over_identifiers():
    assert salient("RATE = 0.09", "RATE = 0.08") == {"0.09"}
    assert salient("total = price_eur * quantity", "total = price_usd * quantity") == {"price_eur"}
    assert salient("return a - b", "return a + b") == set()  # nothing salient: no lineage possible


@pytest.mark.parametrize("content, found", [
    ("legacy: RATE = 0.0725 (2019)", True),
    ("the rate was 0.07255 once", False),  # exact, whole-token: no prefix match
    ("rate 10.0725", False),
    ("", False),
])
def test_contains_is_exact(content, found):
    assert contains(content, {"0.0725"}) is found


def test_contains_needs_every_token_and_a_non_empty_value():
    assert contains("a 12% rise and 40% fall", {"12%", "40%"})
    assert not contains("a 12% rise", {"12%", "40%"})
    assert not contains("anything", set())
