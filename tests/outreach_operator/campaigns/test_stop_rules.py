"""Stop rules in the campaign file: explicit with their defaults, every error naming its field; a "Re:"
subject only on a threaded step; the planner stores the rules and each email's reply address."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from outreach import clients, task_store
from outreach.email_task import email_reply_handle
from outreach.reply_token import task_of_reply_address
from outreach.sequence_rules import SequenceRules
from outreach_operator.campaigns.campaign_file import CampaignFileError, parse_campaign
from outreach_operator.campaigns.compliance.lint import lint_campaign
from outreach_operator.campaigns.compliance.rule_ids import MISLEADING_SUBJECT
from outreach_operator.campaigns.one_click_links import OneClickLinks
from outreach_operator.campaigns.planning import plan_campaign
from outreach_operator.campaigns.recipients import Recipient
from outreach_operator.campaigns.rendering import render_step
from outreach_operator.campaigns.reply_addresses import DRY_RUN_MAC, ReplyAddresses
from outreach_operator.campaigns.stop_rules import stop_rules_report
from outreach_operator.errors import RenderError
from tests.functions.feedback_support import create_hmac_key
from tests.outreach_operator.campaigns.conftest import campaign_data
from tests.support.aws import Resources

START = datetime(2027, 3, 1, 8, 0, tzinfo=UTC)
DOMAIN = "reply.acme.example"
LINKS = OneClickLinks("https://u.lambda-url.eu-central-1.on.aws/", None, "spring-2027")


def _error(data: dict[str, Any]) -> str:
    with pytest.raises(CampaignFileError) as caught:
        parse_campaign(data)
    return str(caught.value)


def _refused(data: dict[str, Any]) -> str:
    """What the campaign lint's misleading-subject rule refuses in ``data``, one finding a line."""
    [verdict] = [v for v in lint_campaign(parse_campaign(data)).verdicts if v.rule.name == MISLEADING_SUBJECT]
    return "\n".join(f"{f.field}: {f.problem}" for f in verdict.findings)


def _steps(*subjects: str, threaded: tuple[bool | None, ...] = ()) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    for index, subject in enumerate(subjects):
        step: dict[str, Any] = {"subject": subject, "text": "t"}
        if index:
            step["after_days"] = 3
        if index < len(threaded) and threaded[index] is not None:
            step["threaded"] = threaded[index]
        steps.append(step)
    return steps


def _recipients(count: int = 2) -> list[Recipient]:
    return [
        Recipient(row=i + 2, source=f"r.csv:{i + 2}", email=f"r{i}@example.org", values={"company": f"C{i}"})
        for i in range(count)
    ]


def _with_reply_domain(**changes: Any) -> Any:
    data = campaign_data(reply_domain=DOMAIN, **changes)
    del data["unsubscribe"]
    return parse_campaign(data)


# ---- the campaign file ----------------------------------------------------------------------------


def test_without_stop_rules_a_reply_stops_everything_an_absence_postpones_and_follow_ups_are_threaded() -> (
    None
):
    campaign = parse_campaign(campaign_data())
    assert campaign.stop_rules.model_dump() == {
        "on_reply": "stop",
        "reply_stops_other_campaigns": True,
        "on_out_of_office": "postpone",
        "forward_auto_replies": False,
    }
    assert campaign.reply_domain is None
    assert [campaign.threaded(step) for step in (1, 2)] == [False, True]


