"""``python -m outreach_operator.preflight``: run the checks (``make preflight`` does)."""

from __future__ import annotations

import sys

from outreach_operator.preflight.runner import main

sys.exit(main())
