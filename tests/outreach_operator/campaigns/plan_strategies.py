"""Hypothesis strategies the plan's property tests share: a send window, a campaign's steps, a start."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from hypothesis import strategies as st

from outreach_operator.campaigns.campaign_file import WEEKDAYS


@st.composite
def send_windows(draw: st.DrawFn, zones: list[str]) -> dict[str, Any]:
    """A window on some weekdays from 5 minutes to 10 hours long (a busy plan runs to its end)."""
    opens = draw(st.integers(0, 23 * 60 - 6))
    closes = draw(st.integers(opens + 5, min(opens + 600, 23 * 60 + 59)))
    return {
        "weekdays": draw(st.lists(st.sampled_from(WEEKDAYS), min_size=1, max_size=7, unique=True)),
        "start": f"{opens // 60:02d}:{opens % 60:02d}",
        "end": f"{closes // 60:02d}:{closes % 60:02d}",
        "timezone": draw(st.sampled_from(zones)),
    }


@st.composite
def campaign_steps(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A first step and up to two follow-ups, 1 to 4 days apart."""
    steps: list[dict[str, Any]] = [{"subject": "Hi", "text": "t"}]
    steps += [
        {"after_days": n, "subject": "Again", "text": "t"}
        for n in draw(st.lists(st.integers(1, 4), max_size=2))
    ]
    return steps


def starts() -> st.SearchStrategy[datetime]:
    """A start around the 2026/2027 clock changes of both hemispheres, or anywhere in between."""
    return st.datetimes(
        min_value=datetime(2026, 3, 20), max_value=datetime(2027, 4, 10), timezones=st.just(UTC)
    )
