"""``python -m outreach_tools.cli``: the same as the ``outreach`` console script."""

import sys

from outreach_tools.cli.app import main

sys.exit(main())
