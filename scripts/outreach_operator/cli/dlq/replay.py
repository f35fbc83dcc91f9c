"""``dlq replay pipe|reconciler``: the flags checked, the DLQ and its handler chosen, then replayed."""

from __future__ import annotations

from outreach.errors import InvalidJobInputError
from outreach.task_ids import validate_job_id
from outreach_operator.cli.confirm import confirm_change
from outreach_operator.cli.dlq.pipe import pipe_handler
from outreach_operator.cli.dlq.reconciler import own_functions, reconciler_handler
from outreach_operator.cli.dlq.replay_queue import replay_queue
from outreach_operator.cli.output import BadInput, Session
from outreach_operator.errors import ReplayRefusedError


def replay_dlq(
    s: Session, which: str, limit: int, function: str | None, jobs: tuple[str, ...], dry_run: bool
) -> None:
    """Replay up to ``limit`` messages of the ``which`` DLQ (``pipe`` or ``reconciler``)."""
    if limit < 1:
        raise BadInput("--limit must be at least 1")
    if which == "pipe":
        if function:
            raise BadInput("--function is for replay reconciler")
        for job in jobs:
            try:
                validate_job_id(job)
            except InvalidJobInputError as exc:
                raise BadInput(f"--job: {exc}") from exc
        url = s.targets.require("pipe_dlq_url", "--pipe-dlq-url")
        handler = pipe_handler(s.targets.require("scrape_queue_url", "--queue-url"), jobs)
    else:
        if jobs:
            raise BadInput("--job is for replay pipe")
        url = s.targets.require("reconciler_dlq_url", "--reconciler-dlq-url")
        own = own_functions(s)
        if function:
            try:
                function = own.resolve(function)
            except ReplayRefusedError as exc:
                raise BadInput(f"--function {exc}") from exc
        handler = reconciler_handler(own, function)
    if not dry_run:
        scope = f" (jobs {', '.join(jobs)})" if jobs else ""
        confirm_change(s, f"replay up to {limit} messages of the {which} DLQ{scope}")
    replay_queue(s, url, handler, limit=limit, dry_run=dry_run, what=f"dlq {which}")
