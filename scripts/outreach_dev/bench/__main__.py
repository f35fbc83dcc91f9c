"""`python -m outreach_dev.bench`: see :mod:`outreach_dev.bench.runner`."""

import sys

from outreach_dev.bench.runner import main

sys.exit(main())
