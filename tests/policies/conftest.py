from __future__ import annotations

from pathlib import Path

import pytest

from tests.policies.checkov_report import CheckovReport, run_checkov

FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture(scope="session")
def fixture_report() -> CheckovReport:
    """One checkov run over every rule's fixture folder, shared by the policy tests."""
    return run_checkov(FIXTURES)
