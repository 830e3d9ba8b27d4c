"""The secret patterns redaction uses: detect-secrets' plugin patterns, copied verbatim, plus the
token formats it has no plugin for. Stdlib only (hot path): detect-secrets itself is never
imported here; tests/unit/core/test_secrets.py fails when this copy drifts from the installed
detect-secrets (the `secrets` extra) and uses detect-secrets as an oracle on generated secrets.

Each entry: (name, pattern, flags, group). `group` 0 redacts the whole match; a positive group
redacts only that group (the prefix around it, e.g. `password=`, stays readable).
"""

from __future__ import annotations

from vacant.core.lazyre import DOTALL, IGNORECASE


DETECT_SECRETS_VERSION = "1.5.0"
_I = IGNORECASE

# plugin class name -> its `denylist` patterns (pattern, flags), exactly as detect-secrets has them.
# Left out: IPPublicDetector (an address is not a secret), the entropy and keyword plugins (below,
# in code), and PrivateKeyDetector's markers (a whole key block is redacted, begin to end).
DETECT_SECRETS: dict[str, tuple[tuple[str, int], ...]] = {  # written by the generator in tests/unit/core/test_secrets.py
    'AWSKeyDetector': (
        ('(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}', 0),
        ('aws.{0,20}?(?:key|pwd|pw|password|pass|token).{0,20}?[\\\'\\"]([0-9a-zA-Z/+]{40})[\\\'\\"]', _I),
    ),
    'ArtifactoryDetector': (
        ('(?:\\s|=|:|"|^)AKC[a-zA-Z0-9]{10,}(?:\\s|"|$)', 0),
        ('(?:\\s|=|:|"|^)AP[\\dABCDEF][a-zA-Z0-9]{8,}(?:\\s|"|$)', 0),
    ),
    'AzureStorageKeyDetector': (
        ('AccountKey=[a-zA-Z0-9+\\/=]{88}', 0),
    ),
    'BasicAuthDetector': (
        ("://[^:/\\?\\#\\[\\]@!\\$\\&'\\(\\)\\*\\+,;=\\s]+:([^:/\\?\\#\\[\\]@!\\$\\&'\\(\\)\\*\\+,;=\\s]+)@", 0),
    ),
    'CloudantDetector': (
        ('(?:(?<=\\W)|(?<=^))(?:\\[|)(?:"|\\\'|)(?:cloudant|cl|clou)(?:_|-|)(?:api|)(?:key|pwd|pw|password|pass|token)(?:"|\\\'|)(?:\\]|)(?: *)(?:=|:|:=|=>| +|::)(?: *)(?:"|\\\'|)([0-9a-f]{64})(?:"|\\\'|)', _I),
        ('(?:(?<=\\W)|(?<=^))(?:\\[|)(?:"|\\\'|)(?:cloudant|cl|clou)(?:_|-|)(?:api|)(?:key|pwd|pw|password|pass|token)(?:"|\\\'|)(?:\\]|)(?: *)(?:=|:|:=|=>| +|::)(?: *)(?:"|\\\'|)([a-z]{24})(?:"|\\\'|)', _I),
        ('(?:https?\\:\\/\\/)[\\w\\-]+\\:([0-9a-f]{64})\\@[\\w\\-]+\\.cloudant\\.com', _I),
        ('(?:https?\\:\\/\\/)[\\w\\-]+\\:([a-z]{24})\\@[\\w\\-]+\\.cloudant\\.com', _I),
    ),
    'DiscordBotTokenDetector': (
        ('[MNO][a-zA-Z\\d_-]{23,25}\\.[a-zA-Z\\d_-]{6}\\.[a-zA-Z\\d_-]{27}', 0),
    ),
    'GitHubTokenDetector': (
        ('(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9_]{36}', 0),
    ),
    'GitLabTokenDetector': (
        ('(glpat|gldt|glft|glsoat|glrt)-[A-Za-z0-9_\\-]{20,50}(?!\\w)', 0),
        ('GR1348941[A-Za-z0-9_\\-]{20,50}(?!\\w)', 0),
        ('glcbt-([0-9a-fA-F]{2}_)?[A-Za-z0-9_\\-]{20,50}(?!\\w)', 0),
        ('glimt-[A-Za-z0-9_\\-]{25}(?!\\w)', 0),
        ('glptt-[A-Za-z0-9_\\-]{40}(?!\\w)', 0),
        ('glagent-[A-Za-z0-9_\\-]{50,1024}(?!\\w)', 0),
        ('gloas-[A-Za-z0-9_\\-]{64}(?!\\w)', 0),
    ),
    'IbmCloudIamDetector': (
        ('(?:(?<=\\W)|(?<=^))(?:\\[|)(?:"|\\\'|)(?:ibm(?:_|-|)cloud(?:_|-|)iam|cloud(?:_|-|)iam|ibm(?:_|-|)cloud|ibm(?:_|-|)iam|ibm|iam|cloud|)(?:_|-|)(?:api|)(?:_|-|)(?:key|pwd|password|pass|token)(?:"|\\\'|)(?:\\]|)(?: *)(?:=|:|:=|=>| +|::)(?: *)(?:"|\\\'|)([a-zA-Z0-9_\\-]{44}(?![a-zA-Z0-9_\\-]))(?:"|\\\'|)', _I),
    ),
    'IbmCosHmacDetector': (
        ('(?:(?<=\\W)|(?<=^))(?:\\[|)(?:"|\\\'|)(?:(?:ibm)?[-_]?cos[-_]?(?:hmac)?|)(?:_|-|)(?:secret[-_]?(?:access)?[-_]?key)(?:"|\\\'|)(?:\\]|)(?: *)(?:=|:|:=|=>| +|::)(?: *)(?:"|\\\'|)([a-f0-9]{48}(?![a-f0-9]))(?:"|\\\'|)', _I),
    ),
    'JwtTokenDetector': (
        ('eyJ[A-Za-z0-9-_=]+\\.[A-Za-z0-9-_=]+\\.?[A-Za-z0-9-_.+/=]*?', 0),
    ),
    'MailchimpDetector': (
        ('[0-9a-z]{32}-us[0-9]{1,2}', 0),
    ),
    'NpmDetector': (
        ('\\/\\/.+\\/:_authToken=\\s*((npm_.+)|([A-Fa-f0-9-]{36})).*', 0),
    ),
    'OpenAIDetector': (
        ('sk-[A-Za-z0-9-_]*[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}', 0),
    ),
    'PypiTokenDetector': (
        ('pypi-AgEIcHlwaS5vcmc[A-Za-z0-9-_]{70,}', 0),
        ('pypi-AgENdGVzdC5weXBpLm9yZw[A-Za-z0-9-_]{70,}', 0),
    ),
    'SendGridDetector': (
        ('SG\\.[a-zA-Z0-9_-]{22}\\.[a-zA-Z0-9_-]{43}', 0),
    ),
    'SlackDetector': (
        ('xox(?:a|b|p|o|s|r)-(?:\\d+-)+[a-z0-9]+', _I),
        ('https://hooks\\.slack\\.com/services/T[a-zA-Z0-9_]+/B[a-zA-Z0-9_]+/[a-zA-Z0-9_]+', _I),
    ),
    'SoftlayerDetector': (
        ('(?:(?<=\\W)|(?<=^))(?:\\[|)(?:"|\\\'|)(?:softlayer|sl)(?:_|-|)(?:api|)(?:_|-|)(?:key|pwd|password|pass|token)(?:"|\\\'|)(?:\\]|)(?: *)(?:=|:|:=|=>| +|::)(?: *)(?:"|\\\'|)([a-z0-9]{64})(?:"|\\\'|)', _I),
        ('(?:http|https)://api.softlayer.com/soap/(?:v3|v3.1)/([a-z0-9]{64})', _I),
    ),
    'SquareOAuthDetector': (
        ('sq0csp-[0-9A-Za-z\\\\\\-_]{43}', 0),
    ),
    'StripeDetector': (
        ('(?:r|s)k_live_[0-9a-zA-Z]{24}', 0),
    ),
    'TelegramBotTokenDetector': (
        ('\\d{8,10}:[0-9A-Za-z_-]{35}', 0),
    ),
    'TwilioKeyDetector': (
        ('AC[a-z0-9]{32}', 0),
        ('SK[a-z0-9]{32}', 0),
    ),
}
# where a BasicAuth/AWS-secret/… pattern has a group, only that group is the secret
GROUPED = {"BasicAuthDetector": 1, "CloudantDetector": 1, "IbmCloudIamDetector": 1, "IbmCosHmacDetector": 1,
           "SoftlayerDetector": 1}

