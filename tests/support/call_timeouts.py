"""Timeouts that count a test's own call, not the setup of a costly fixture it shares with others."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest


def count_the_call_only(items: Iterable[pytest.Item], package: Path) -> None:
    """Each test under ``package`` keeps its timeout (its mark's, or the configured one), counted on
    its call alone (pytest-timeout's ``func_only``): the first test to need a shared fixture does not
    pay the fixture's start within its own budget. The fixture must bound its start itself."""
    for item in items:
        if package not in item.path.parents:
            continue
        marker = item.get_closest_marker("timeout")
        configured = item.config.getini("timeout")
        seconds = (marker.kwargs.get("timeout") or marker.args[0]) if marker else configured
        item.add_marker(pytest.mark.timeout(float(seconds), func_only=True), append=False)