def test_stop_rules_and_threads_are_read_as_written() -> None:
    rules = {
        "on_reply": "continue",
        "reply_stops_other_campaigns": False,
        "on_out_of_office": "continue",
        "forward_auto_replies": True,
    }
    campaign = parse_campaign(
        campaign_data(
            stop_rules=rules, reply_domain=DOMAIN, steps=_steps("a", "b", "c", threaded=(None, False))
        )
    )
    assert campaign.stop_rules.model_dump() == rules
    assert campaign.reply_domain == DOMAIN
    assert [campaign.threaded(step) for step in (1, 2, 3)] == [False, False, True]


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"stop_rules": {"on_reply": "pause"}}, "stop_rules.on_reply:"),
        ({"stop_rules": {"on_out_of_office": "stop"}}, "stop_rules.on_out_of_office:"),
        ({"stop_rules": {"reply_stops_other_campaigns": "maybe"}}, "stop_rules.reply_stops_other_campaigns:"),
        ({"stop_rules": {"on_bounce": "stop"}}, "stop_rules.on_bounce: Extra inputs are not permitted"),
        ({"reply_domain": "Reply.Acme.Example"}, "reply_domain:"),
        ({"reply_domain": "bücher.example"}, "reply_domain:"),
        ({"reply_domain": "localhost"}, "reply_domain:"),
        ({"reply_domain": "reply.acme.example/x"}, "reply_domain:"),
        ({"reply_domain": ("a" * 63 + ".") * 3 + "b" * 20 + ".example"}, "reply_domain:"),
        ({"reply_to": "rëplies@acme.example"}, "reply_to:"),
        ({"steps": _steps("a", "b", threaded=(True,))}, "steps: the first step answers nothing"),
    ],
)
def test_a_stop_rule_reply_domain_or_thread_no_campaign_can_have_is_refused_naming_its_field(
    changes: dict[str, Any], named: str
) -> None:
    assert named in _error(campaign_data(**changes))


@pytest.mark.parametrize(
    "subject",
    ["Re: About you", "RE: About you", "re:About you", "  Re : About you", "Fwd: About you", "FW: x"],
)
def test_a_re_or_fwd_subject_is_refused_on_the_first_step_naming_it(subject: str) -> None:
    assert "steps.0.subject: starts with 'Re:' or 'Fwd:' on a step that is not threaded" in _refused(
        campaign_data(steps=_steps(subject, "b"))
    )


def test_a_re_subject_is_refused_on_a_follow_up_that_is_not_threaded_and_allowed_on_one_that_is() -> None:
    message = _refused(campaign_data(steps=_steps("a", "Re: a", "Re: a", threaded=(None, False, None))))
    assert "steps.1.subject: starts with 'Re:'" in message
    assert "steps.2.subject" not in message
    assert parse_campaign(campaign_data(steps=_steps("a", "Re: a", threaded=(None, True)))).threaded(2)


def test_a_subject_that_only_mentions_re_is_no_reply_subject() -> None:
    parse_campaign(campaign_data(steps=_steps("Regarding {{ company }}", "Are: you there")))


def test_a_subject_that_renders_to_re_on_an_unthreaded_step_refuses_its_row() -> None:
    campaign = parse_campaign(campaign_data(steps=_steps("{{ prefix }} About you", "b")))
    recipients = [
        Recipient(row=2, source="r.csv:2", email="a@example.org", values={"prefix": "RE:"}),
        Recipient(row=3, source="r.csv:3", email="b@example.org", values={"prefix": "Hello:"}),
    ]
    plan = plan_campaign(campaign, recipients, START)
    [rejected] = plan.rejected
    assert rejected.row == 2
    assert rejected.reason.startswith("steps.0.subject: starts with 'Re:' or 'Fwd:' after rendering")
    assert {email.message.to for email in plan.emails} == {"b@example.org"}


# ---- planning -------------------------------------------------------------------------------------


def test_every_planned_email_carries_the_rules_with_the_window_and_the_owner() -> None:
    data = campaign_data(stop_rules={"on_reply": "continue"}, reply_to="Replies <Replies@Acme.example>")
    data["window"] = {**data["window"], "weekdays": ["fri", "mon"], "start": "08:30", "end": "18:15"}
    plan = plan_campaign(parse_campaign(data), _recipients(), START)
    expected = SequenceRules(
        on_reply="continue",
        owner="Replies@acme.example",
        send_days=(0, 4),
        window_start="08:30",
        window_end="18:15",
    )
    assert {email.rules for email in plan.emails} == {expected}
    assert [(email.step, email.threaded) for email in plan.emails] == [(1, False)] * 2 + [(2, True)] * 2


