"""``python -m outreach_operator.cli``: the same as the ``outreach`` console script."""

import sys

from outreach_operator.cli.app import main

sys.exit(main())
