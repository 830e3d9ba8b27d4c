"""`redact.apply_rules` looks each anchor up once per text (an index from anchor to rules) where
the rules once each looked for their own: on generated texts made of anchors, secrets' shapes and
noise, it redacts exactly what the rule-by-rule reading (the oracle below, the loop it replaced)
does."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from vacant.core import redact


def rule_by_rule(text: str) -> str:
    """Each rule in order checks its own anchors (and `needs`) against what the earlier rules left."""
    for rule in redact.RULES:
        if rule.anchors:
            seen = text.lower() if rule.folded else text
            if not any(anchor in seen for anchor in rule.anchors):
                continue
        if rule.needs is not None and not rule.needs.search(text):
            continue
        text = redact._sub(rule, text)
    return text


ANCHORS = sorted({anchor for rule in redact.RULES for anchor in rule.anchors}
                 | {anchor.upper() for rule in redact.RULES if rule.folded for anchor in rule.anchors})
SHAPES = ["AKIAIOSFODNN7EXAMPLE", "ghp_" + "a1B2" * 9, "xoxb-123456789012-1234567890123-" + "a" * 24,
          "sk-ant-api03-" + "Ab9" * 30, "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl", "https://user:pa55word@host/x",
          "AIza" + "B" * 35, "-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----",
          "123456789:" + "A" * 35, "sl" + "a1" * 32, "0123456789abcdef" * 4, "-u admin:hunter22"]
piece = st.one_of(st.sampled_from(ANCHORS), st.sampled_from(SHAPES), st.text(max_size=12),
                  st.text(alphabet="abcdefABCDEF0123456789_-.:/=", max_size=40))


@settings(max_examples=400, deadline=None)
@given(st.lists(piece, max_size=10), st.sampled_from(["", " ", "\n", "=", '"']))
def test_the_anchor_index_redacts_as_each_rule_alone(pieces, glue):
    text = glue.join(pieces)
    assert redact.apply_rules(text) == rule_by_rule(text)


def test_the_generated_texts_reach_the_rules():
    """The oracle is not vacuous: the shapes are secrets some rule takes."""
    taken = [shape for shape in SHAPES if rule_by_rule(shape) != shape]
    assert len(taken) >= len(SHAPES) - 2, [shape for shape in SHAPES if shape not in taken]
