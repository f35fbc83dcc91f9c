"""`make bench`: what the pipeline costs and how that cost grows, each figure beside its baseline."""

import os

# Powertools reads these when the handlers' modules are imported, before any benchmark sets up.
os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "outreach-bench")
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "OutreachBench")
os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "1")
