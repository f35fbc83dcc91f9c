"""Fixtures shared by the unit tests of more than one handler file."""

from collections.abc import Iterator

import pytest

from outreach_dev.contacts_table_shape import create_contacts_table
from tests.functions.email_worker_support import (
    recording_ses,  # noqa: F401 - a fixture
    ses,  # noqa: F401 - a fixture, found by name
)
from tests.support.aws import REGION

CONTACTS_TABLE = "outreach-test-contacts"


@pytest.fixture(autouse=True)
def contact_ledger(request: pytest.FixtureRequest) -> Iterator[str | None]:
    """The contact ledger's table (modules/contact-ledger's shape) beside every test's moto resources,
    and ``CONTACTS_TABLE`` naming it, as Terraform sets it on the functions that read the ledger.

    Only for a test that uses the ``resources`` fixture: the others run without moto.
    """
    if "resources" not in request.fixturenames:
        yield None
        return
    request.getfixturevalue("resources")
    monkeypatch: pytest.MonkeyPatch = request.getfixturevalue("monkeypatch")
    monkeypatch.setenv("CONTACTS_TABLE", create_contacts_table(CONTACTS_TABLE, REGION))
    yield CONTACTS_TABLE
