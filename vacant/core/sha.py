"""SHA-256 from the interpreter's own module, not OpenSSL's: `import hashlib` loads `_hashlib`
(libcrypto), a few milliseconds of every hook process that only needs SHA-256. The digests are
the same; an interpreter built without the builtin module falls back to hashlib."""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing's, without importing typing: that costs each hook call 15 ms CPU (hook/lean.py)
if TYPE_CHECKING:
    from hashlib import sha256
else:
    # the module this interpreter has, asked for first: a module that is missing costs a search of
    # every directory on sys.path (about 0.4 ms of a hook process) before the other is tried
    try:
        if sys.version_info >= (3, 12):
            from _sha2 import sha256
        else:
            from _sha256 import sha256
    except ImportError:  # a build without the builtin hashes
        from hashlib import sha256

__all__ = ["sha256"]
