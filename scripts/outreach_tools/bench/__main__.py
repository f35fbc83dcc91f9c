"""`python -m outreach_tools.bench`: see :mod:`outreach_tools.bench.runner`."""

import sys

from outreach_tools.bench.runner import main

sys.exit(main())
