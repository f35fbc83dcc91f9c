"""Fixtures shared by the unit tests of more than one handler file."""

from tests.functions.email_worker_support import ses  # noqa: F401 - a fixture, found by name
