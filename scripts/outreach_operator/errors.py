"""The errors the operator's tools raise, and what the ``outreach`` command makes of each.

Every one is a refusal or a stop that a person can act on; ``cli/output.py`` maps them to exit codes
(bad input 2, a change that stopped halfway 1). Nothing here is retried by itself: the operator
reads the message, fixes the input or the state it names, and runs the command again.

- ``InvalidRequestError``, ``LineTooLongError``, ``TemplateProblemError``, ``RenderError``,
  ``TemplateLimitError``: the input (an erasure request, a file, a campaign's template) is refused
  before anything is written; the message names the field or line.
- ``ReplayRefusedError``: a dead-letter message this replay may not act on; it stays in its queue.
- ``RowsChangedError``, ``ErasureStoppedError``: an erasure met rows a worker had moved, or a store
  that failed halfway; what was deleted and what is left are reported, and a re-run finishes it.
- ``FollowTimeoutError``: a job still had open tasks when ``--follow`` stopped waiting.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jinja2.exceptions import SecurityError

if TYPE_CHECKING:
    from pathlib import Path

    from outreach_operator.cli.follow import JobProgress
    from outreach_operator.erasure.deletion import Deleted


class ErasureStoppedError(Exception):
    """A store refused or failed halfway: ``deleted`` says what went, ``left`` what is still stored."""

    def __init__(self, deleted: Deleted, left: dict[str, int], cause: BaseException) -> None:
        super().__init__(str(cause))
        self.deleted = deleted
        self.left = left
        self.cause = cause


class FollowTimeoutError(Exception):
    def __init__(self, progress: JobProgress, seconds: float) -> None:
        super().__init__(
            f"job {progress.job_id}: {progress.open} of {progress.total} tasks "
            f"still open after {seconds:.0f}s"
        )
        self.progress = progress


class InvalidRequestError(ValueError):
    """An erasure request that names no job or address, both, or something that is neither."""


class LineTooLongError(ValueError):
    """A line longer than ``bounded_lines.MAX_LINE_CHARS``: names the file and the line's number."""

    def __init__(self, path: Path, line: int, limit: int) -> None:
        super().__init__(f"{path}: line {line} is longer than {limit:,} characters, the most a line may have")
        self.line = line


class RenderError(ValueError):
    """A message that cannot be rendered for one recipient: ``field`` says where, the message why."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


class ReplayRefusedError(Exception):
    """A message the rules do not let this replay act on (it stays in the queue; exit 2)."""

    def __init__(self, subject: str, why: str) -> None:
        super().__init__(f"{subject}: {why}")
        self.subject = subject
        self.why = why


class RowsChangedError(Exception):
    """Rows changed between the read and the delete (a worker moved them): they were left in place."""


class TemplateLimitError(SecurityError):
    """A render that went past one of the sandbox's limits: the message says which and by how much."""


class TemplateProblemError(ValueError):
    """A template that does not compile (raised when the campaign file is read)."""
