"""checkov custom policies of the outreach pipeline: load with ``--external-checks-dir policies``."""
