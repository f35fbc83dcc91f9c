"""Fixtures of the unsubscribe tests: the unsubscribe key alone, or with the SES-events queue and tables."""

from tests.functions.feedback_support import feedback, hmac_key  # noqa: F401 - fixtures, found by name
