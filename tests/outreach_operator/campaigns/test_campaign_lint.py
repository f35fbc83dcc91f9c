"""The campaign lint: each rule refuses its failing fixture naming the field and passes its passing one;
a rule is turned off only by name with a reason, and a waived rule is still checked and reported."""

from __future__ import annotations

from typing import Any

import pytest

from outreach_operator.campaigns.campaign_file import CampaignFileError, parse_campaign
from outreach_operator.campaigns.compliance.lint import lint_campaign
from outreach_operator.campaigns.compliance.rule_ids import (
    DATA_SOURCE,
    MISLEADING_SUBJECT,
    POSTAL_ADDRESS,
    RULE_IDS,
    UNSUBSCRIBE_LINK,
)
from outreach_operator.campaigns.compliance.rules import RULES
from outreach_operator.campaigns.rendering import render_step
from tests.outreach_operator.campaigns.conftest import campaign_data

ADDRESS = "Acme GmbH, Hauptstr. 1, 10115 Berlin, Germany"
SOURCE = "the contact page of your website"
SAYS = "\n{{ unsubscribe }}\n{{ postal_address }}\nWe found you on {{ data_source }}."


def _step(text: str = "Hello" + SAYS, after_days: int = 0, **fields: Any) -> dict[str, Any]:
    return {"after_days": after_days, "subject": "About {{ company }}", "text": text, **fields}


def _lawful(**changes: Any) -> dict[str, Any]:
    """A campaign every rule passes (EU recipients declared, so every rule applies)."""
    data = campaign_data(
        postal_address=ADDRESS,
        eu_recipients=True,
        data_source=SOURCE,
        steps=[_step(), _step("Again" + SAYS, after_days=3)],
    )
    data.update(changes)
    return data


# Per rule: a campaign it passes, one it refuses, and the fields the refusal names.
FIXTURES: dict[str, tuple[dict[str, Any], dict[str, Any], list[str]]] = {
    UNSUBSCRIBE_LINK: (
        _lawful(steps=[_step(html="<p>Hi</p><a href='{{ unsubscribe }}'>stop</a>" + SAYS)]),
        _lawful(
            steps=[
                _step(
                    "Hello {{ postal_address }} {{ data_source }}",
                    html="<p>{{ unsubscribe }}{{ postal_address }}{{ data_source }}</p>",
                )
            ]
        ),
        ["steps.0.text"],
    ),
    POSTAL_ADDRESS: (
        _lawful(steps=[_step(f"Hi {{{{ unsubscribe }}}} {{{{ data_source }}}}\n{ADDRESS.upper()}")]),
        _lawful(steps=[_step(), _step("Again {{ unsubscribe }}", after_days=2)]),
        ["steps.1.text"],
    ),
    DATA_SOURCE: (
        _lawful(steps=[_step(), _step("Again {{ unsubscribe }} {{ postal_address }}", after_days=2)]),
        _lawful(steps=[_step("Hello {{ unsubscribe }} {{ postal_address }}"), _step(after_days=2)]),
        ["steps.0.text"],
    ),
    MISLEADING_SUBJECT: (
        _lawful(steps=[_step(), _step(after_days=2, subject="Re: About {{ company }}")]),
        _lawful(
            steps=[
                _step(subject="Fwd: About {{ company }}"),
                _step(after_days=2, subject="Re: x", threaded=False),
            ]
        ),
        ["steps.0.subject", "steps.1.subject"],
    ),
}


def _verdict(data: dict[str, Any], rule: str) -> Any:
    [verdict] = [v for v in lint_campaign(parse_campaign(data)).verdicts if v.rule.name == rule]
    return verdict


def test_every_rule_has_a_passing_and_a_failing_fixture_and_cites_its_source() -> None:
    assert sorted(FIXTURES) == sorted(RULE_IDS) == sorted(rule.name for rule in RULES)
    for rule in RULES:
        assert rule.sources and all(source.startswith("https://") for source in rule.sources), rule.name


def test_the_lawful_campaign_passes_every_rule() -> None:
    report = lint_campaign(parse_campaign(_lawful()))
    assert [v.outcome for v in report.verdicts] == ["passed"] * len(RULES)
    assert report.refused == ()


@pytest.mark.parametrize("rule", sorted(FIXTURES))
def test_each_rule_passes_its_passing_fixture(rule: str) -> None:
    passing, _, _ = FIXTURES[rule]
    assert _verdict(passing, rule).outcome == "passed"


@pytest.mark.parametrize("rule", sorted(FIXTURES))
def test_each_rule_refuses_its_failing_fixture_naming_the_step_and_field(rule: str) -> None:
    _, failing, fields = FIXTURES[rule]
    verdict = _verdict(failing, rule)
    assert verdict.outcome == "failed"
    assert [finding.field for finding in verdict.findings] == fields
    report = lint_campaign(parse_campaign(failing))
    assert [v.rule.name for v in report.refused] == [rule]
    assert all(
        f"{field}: " in report.problems() and f"(rule {rule})" in report.problems() for field in fields
    )


