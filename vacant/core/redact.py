"""Secret redaction, applied to everything vacant keeps that an agent or a tool said: the step
log (every record), the reads it stores (command output, prompts, fetched pages, search results,
sub-agent replies) and the ask cards. File contents (what replay needs) are kept as they are,
owner-only; `[store] exclude` in vacant.toml keeps chosen paths out of the store (docs/STORAGE.md).

Why a stdlib copy rather than detect-secrets itself: this runs in the hook, on the hot path (stdlib
+ xxhash only; detect-secrets pulls in yaml, requests and its plugin loader, and costs ~200 ms to
import). So the patterns live in `secret_patterns.py`, copied verbatim from detect-secrets'
plugins (plus token formats it lacks), with its two heuristics redone here: secret-named keys
(its KeywordDetector list) and high-entropy quoted strings (its Base64HighEntropyString, limit
4.5 bits per character). tests/unit/core/test_secrets.py checks the copy against the installed
detect-secrets and uses detect-secrets as an oracle on generated secrets.

Bounded: each rule runs only when one of its literal anchors occurs in the text (a substring
test), so a 10 MB output costs one pass per anchored rule that can match.
"""

from __future__ import annotations


from vacant.core.leanstd import bounded_cache, namedtuple
from vacant.core.lazyre import IGNORECASE, Lazy
from vacant.core.secret_patterns import (
    DETECT_SECRETS,
    EXTRA,
    GROUPED,
    KEYWORDS,
    MORE_KEYWORDS,
)

TYPE_CHECKING = False  # typing's, without importing typing: that costs each hook call 15 ms CPU (hook/lean.py)
if TYPE_CHECKING:
    import re  # at run time, imported where a pattern is made (vacant/core/lazyre.py says why)

# group: 0 redacts the whole match, N only group N. anchors: literal substrings (lowercase when
# `folded`), one of which must occur for the rule to run; () runs it always.
Rule = namedtuple("Rule", "name pattern group anchors folded needs")
MARK = "[REDACTED:{name}]"
ENTROPY_LIMIT = 4.5  # bits per character, detect-secrets' default for base64 strings
ENTROPY_MIN_LENGTH = 20
MAX_CHARS = 1024 * 1024  # longer text keeps its redacted head only: redaction stays bounded in time

_GITLAB = ("glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "GR1348941", "glcbt-", "glimt-", "glptt-", "glagent-",
           "gloas-")


# a run the rule's pattern needs somewhere in the text (searched once per rule): none, no match
_NEEDS: dict[str, str] = {
    "IbmCloudIamDetector": r"[a-zA-Z0-9_\-]{44}", "IbmCosHmacDetector": r"[a-fA-F0-9]{48}",
    "CloudantDetector": r"[0-9a-fA-F]{64}|[a-zA-Z]{24}", "SoftlayerDetector": r"[a-zA-Z0-9]{64}",
    "DiscordBotTokenDetector": r"[a-zA-Z\d_-]{23}\.", "TelegramBotTokenDetector": r"\d{8}:",
    "TwilioKeyDetector": r"[A-Z]{2}[a-z0-9]{32}", "MailchimpDetector": r"[0-9a-z]{32}-us",
}
_HEX = "0123456789abcdefABCDEF"
_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
# what each `_NEEDS` pattern holds at least: a run of `length` characters from `chars` (with every
# Unicode decimal digit when `digits`, as `\d` has), followed by `suffix`. Checked by a loop over a
# short text before the pattern is compiled: an ordinary path or id has none, and compiling costs
# more than the rest of a hook call's redaction (tests/unit/core/test_lean_hot_path.py holds each
# run to its pattern)
NeedRun = namedtuple("NeedRun", "chars digits length suffix")
_NEED_RUNS: dict[str, tuple[NeedRun, ...]] = {
    "IbmCloudIamDetector": (NeedRun(_ALNUM + "_-", False, 44, ""),),
    "IbmCosHmacDetector": (NeedRun(_HEX, False, 48, ""),),
    "CloudantDetector": (NeedRun(_HEX, False, 64, ""), NeedRun(_ALNUM[:52], False, 24, "")),
    "SoftlayerDetector": (NeedRun(_ALNUM, False, 64, ""),),
    "DiscordBotTokenDetector": (NeedRun(_ALNUM[:52] + "_-", True, 23, "."),),
    "TelegramBotTokenDetector": (NeedRun("", True, 8, ":"),),
    "TwilioKeyDetector": (NeedRun(_ALNUM[26:], False, 32, ""),),  # the 32 after the two capitals
    "MailchimpDetector": (NeedRun(_ALNUM[26:], False, 32, "-us"),),
}
RUN_CHECK_CHARS = 1024  # longer text goes straight to the pattern (a loop per character costs more there)