def test_without_a_reply_domain_replies_go_to_reply_to_and_no_mailbox_is_added() -> None:
    plan = plan_campaign(parse_campaign(campaign_data()), _recipients(1), START)
    assert {(email.message.reply_to, email.message.unsubscribe_mailto) for email in plan.emails} == {
        ("replies@acme.example", "")
    }
    assert {email.reply_handle for email in plan.emails} == {None}


def test_a_dry_run_gives_each_email_its_real_handle_and_a_placeholder_mac_without_kms(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_kms() -> None:
        raise AssertionError("a dry run asked KMS")

    monkeypatch.setattr(clients, "kms", no_kms)
    campaign = _with_reply_domain()
    replies = ReplyAddresses(DOMAIN, None, campaign.campaign_id)
    plan = plan_campaign(campaign, _recipients(), START, LINKS, replies)
    for email in plan.emails:
        handle = email_reply_handle(email.task_id)
        assert email.message.reply_to == f"reply+{handle}.{DRY_RUN_MAC}@{DOMAIN}"
        assert email.reply_handle == handle
    assert replies.made == 0


def test_with_a_reply_domain_each_email_replies_to_its_own_task_and_the_owner_is_reply_to(
    resources: Resources,
) -> None:
    key = create_hmac_key()
    campaign = _with_reply_domain()
    replies = ReplyAddresses(DOMAIN, key, campaign.campaign_id)
    plan = plan_campaign(campaign, _recipients(), START, LINKS, replies)
    assert replies.made == len(plan.emails) == 4
    assert len({email.message.reply_to for email in plan.emails}) == 4
    assert {email.rules.owner for email in plan.emails if email.rules} == {"replies@acme.example"}
    task_store.create_email_tasks(plan.emails)
    for email in plan.emails:
        found = task_of_reply_address(email.message.reply_to, DOMAIN, key_id=key)
        assert found is not None and found.task_id == email.task_id


def test_with_a_reply_domain_and_no_unsubscribe_of_its_own_the_mailbox_stands_beside_the_one_click_link() -> (
    None
):
    campaign = _with_reply_domain()
    message = render_step(
        campaign, 1, "a@example.org", {"company": "Acme"}, LINKS, ReplyAddresses(DOMAIN, None, "spring-2027")
    )
    assert message.unsubscribe.startswith("https://u.lambda-url.eu-central-1.on.aws/?t=")
    assert message.unsubscribe_mailto == f"mailto:unsubscribe@{DOMAIN}"
    own = parse_campaign(campaign_data(reply_domain=DOMAIN))
    mine = render_step(own, 1, "a@example.org", {"company": "Acme"}, None, ReplyAddresses(DOMAIN, None, "x"))
    assert (mine.unsubscribe.startswith("mailto:unsubscribe@acme.example"), mine.unsubscribe_mailto) == (
        True,
        "",
    )


def test_a_campaign_with_a_reply_domain_and_no_reply_addresses_is_refused_naming_reply_to() -> None:
    with pytest.raises(RenderError) as caught:
        render_step(_with_reply_domain(), 1, "a@example.org", {"company": "Acme"}, LINKS)
    assert caught.value.field == "reply_to"


# ---- what the dry run reports ---------------------------------------------------------------------


def test_the_report_states_the_rules_where_replies_go_and_the_threaded_steps() -> None:
    report = stop_rules_report(_with_reply_domain(stop_rules={"forward_auto_replies": True}))
    assert report == {
        "on_reply": "stop",
        "reply_stops_other_campaigns": True,
        "on_out_of_office": "postpone",
        "forward_auto_replies": True,
        "reply_domain": DOMAIN,
        "owner": "replies@acme.example",
        "threaded_steps": [2],
        "reply_to": f"reply+<token>@{DOMAIN} (one per email)",
        "received": f"yes: at {DOMAIN}, forwarded to the owner",
        "unsubscribe_mailto": f"mailto:unsubscribe@{DOMAIN}",
    }
    without = stop_rules_report(parse_campaign(campaign_data()))
    assert (without["reply_domain"], without["reply_to"]) == (None, "replies@acme.example")
    assert without["received"].startswith("no: ")
