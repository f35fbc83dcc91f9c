"""``outreach job``: create a job from a file of sites, follow it, list, export and cancel jobs.

``create`` records the job as a ``scrape`` job: an id already recorded as a campaign (an email job) is
refused (``errors.JobKindConflictError``, exit 2) before anything is written. ``cancel`` never cancels an
email task that is Running (its worker may be sending it); it says how many it left.

``command`` holds the click group and its options; each subcommand's work is a module of its own
(``create``, ``status``, ``listing``, ``export``, ``cancel``), raising ``output``'s ``BadInput`` /
``Failed`` / ``PartlyDone`` for the exit codes. A job's results (``results``) are read by
``campaign schedule --from-job`` too.
"""

from __future__ import annotations

from outreach_operator.cli.jobs.command import job
from outreach_operator.cli.jobs.results import result_documents, result_keys, result_task_id

__all__ = ["job", "result_documents", "result_keys", "result_task_id"]
