"""`python -m vacant.hook PLATFORM`: the in-process entry (vacant/hook/entry.py), without the daemon."""

import sys

from vacant.hook.entry import main

sys.exit(main())
