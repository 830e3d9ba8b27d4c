"""The one glob translator against an independent matcher: segment by segment, `**` trying every
number of whole segments (a last `**` at least one), each other segment by fnmatch (within a segment its rules are the
glob's), and a pattern used up covering everything below it. Every user of the language (the
contract's globs, `[store] exclude`, pinned inputs) goes through the translator."""

from __future__ import annotations

import fnmatch
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vacant.core.globs import glob_matches, glob_regex, normal_glob
from vacant.store.exclude import glob_regex as exclude_regex

NAMES = st.text("ab.", min_size=1, max_size=3).filter(lambda name: name not in (".", ".."))  # never a path segment
SEGMENTS = st.one_of(NAMES, st.sampled_from(["*", "?", "a*", "*.b", "[ab]", "[!a]", "**", "?b", "b*a"]))


def oracle(pattern: list[str], path: list[str]) -> bool:
    if not pattern:
        return True  # a directory's pattern covers what is below it
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        if not rest:
            return bool(path)  # `dir/**` is what is inside dir, not dir itself
        return any(oracle(rest, path[skip:]) for skip in range(len(path) + 1))
    return bool(path) and fnmatch.fnmatchcase(path[0], head) and oracle(rest, path[1:])


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(pattern=st.lists(SEGMENTS, min_size=1, max_size=4), path=st.lists(NAMES, min_size=1, max_size=4))
def test_the_translator_matches_the_segment_matcher(pattern, path):
    glob, rel = "/".join(pattern), "/".join(path)
    want = oracle(pattern, path)
    assert glob_matches(glob, rel) is want, (glob, rel)
    assert (re.match(exclude_regex(glob), rel) is not None) is want
    assert (re.match(glob_regex(normal_glob("./" + glob + "/")), rel) is not None) is want
