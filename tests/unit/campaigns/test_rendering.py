"""Rendering: every placeholder required, no header injection, no code from templates, HTML escaped."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from outreach_tools.campaigns.campaign_file import parse_campaign
from outreach_tools.campaigns.planning import plan_campaign
from outreach_tools.campaigns.recipients import Recipient
from outreach_tools.campaigns.rendering import RenderError, render_step
from tests.unit.campaigns.conftest import campaign_data

START = datetime(2027, 3, 1, 9, 0, tzinfo=UTC)


def _campaign(**changes: Any) -> Any:
    return parse_campaign(campaign_data(**changes))


def _render_error(campaign: Any, values: dict[str, str], step: int = 1) -> RenderError:
    with pytest.raises(RenderError) as caught:
        render_step(campaign, step, "to@example.org", values)
    return caught.value


def test_placeholders_come_from_the_row_and_the_campaign() -> None:
    message = render_step(_campaign(), 1, "to@example.org", {"company": "Acme"})
    assert message.subject == "About Acme"
    assert message.text == "Hello Acme\nmailto:unsubscribe@acme.example?subject=to%40example.org"
    assert message.unsubscribe == "mailto:unsubscribe@acme.example?subject=to%40example.org"
    assert (message.sender, message.reply_to, message.to) == (
        "Acme Sales <sales@acme.example>",
        "replies@acme.example",
        "to@example.org",
    )


def test_missing_placeholder_is_an_error_naming_row_and_placeholder() -> None:
    recipients = [
        Recipient(row=2, source="r.csv:2", email="a@example.org", values={"company": "Acme"}),
        Recipient(row=3, source="r.csv:3", email="b@example.org", values={"name": "no company"}),
    ]
    plan = plan_campaign(_campaign(), recipients, START)
    assert {e.message.to for e in plan.emails} == {"a@example.org"}
    [rejected] = plan.rejected
    assert (rejected.row, rejected.source) == (3, "r.csv:3")
    assert rejected.reason == "steps.0.subject: 'company' is undefined"


def test_empty_value_counts_as_missing_unless_the_template_gives_a_default() -> None:
    assert "'company' is undefined" in str(_render_error(_campaign(), {"company": ""}))
    campaign = _campaign(steps=[{"subject": "Hi {{ name | default('there') }}", "text": "x"}])
    assert render_step(campaign, 1, "to@example.org", {"name": ""}).subject == "Hi there"


@pytest.mark.parametrize("line_break", ["\r\n", "\n", "\r"])
def test_line_break_in_a_subject_placeholder_value_is_refused(line_break: str) -> None:
    error = _render_error(_campaign(), {"company": f"Acme{line_break}Bcc: victim@example.org"})
    assert error.field == "steps.0.subject"
    assert "control character" in error.reason


def test_line_break_in_an_unsubscribe_placeholder_value_is_refused() -> None:
    campaign = _campaign(unsubscribe="https://acme.example/u/{{ token }}")
    error = _render_error(campaign, {"company": "Acme", "token": "x\r\nBcc: victim@example.org"})
    assert error.field == "unsubscribe"


def test_line_break_in_a_body_value_stays_in_the_body() -> None:
    message = render_step(_campaign(), 1, "to@example.org", {"company": "Acme"})
    campaign = _campaign(steps=[{"subject": "Hi", "text": "{{ note }}"}])
    assert render_step(campaign, 1, "to@example.org", {"note": "one\r\ntwo"}).text == "one\r\ntwo"
    assert "\n" not in message.subject


def test_html_body_escapes_placeholder_values() -> None:
    campaign = _campaign(steps=[{"subject": "Hi", "text": "t", "html": "<p>{{ company }}</p>"}])
    html = render_step(campaign, 1, "to@example.org", {"company": "<script>x()</script>"}).html
    assert html == "<p>&lt;script&gt;x()&lt;/script&gt;</p>"


def test_templates_cannot_reach_python_internals() -> None:
    campaign = _campaign(
        steps=[{"subject": "Hi", "text": "{{ company.__class__.__mro__[1].__subclasses__() }}"}]
    )
    error = _render_error(campaign, {"company": "Acme"})
    assert error.field == "steps.0.text"
    assert error.reason == "access to attribute '__class__' of 'str' object is unsafe."


def test_templates_cannot_change_their_values() -> None:
    campaign = _campaign(steps=[{"subject": "Hi", "text": "{{ items.append(1) }}"}])
    error = _render_error(campaign, {"items": []})  # type: ignore[dict-item]
    assert error.reason == "access to attribute 'append' of 'list' object is unsafe."