# detect-secrets' KeywordDetector denylist (lowercase), and more names that hold a secret
KEYWORDS = ("api_?key", "auth_?key", "service_?key", "account_?key", "db_?key", "database_?key", "priv_?key",
            "private_?key", "client_?key", "db_?pass", "database_?pass", "key_?pass", "password", "passwd", "pwd",
            "secret", "contraseña", "contrasena")
MORE_KEYWORDS = ("token", "access_?key", "credentials?", "pgpassword", "mysql_pwd", "session_?key",
                 "signing_?key", "encryption_?key", "passphrase", "bearer")

# Token formats without a detect-secrets plugin (or with a narrower one): name, pattern, flags, group
EXTRA: tuple[tuple[str, str, int, int], ...] = (
    ("private-key-block", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY"
     r"(?: BLOCK)?-----|\Z)", DOTALL, 0),
    ("putty-key", r"PuTTY-User-Key-File-[0-9]+:.*?(?:Private-MAC:[^\n]*|\Z)", DOTALL, 0),
    ("anthropic-key", r"\bsk-ant-[A-Za-z0-9_\-]{20,}", 0, 0),
    ("openai-key", r"\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}", 0, 0),
    ("github-token", r"\b(?:gh[pousr]_[A-Za-z0-9_]{30,}|github_pat_[A-Za-z0-9_]{40,})", 0, 0),
    ("gitlab-token", r"\bgl[a-z]{2,6}-[A-Za-z0-9_\-]{20,}", 0, 0),
    ("stripe-key", r"\b(?:sk|rk|pk|whsec)_(?:live|test)_[0-9a-zA-Z]{16,}|\bwhsec_[0-9a-zA-Z]{24,}", 0, 0),
    ("google-api-key", r"\bAIza[0-9A-Za-z_\-]{35}", 0, 0),
    ("google-oauth", r"\bya29\.[0-9A-Za-z_\-]{20,}|\bGOCSPX-[0-9A-Za-z_\-]{20,}", 0, 0),
    ("npm-token", r"\bnpm_[A-Za-z0-9]{36}\b", 0, 0),
    ("huggingface-token", r"\bhf_[A-Za-z0-9]{30,}", 0, 0),
    ("slack-token", r"\bxox[a-z]-[A-Za-z0-9\-]{10,}|\bxapp-[0-9]-[A-Za-z0-9\-]{10,}", 0, 0),
    ("pypi-token", r"\bpypi-[A-Za-z0-9_\-]{50,}", 0, 0),
    ("databricks-token", r"\bdapi[0-9a-f]{32}\b", 0, 0),
    ("digitalocean-token", r"\bdo[por]_v1_[0-9a-f]{64}\b", 0, 0),
    ("shopify-token", r"\bshp(?:at|ca|pa|ss)_[0-9a-fA-F]{32}\b", 0, 0),
    ("aws-secret-key", r"((?:aws_secret_access_key|AWS_SECRET_ACCESS_KEY|SecretAccessKey)[\"']?\s*[=:]\s*[\"']?)"
     r"([A-Za-z0-9/+=]{40})", 0, 2),
    # the credential whole (no shorter prefix of a longer word), its `=` padding only where no value follows
    ("auth-header", r"(\b(?:[Bb]earer|[Bb]asic|[Tt]oken|Digest)\s+)([A-Za-z0-9._~+/\-]{8,}=*)(?![A-Za-z0-9._~+/\-])",
     0, 2),
    ("user-password-option", r"((?:^|\s)(?:-u|--user|--basic-auth|--auth)[ =]?['\"]?[^\s:'\"]+:)([^\s'\"]+)", 0, 2),
    ("url-password", r"(\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@]+:)([^\s@/]{1,256})(?=@)", 0, 2),
)
