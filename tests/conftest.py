"""Suite-wide: vacant's user data directory (where a non-git workspace keeps its state) lives in a
temporary directory for the whole session, never in the real home of whoever runs the tests."""

from __future__ import annotations

import os
import tempfile

if not os.environ.get("VACANT_TEST_KEEP_HOME"):
    os.environ["VACANT_HOME"] = tempfile.mkdtemp(prefix="vacant-test-data-")
