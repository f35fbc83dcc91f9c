from __future__ import annotations

from pathlib import Path

import pytest

from tests.policies.checkov_report import CheckovReport, run_checkov
from tests.support.call_timeouts import count_the_call_only

FIXTURES = Path(__file__).resolve().parent / "fixtures"
PACKAGE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A policy test's timeout counts its own call, not the checkov run its fixture shares with the
    other tests (which the first to run would otherwise pay: minutes on a loaded machine, beside the
    other test workers); each checkov run is bounded by run_checkov's own timeout."""
    count_the_call_only(items, PACKAGE)


@pytest.fixture(scope="session")
def fixture_report() -> CheckovReport:
    """One checkov run over every rule's fixture folder, shared by the policy tests."""
    return run_checkov(FIXTURES)
