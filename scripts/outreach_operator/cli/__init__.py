"""The operator's command line, ``outreach``: jobs, tasks, dead letters and failure records."""