def has_run(text: str, run: NeedRun) -> bool:
    """`text` holds `run`: `run.length` characters in a row from its class, then its suffix."""
    chars, digits, length, suffix = run
    count = 0
    for index, char in enumerate(text):
        if char in chars or (digits and char.isdecimal()):
            count += 1
            if count >= length and (not suffix or text.startswith(suffix, index + 1)):
                return True
        else:
            count = 0
    return False


_ANCHORS: dict[str, tuple[tuple[str, ...], bool]] = {
    "ArtifactoryDetector": (("AKC", "AP"), False), "AWSKeyDetector": (("a3t", "abia", "acca", "akia", "asia", "aws"), True),
    "AzureStorageKeyDetector": (("AccountKey=",), False), "BasicAuthDetector": (("://",), False),
    "CloudantDetector": (("cl",), True),
    "DiscordBotTokenDetector": ((".",), False),
    "GitHubTokenDetector": (("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), False),
    "GitLabTokenDetector": (_GITLAB, False),
    "IbmCloudIamDetector": (("key", "pwd", "pass", "token"), True), "IbmCosHmacDetector": (("secret",), True),
    "JwtTokenDetector": (("eyJ",), False), "MailchimpDetector": (("-us",), False),
    "NpmDetector": (("_authToken",), False), "OpenAIDetector": (("T3BlbkFJ",), False),
    "PypiTokenDetector": (("pypi-",), False), "SendGridDetector": (("SG.",), False),
    "SlackDetector": (("xox", "hooks.slack"), True),
    "SoftlayerDetector": (("sl",), True),
    "SquareOAuthDetector": (("sq0csp-",), False), "StripeDetector": (("k_live_",), False),
    "TelegramBotTokenDetector": ((":",), False), "TwilioKeyDetector": (("AC", "SK"), False),
}
_EXTRA_ANCHORS: dict[str, tuple[tuple[str, ...], bool]] = {
    "private-key-block": (("PRIVATE KEY",), False), "putty-key": (("PuTTY-User-Key-File",), False),
    "anthropic-key": (("sk-ant-",), False), "openai-key": (("sk-",), False),
    "github-token": (("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"), False), "gitlab-token": (_GITLAB, False), "stripe-key": (("_live_", "_test_", "whsec_"), False), "google-api-key": (("AIza",), False),
    "google-oauth": (("ya29.", "GOCSPX-"), False), "npm-token": (("npm_",), False), "huggingface-token": (("hf_",), False),
    "slack-token": (("xox", "xapp-"), False), "pypi-token": (("pypi-",), False), "databricks-token": (("dapi",), False),
    "digitalocean-token": (("_v1_",), False), "shopify-token": (("shp",), False),
    "aws-secret-key": (("secretaccesskey", "secret_access_key"), True),
    "auth-header": (("bearer", "basic", "token", "digest"), True), "url-password": (("://",), False),
    "user-password-option": (("-u", "--user", "--basic-auth", "--auth"), False),
}
# bounded affixes from a token start: an unbounded `[…]*` prefix would make the scan quadratic
_NAME = r"(?<![A-Za-z0-9_\-])[A-Za-z0-9_\-]{0,40}?(?:" + "|".join(KEYWORDS + MORE_KEYWORDS) + r")[A-Za-z0-9_\-]{0,40}"
# `DB_PASSWORD=x`, `password: "x"`, `"api_key": "x"`, `--password=x`: the name stays, the value goes
# a name an earlier rule already redacted (`token access_token = "x"`: the header rule took
# `access_token`) still names a secret: its value goes too
_MARKED = r"\[REDACTED:[a-z0-9-]{1,40}\]"
_KEYWORD = Lazy(
    r"((?:" + _NAME + r"|" + _MARKED + r")[\"'\]]{0,2}[ \t]*(?:=|:=|=>|:)[ \t]*)"
    r"(?:([\"'`])((?:(?!\2)[^\n]){1,256}?)\2"  # a quoted value: up to its closing quote
    r"|((?!\$\{|\$[A-Za-z_]|<[a-z]|\*\*\*|\[REDACTED|/|null\b|None\b|true\b|false\b|[\w.]*[(\[])"
    r"[^\s\"'`,;&|(){}\[\]]{3,}))",
    IGNORECASE)


def _keyword(match: re.Match[str]) -> str:
    marker = MARK.format(name="keyword")
    whole: str = match.group(0)
    name: str = match.group(1)
    if match.group(2):
        value = match.group(3)
        if value.startswith(("[REDACTED", "$", "<")) or value in ("***", ""):
            return whole
        return f"{name}{match.group(2)}{marker}{match.group(2)}"
    return name + marker


_KEY_NAME = Lazy(r"^" + _NAME + r"$", IGNORECASE)
_QUOTED = Lazy(r"([\"'`])([A-Za-z0-9+/=_\-.]{%d,})\1" % ENTROPY_MIN_LENGTH)
# unquoted, a token must be longer and mix cases and digits (a quote can be lost to shell quoting)
_BARE = Lazy(r"(?<![A-Za-z0-9+/=_\-.])(?=[A-Za-z0-9+/=_\-]*[0-9])(?=[A-Za-z0-9+/=_\-]*[a-z])"
                   r"(?=[A-Za-z0-9+/=_\-]*[A-Z])([A-Za-z0-9+/=_\-]{32,})(?![A-Za-z0-9+/=_\-.])")
# what every _BARE match contains: compiled in a fraction of _BARE's time, and most text has none
_BARE_RUN = Lazy(r"[A-Za-z0-9+/=_\-]{32}")
# a literal part of each keyword (before its optional `_`), one of which must occur for the rule to run
_KEYWORD_ANCHORS = tuple(sorted({k.split("_?")[0].replace("s?", "") for k in KEYWORDS + MORE_KEYWORDS}))


_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_LOWER = "abcdefghijklmnopqrstuvwxyz"


def kebab(word: str) -> str:
    """`AWSKey` -> `aws-key`, `IbmCloudIam` -> `ibm-cloud-iam`: a dash before an upper-case letter
    that follows a lower-case letter or a digit, or that ends a run of capitals before a lower-case
    one (what `re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "-", word).lower()` does,
    without compiling it at import)."""
    out = []
    for index, char in enumerate(word):
        if index and char in _UPPER:
            before, after = word[index - 1], word[index + 1:index + 2]
            if before in _LOWER or (before.isdecimal() and before.isascii()) or (before in _UPPER and after in _LOWER and after):
                out.append("-")
        out.append(char)
    return "".join(out).lower()


RUNS_OF: dict[Lazy, tuple[NeedRun, ...]] = {}  # a rule's `needs` pattern -> the runs it holds (filled by _compile)


def _compile() -> tuple[Rule, ...]:
    rules = [Rule(name, Lazy(pattern, flags), group, *_EXTRA_ANCHORS.get(name, ((), False)), None)
             for name, pattern, flags, group in EXTRA]
    for plugin, patterns in DETECT_SECRETS.items():
        anchors, folded = _ANCHORS.get(plugin, ((), False))
        name = kebab(plugin.replace("Detector", ""))
        needs = Lazy(_NEEDS[plugin]) if plugin in _NEEDS else None
        if needs is not None:
            RUNS_OF[needs] = _NEED_RUNS[plugin]
        rules += [Rule(name, Lazy(pattern, flags), GROUPED.get(plugin, 0), anchors, folded, needs)
                  for pattern, flags in patterns]
    return tuple(rules)


RULES: tuple[Rule, ...] = _compile()


def entropy(text: str) -> float:
    """Shannon entropy in bits per character."""
    if not text:
        return 0.0
    counts: dict[str, int] = {}
    for char in text:
        counts[char] = counts.get(char, 0) + 1
    total = len(text)
    import math  # an extension module (a shared library to load): only once a candidate secret is weighed

    return -sum(n / total * math.log2(n / total) for n in counts.values())


def _sub(rule: Rule, text: str) -> str:
    marker = MARK.format(name=rule.name)
    if rule.group == 0:
        replaced: str = rule.pattern.sub(marker, text)
        return replaced

    def one(match: re.Match[str]) -> str:
        start, end = match.span(rule.group)
        whole: str = match.group(0)
        if start < 0:
            return whole
        offset = match.start()
        return whole[: start - offset] + marker + whole[end - offset:]

    result: str = rule.pattern.sub(one, text)
    return result


def _high_entropy(match: re.Match[str]) -> str:
    quote, body = match.group(1), match.group(2)
    if "REDACTED" in body or entropy(body) <= ENTROPY_LIMIT:
        whole: str = match.group(0)
        return whole
    return f"{quote}{MARK.format(name='high-entropy-string')}{quote}"


def redact_text(text: str) -> str:
    if len(text) > MAX_CHARS:
        return _redact(text[:MAX_CHARS]) + f"[TRUNCATED: {len(text) - MAX_CHARS} more characters not kept]"
    if len(text) <= SHORT_CHARS:
        return _redact_short(text)
    return _redact(text)


SHORT_CHARS = 256


@bounded_cache(4096)
def _redact_short(text: str) -> str:
    """The same answer for the short strings every record repeats (paths, names, keys, ids): the
    daemon answers many calls in one process; bounded at 4,096 strings of at most 256 characters."""
    return _redact(text)


def _holds_needs(text: str, needs: Lazy) -> bool:
    if len(text) <= RUN_CHECK_CHARS and not any(has_run(text, run) for run in RUNS_OF[needs]):
        return False
    return needs.search(text) is not None


def _anchor_index() -> tuple[tuple[int, ...], tuple[tuple[str, tuple[int, ...]], ...],
                            tuple[tuple[str, tuple[int, ...]], ...]]:
    """The rules by anchor: (the rules with none, which always run; (anchor, its rules) as written;
    (anchor, its rules) lower-cased, for the `folded` rules)."""
    always: list[int] = []
    plain: dict[str, list[int]] = {}
    folded: dict[str, list[int]] = {}
    for index, rule in enumerate(RULES):
        if not rule.anchors:
            always.append(index)
        for anchor in rule.anchors:
            (folded if rule.folded else plain).setdefault(anchor, []).append(index)
    return (tuple(always), tuple((anchor, tuple(rules)) for anchor, rules in plain.items()),
            tuple((anchor, tuple(rules)) for anchor, rules in folded.items()))


_ALWAYS, _PLAIN_ANCHORS, _FOLDED_ANCHORS = _anchor_index()


def _live(text: str, after: int = -1) -> list[int]:
    """The rules after index `after` one of whose anchors occurs in `text`, or which have none, in
    RULES' order: each anchor is looked for once, not once per rule that names it."""
    live = set(_ALWAYS)
    for anchor, rules in _PLAIN_ANCHORS:
        if anchor in text:
            live.update(rules)
    folded = text.lower()
    for anchor, rules in _FOLDED_ANCHORS:
        if anchor in folded:
            live.update(rules)
    return sorted(index for index in live if index > after)


def apply_rules(text: str) -> str:
    """RULES applied in order, each to what the earlier ones left, those whose anchors (and
    `needs`) the text lacks skipped."""
    needed: dict[str, bool] = {}  # needs pattern -> found in the current text
    live, at = _live(text), 0
    while at < len(live):
        index = live[at]
        at += 1
        rule = RULES[index]
        if rule.needs is not None:
            if rule.needs not in needed:
                needed[rule.needs] = _holds_needs(text, rule.needs)
            if not needed[rule.needs]:
                continue
        cleaned = _sub(rule, text)
        if cleaned != text:  # the later rules' anchors are looked for in what is left
            text, needed = cleaned, {}
            live, at = _live(text, index), 0
    return text


def _redact(text: str) -> str:
    text = apply_rules(text)
    lowered = text.lower()
    if _may_name_a_secret(lowered):  # only lines naming a secret
        lines, low_lines = text.split("\n"), lowered.split("\n")
        if len(lines) == len(low_lines):  # (lower() can change the length of some characters)
            for index, low in enumerate(low_lines):
                if _may_name_a_secret(low):
                    lines[index] = _KEYWORD.sub(_keyword, lines[index])
            text = "\n".join(lines)
        else:
            text = _KEYWORD.sub(_keyword, text)
    if len(text) >= ENTROPY_MIN_LENGTH + 2 and any(q in text for q in "\"'`"):
        text = _QUOTED.sub(_high_entropy, text)
    if len(text) >= 32 and _mixed_case_and_digit(text) and _BARE_RUN.search(text):  # the cheap necessary conditions first
        text = _BARE.sub(_high_entropy_bare, text)
    return text


def _may_name_a_secret(lowered: str) -> bool:
    """What every _KEYWORD match needs: a keyword's anchor (or a marker already there) and an
    assignment (`=`, `:`). A hash naming `db` or `key` by chance assigns nothing: no pattern (nor
    `re`) for it."""
    if "=" not in lowered and ":" not in lowered:
        return False
    return any(anchor in lowered for anchor in _KEYWORD_ANCHORS) or "[redacted:" in lowered


def _mixed_case_and_digit(text: str) -> bool:
    """What every _BARE match needs somewhere in the text: a digit, a lower- and an upper-case
    letter (wider than _BARE's ASCII classes, so never false when _BARE would match). Paths and
    hashes, which most records are made of, have no upper case: no pattern is compiled for them."""
    return text.lower() != text and text.upper() != text and any(digit in text for digit in "0123456789")


def _high_entropy_bare(match: re.Match[str]) -> str:
    body: str = match.group(1)
    if body.count("/") > 3 or entropy(body) <= ENTROPY_LIMIT:
        return body
    return MARK.format(name="high-entropy-string")


# Names that hold an anchor yet are not secret names (`_KEY_NAME` does not match them): the step
# log's own field names and the commonest tool-input keys. A memo of `_KEY_NAME`, so that a hook
# call, whose every record has a `key` and whose run start has a `session`, compiles no pattern
# (tests/unit/core/test_redact_memo.py checks each name against the pattern).
PLAIN_NAMES = frozenset({
    "key", "keys", "session", "session_id", "sessionID", "tool_use_id", "api", "auth", "client", "account",
    "service", "access", "keyword", "keywords", "private", "db", "database",
})


def _secret_name(key: str) -> bool:
    """`key` names a secret (`password`, `api_key`). An ASCII key must hold a keyword's anchor
    first (cheap, and most keys hold none); any other goes straight to the pattern, whose
    case-insensitive match also takes `ſ` for `s` and `K` (Kelvin) for `k`."""
    if key in PLAIN_NAMES:
        return False
    if key.isascii() and not any(anchor in key.lower() for anchor in _KEYWORD_ANCHORS):
        return False
    return bool(_KEY_NAME.match(key))


def redact(value: object) -> object:
    """Redact every string inside a JSON-like value; a string under a secret-named key (`password`,
    `api_key`, `token`, …) is replaced whole. Dict keys themselves are left alone."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {key: (MARK.format(name="keyword") if isinstance(key, str) and isinstance(item, str) and item
                      and _secret_name(key) and not item.startswith("[REDACTED") else redact(item))
                for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact(item) for item in value]
    return value


def redact_bytes(data: bytes) -> bytes:
    """Redact a read's bytes: text (UTF-8, undecodable bytes kept as they were) goes through
    `redact_text`; the result is what the object store keeps."""
    text = data.decode("utf-8", "surrogateescape")
    cleaned = redact_text(text)
    return data if cleaned == text else cleaned.encode("utf-8", "surrogateescape")
