"""Secret redaction before anything reaches the step log: one list of rules, applied everywhere."""

from __future__ import annotations

import re
from collections import namedtuple

# keeps_prefix: group 1 of the pattern is a prefix kept in clear (e.g. "password=").
Rule = namedtuple("Rule", "name pattern keeps_prefix")


def _rule(name: str, regex: str, keeps_prefix: bool = False, flags: int = 0) -> Rule:
    return Rule(name, re.compile(regex, flags), keeps_prefix)


RULES: tuple[Rule, ...] = (
    _rule(
        "private-key-block",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----.*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|\Z)",
        flags=re.DOTALL,
    ),
    _rule("anthropic-key", r"\bsk-ant-[A-Za-z0-9_\-]{20,}"),
    _rule("openai-key", r"\bsk-(?:proj-|svcacct-)?[A-Za-z0-9_\-]{20,}"),
    _rule("github-token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})"),
    _rule("gitlab-token", r"\bglpat-[A-Za-z0-9_\-]{20,}"),
    _rule("aws-access-key", r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"),
    _rule(
        "aws-secret-key",
        r"((?:aws_secret_access_key|AWS_SECRET_ACCESS_KEY)\s*[=:]\s*[\"']?)[A-Za-z0-9/+=]{40}",
        keeps_prefix=True,
    ),
    _rule("bearer-token", r"(\b[Bb]earer\s+)[A-Za-z0-9._~+/\-]{16,}=*", keeps_prefix=True),
    _rule(
        "password-pair",
        r"(\b(?:password|passwd|pwd|secret|api[_-]?key|token)\s*[=:]\s*[\"']?)(?![\"'\s]|\*\*\*|\[REDACTED:)[^\s\"'&;,]{4,}",
        keeps_prefix=True,
        flags=re.IGNORECASE,
    ),
)


def redact_text(text: str) -> str:
    for rule in RULES:
        marker = f"[REDACTED:{rule.name}]"
        if rule.keeps_prefix:
            text = rule.pattern.sub(lambda m, marker=marker: m.group(1) + marker, text)
        else:
            text = rule.pattern.sub(marker, text)
    return text


def redact(value: object) -> object:
    """Redact every string inside a JSON-like value (dict keys are left alone)."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {key: redact(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact(item) for item in value]
    return value
