"""Secret redaction: every rule with a true positive and a look-alike that must survive."""

from __future__ import annotations

import json

import pytest

from vacant.core.redact import RULES, redact, redact_text
from vacant.store.steplog import StepLog, verify

# Built from pieces so no scanner mistakes this file for a leak.
ANT = "sk-" + "ant-api03-" + "Zq8vW2xYp4LmN6bR1tK9sD3fG7hJ0cV5"
OPENAI = "sk-" + "proj-" + "Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56"
GHP = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
GLPAT = "glpat-" + "xY7_wV3-uT9sR1qP5oN2"
AKIA = "AKIA" + "IOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
BEARER = "eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiIxMjM0In0.dBjftJeZ4CVP"
PEM_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\n"
PEM = "-----BEGIN RSA PRIVATE KEY-----\n" + PEM_BODY + "-----END RSA PRIVATE KEY-----"

# rule name -> (text holding a secret, the secret, a look-alike that must be left alone)
CASES: dict[str, tuple[str, str, str]] = {
    "private-key-block": (
        f"key file:\n{PEM}\nthat was it",
        PEM_BODY.splitlines()[1],
        "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8A\n-----END PUBLIC KEY-----",
    ),
    "anthropic-key": (
        f"export ANTHROPIC_API_KEY={ANT}",
        ANT,
        "the flag is sk-ant-short; see disk-antenna-calibration-parameters-v2",
    ),
    "openai-key": (
        f"client = OpenAI({OPENAI!r})",
        OPENAI,
        "sk-1234 is a SKU; whisk-eggs-for-exactly-three-minutes-please",
    ),
    "github-token": (
        f"git clone https://{GHP}@github.com/o/r",
        GHP,
        "ghp_short and ghx_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8 are not tokens",
    ),
    "gitlab-token": (
        f"PRIVATE-TOKEN: {GLPAT}",
        GLPAT,
        "glpat-abc is too short to be a token",
    ),
    "aws-access-key": (
        f"[default]\nkey_id = {AKIA}\n",
        AKIA,
        "AKIA1234 is short; ASIAN-PACIFIC and AKIAIOSFODNN7EXAMPLEXX are not keys",
    ),
    "aws-secret-key": (
        f"aws_secret_access_key = {AWS_SECRET}",
        AWS_SECRET,
        "aws_secret_access_key = <your secret here>",
    ),
    "bearer-token": (
        f"curl -H 'Authorization: Bearer {BEARER}' https://api",
        BEARER,
        "the bearer of bad news arrived; Bearer token goes here",
    ),
    "password-pair": (
        "mysql -u root --password=hunter2hunter2 db",
        "hunter2hunter2",
        "reset your password if you forgot it; password: *** ; password=",
    ),
}

RULE_NAMES = [rule.name for rule in RULES]


def test_every_rule_has_a_case_and_every_case_a_rule():
    assert set(CASES) == set(RULE_NAMES)
    assert len(RULE_NAMES) == len(set(RULE_NAMES)), "two rules share a name"


@pytest.mark.parametrize("name", RULE_NAMES)
def test_rule_redacts_its_secret(name):
    text, secret, _ = CASES[name]
    assert secret in text  # the case itself is sound
    out = redact_text(text)
    assert f"[REDACTED:{name}]" in out
    assert secret not in out


@pytest.mark.parametrize("name", RULE_NAMES)
def test_rule_matches_on_its_own(name):
    """The positive case is caught by its own rule, not only by a broader one that runs earlier."""
    text, secret, _ = CASES[name]
    rule = next(rule for rule in RULES if rule.name == name)
    match = rule.pattern.search(text)
    assert match is not None
    assert secret.splitlines()[0] in match.group(0)


@pytest.mark.parametrize("name", RULE_NAMES)
def test_look_alike_is_left_alone(name):
    _, _, look_alike = CASES[name]
    assert redact_text(look_alike) == look_alike


@pytest.mark.parametrize(
    "text",
    [
        "commit 3f786850e387550fdab836ed7e6dc881de23001b",
        "xxh3: 9c4a2a0f3b1e5d7c8a6b4f2e0d1c3b5a",
        "id 123e4567-e89b-12d3-a456-426614174000",
        "def tokenize(text): return text.split()",
        "the secret of the recipe is butter",
        "README.md: see the API key section",
        "",
    ],
)
def test_ordinary_text_is_left_alone(text):
    assert redact_text(text) == text


def test_prefix_of_a_pair_is_kept_in_clear():
    assert redact_text("password=hunter2hunter2") == "password=[REDACTED:password-pair]"
    assert redact_text(f"aws_secret_access_key={AWS_SECRET}") == (
        "aws_secret_access_key=[REDACTED:aws-secret-key]"
    )
    assert redact_text(f"Authorization: Bearer {BEARER}") == "Authorization: Bearer [REDACTED:bearer-token]"


def test_a_key_inside_a_pair_keeps_its_own_label():
    """`api_key=sk-…` says which provider leaked; the pair rule must not relabel the marker."""
    out = redact_text(f"api_key={OPENAI} token: {GHP}")
    assert out == "api_key=[REDACTED:openai-key] token: [REDACTED:github-token]"


def test_unterminated_private_key_is_redacted_to_the_end():
    text = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nb3Blbn"
    assert redact_text(text) == "[REDACTED:private-key-block]"


@pytest.mark.parametrize("name", RULE_NAMES)
def test_redaction_is_idempotent(name):
    once = redact_text(CASES[name][0])
    assert redact_text(once) == once


def test_redact_walks_nested_values():
    value = {"a": [OPENAI, {"b": ("x", f"password={'p' * 8}")}], "n": 3, "none": None, OPENAI: True}
    out = redact(value)
    assert out["a"][0] == "[REDACTED:openai-key]"
    assert out["a"][1]["b"] == ["x", "password=[REDACTED:password-pair]"]
    assert out["n"] == 3 and out["none"] is None
    assert OPENAI in out  # keys are left alone (paths, field names), values are not
    assert value["a"][0] == OPENAI  # the input is not modified in place


def test_step_log_writes_nested_secrets_redacted(tmp_path):
    log = StepLog(tmp_path / "run")
    log.emit(
        "step_start",
        step=1,
        key="k1",
        tool="Bash",
        input={
            "command": f"curl -H 'Authorization: Bearer {BEARER}' -u admin --password=hunter2hunter2",
            "env": [f"ANTHROPIC_API_KEY={ANT}", {"deep": [GHP, {"deeper": (GLPAT,)}]}],
            "cases": {name: [{"text": CASES[name][0]}] for name in RULE_NAMES},  # one per rule
        },
        actor="main",
        open_steps=[],
    )
    raw = log.path.read_bytes()
    for name in RULE_NAMES:
        secret = CASES[name][1]
        assert secret.encode() not in raw, name
        assert json.dumps(secret)[1:-1].encode() not in raw, name  # nor in its JSON-escaped form
        assert f"[REDACTED:{name}]".encode() in raw, name
    for secret in (BEARER, ANT, GHP, GLPAT, "hunter2hunter2"):
        assert secret.encode() not in raw
    assert verify(log) == []  # the chain is computed over what was written


def test_rules_compile_and_declare_their_prefix_group():
    for rule in RULES:
        assert rule.pattern.groups >= (1 if rule.keeps_prefix else 0), rule.name