@pytest.mark.parametrize(
    ("missing", "rule"), [("postal_address", POSTAL_ADDRESS), ("data_source", DATA_SOURCE)]
)
def test_a_campaign_that_does_not_give_what_a_rule_asks_for_is_refused_naming_the_field(
    missing: str, rule: str
) -> None:
    data = _lawful()
    del data[missing]
    verdict = _verdict(data, rule)
    assert (verdict.outcome, [f.field for f in verdict.findings]) == ("failed", [missing])


def test_the_data_source_rule_applies_only_to_a_campaign_that_declares_eu_recipients() -> None:
    data = _lawful(eu_recipients=False, steps=[_step("Hi {{ unsubscribe }} {{ postal_address }}")])
    del data["data_source"]
    assert _verdict(data, DATA_SOURCE).outcome == "not_applicable"
    assert lint_campaign(parse_campaign(data)).refused == ()


def test_a_template_that_sets_the_placeholder_itself_does_not_state_it() -> None:
    text = "{% set unsubscribe = 'nothing' %}{{ unsubscribe }} {{ postal_address }} {{ data_source }}"
    assert _verdict(_lawful(steps=[_step(text)]), UNSUBSCRIBE_LINK).outcome == "failed"


def test_a_waived_rule_is_still_checked_and_its_reason_reported_but_refuses_nothing() -> None:
    reason = "sent only to our own staff's test mailboxes"
    data = _lawful(compliance_waivers={POSTAL_ADDRESS: f"  {reason} "})
    del data["postal_address"]
    report = lint_campaign(parse_campaign(data))
    verdict = _verdict(data, POSTAL_ADDRESS)
    assert (verdict.outcome, verdict.reason) == ("waived", reason)
    assert [f.field for f in verdict.findings] == ["postal_address"]
    assert report.refused == ()
    assert report.as_dicts()[1]["waived_because"] == reason


@pytest.mark.parametrize(
    ("waivers", "named"),
    [
        ({"postal_adress": "a typo in the rule name"}, "unknown lint rules ['postal_adress']"),
        ({POSTAL_ADDRESS: "because"}, "compliance_waivers.postal-address: 10 to 500 characters"),
        ({POSTAL_ADDRESS: "x" * 501}, "compliance_waivers.postal-address: 10 to 500 characters"),
        ({POSTAL_ADDRESS: "two\nlines of reason"}, "compliance_waivers.postal-address: one line of text"),
    ],
)
def test_a_waiver_names_a_known_rule_and_says_why_in_one_line(waivers: dict[str, str], named: str) -> None:
    with pytest.raises(CampaignFileError) as caught:
        parse_campaign(_lawful(compliance_waivers=waivers))
    assert named in str(caught.value)


@pytest.mark.parametrize("field", ["postal_address", "data_source"])
@pytest.mark.parametrize(("value", "named"), [("", "1 to 300 characters"), ("a\r\nb", "one line of text")])
def test_a_statement_the_bodies_show_is_one_line_of_bounded_text(field: str, value: str, named: str) -> None:
    with pytest.raises(CampaignFileError) as caught:
        parse_campaign(_lawful(**{field: value}))
    assert f"{field}: " in str(caught.value) and named in str(caught.value)


def test_the_bodies_show_the_campaigns_postal_address_and_data_source_escaped_in_html() -> None:
    campaign = parse_campaign(
        _lawful(
            postal_address="Acme <Sales> & Co, 1 Main St",
            steps=[_step(html="<p>{{ postal_address }} {{ data_source }} {{ unsubscribe }}</p>")],
        )
    )
    message = render_step(campaign, 1, "to@example.org", {"company": "C"})
    assert "Acme <Sales> & Co, 1 Main St" in message.text and SOURCE in message.text
    assert "Acme &lt;Sales&gt; &amp; Co, 1 Main St" in message.html


def test_a_subject_rendered_to_re_is_refused_unless_the_campaign_waived_the_rule() -> None:
    steps = [_step(subject="{{ prefix }} About you")]
    values = {"company": "C", "prefix": "RE:"}
    refusing = parse_campaign(_lawful(steps=steps))
    with pytest.raises(Exception, match="starts with 'Re:' or 'Fwd:' after rendering"):
        render_step(refusing, 1, "to@example.org", values)
    waived = _lawful(
        steps=steps, compliance_waivers={MISLEADING_SUBJECT: "the recipients asked for this thread"}
    )
    assert render_step(parse_campaign(waived), 1, "to@example.org", values).subject == "RE: About you"
