"""A small valid campaign as data, for tests to change one field of."""

from __future__ import annotations

from typing import Any

import pytest


def campaign_data(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "campaign_id": "spring-2027",
        "sender": "Acme Sales <sales@acme.example>",
        "reply_to": "replies@acme.example",
        "unsubscribe": "mailto:unsubscribe@acme.example?subject={{ email | urlencode }}",
        "window": {
            "weekdays": ["mon", "tue", "wed", "thu", "fri"],
            "start": "09:00",
            "end": "17:00",
            "timezone": "Europe/Berlin",
        },
        "max_per_minute": 10,
        "steps": [
            {"subject": "About {{ company }}", "text": "Hello {{ company }}\n{{ unsubscribe }}"},
            {"after_days": 3, "subject": "Again: {{ company }}", "text": "Still there?"},
        ],
    }
    data.update(changes)
    return data


@pytest.fixture
def campaign_dict() -> dict[str, Any]:
    return campaign_data()
