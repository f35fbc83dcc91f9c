"""Every log line leaves a function with its e-mail addresses and phone numbers replaced by hashes.

The shared Powertools logger (``observability.logger``) formats with ``RedactingFormatter``, so the
rule holds for every line, including one a later change adds: the message, every key given in
``extra`` or ``append_keys``, and the text and stack trace of a logged exception (an SES error that
quotes the recipient, a scrape failure that quotes a link from the page) pass through
``personal_data.redact_personal_data`` just before the line is written. Rows and result documents
keep the data itself; only what CloudWatch Logs (and the embedded AWS's function log files) receive
is redacted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aws_lambda_powertools.logging.formatter import LambdaPowertoolsFormatter
from aws_lambda_powertools.logging.types import LogRecord

from outreach.personal_data import redact_personal_data


def redacted(value: Any) -> Any:
    """``value`` with every string in it, at any depth, redacted; other leaves as JSON will write them."""
    if isinstance(value, str):
        return redact_personal_data(value)
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, Mapping):
        return {
            redacted(key) if isinstance(key, str) else key: redacted(inner) for key, inner in value.items()
        }
    if isinstance(value, list | tuple | set | frozenset):
        return [redacted(inner) for inner in value]
    # What the formatter's json_default (str) would write, redacted.
    return redact_personal_data(str(value))


class RedactingFormatter(LambdaPowertoolsFormatter):
    """Powertools' JSON formatter, with every value redacted before it is serialised."""

    def serialize(self, log: LogRecord) -> str:
        return super().serialize(log=redacted(log))
