"""SHA-256 from the interpreter's own module, not OpenSSL's: `import hashlib` loads `_hashlib`
(libcrypto), a few milliseconds of every hook process that only needs SHA-256. The digests are
the same; an interpreter built without the builtin module falls back to hashlib."""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: the hot path never imports typing
if TYPE_CHECKING:
    from hashlib import sha256
else:
    try:
        from _sha2 import sha256  # Python 3.12+
    except ImportError:
        try:
            from _sha256 import sha256  # Python <= 3.11
        except ImportError:  # a build without the builtin hashes
            from hashlib import sha256

__all__ = ["sha256"]
