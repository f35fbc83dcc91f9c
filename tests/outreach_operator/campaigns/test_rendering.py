"""Rendering: every placeholder required, no header injection, no code from templates, HTML escaped,
every render bounded, every message capped, links and the unsubscribe target safe."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from outreach import email_worker, task_store
from outreach.email_task import EmailMessage, PlannedEmail
from outreach_operator.campaigns import message_caps, template_sandbox
from outreach_operator.campaigns.campaign_file import CampaignFileError, parse_campaign
from outreach_operator.campaigns.one_click_links import DRY_RUN_TOKEN, OneClickLinks
from outreach_operator.campaigns.planning import plan_campaign
from outreach_operator.campaigns.recipients import Recipient
from outreach_operator.campaigns.rendering import render_step
from outreach_operator.errors import RenderError
from tests.outreach_operator.campaigns.conftest import campaign_data

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


def test_a_line_break_in_an_unsubscribe_value_is_percent_encoded_and_never_reaches_the_header() -> None:
    campaign = _campaign(unsubscribe="https://acme.example/u/{{ token }}")
    message = render_step(
        campaign, 1, "to@example.org", {"company": "Acme", "token": "x\r\nBcc: v@example.org"}
    )
    assert message.unsubscribe == "https://acme.example/u/x%0D%0ABcc%3A%20v%40example.org"


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


# -- what a template may cost (template_sandbox) ---------------------------------------------------


def _text(template: str) -> Any:
    return _campaign(steps=[{"subject": "Hi", "text": template}])


@pytest.mark.parametrize(
    ("template", "tag"),
    [
        ("{% include 'other.txt' %}", "include"),
        ("{% import 'macros.txt' as m %}", "import"),
        ("{% from 'macros.txt' import greet %}", "from ... import"),
        ("{% extends 'base.txt' %}", "extends"),
    ],
)
def test_a_template_that_uses_another_template_is_refused_when_the_campaign_is_read(
    template: str, tag: str
) -> None:
    with pytest.raises(CampaignFileError) as caught:
        _text(template)
    assert (
        f"steps.0.text: template error on line 1: {{% {tag} %}} is not available: a campaign template "
        "cannot use other templates"
    ) in str(caught.value)


def test_a_macro_that_calls_itself_is_a_render_error_naming_the_field() -> None:
    error = _render_error(_text("{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}"), {"company": "A"})
    assert (error.field, error.reason) == (
        "steps.0.text",
        "calls nest too deeply (a macro that calls itself?)",
    )


def test_a_range_of_a_million_is_a_render_error_naming_the_field() -> None:
    error = _render_error(_text("{% for i in range(10**6) %}.{% endfor %}"), {"company": "A"})
    assert (error.field, error.reason) == (
        "steps.0.text",
        "range() of 1,000,000 numbers; a template may count to at most 10,000",
    )


@pytest.mark.parametrize(
    "template",
    [
        "{{ 'A' * 5000000 }}",
        "{{ [company] * 5000000 }}",
        "{{ 'x'|center(5000000) }}",
        "{{ 'x'.ljust(5000000) }}",
        "{{ company|indent(5000000) }}",
        "{{ company|replace('', company * 5000) }}",
        "{{ range(10000)|join(company * 100) }}",
        "{{ ('\\t' * 100).expandtabs(50000) }}",
        "{% set ns = namespace(s=company) %}{% for i in range(20) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
        "{% set ns = namespace(s=[company]) %}{% for i in range(20) %}{% set ns.s = ns.s + ns.s %}"
        "{% endfor %}",
    ],
)
def test_a_value_over_256_kib_is_refused_before_it_is_made_in_full(template: str) -> None:
    error = _render_error(_text(template), {"company": "Acme & Co"})
    assert error.field == "steps.0.text"
    assert error.reason.endswith("characters; a template's values may have at most 262,144"), error.reason


@pytest.mark.parametrize(
    ("template", "reason"),
    [
        (
            "{{ '%s'|format(company) }}",
            "the format filter is not available: write the value as a placeholder",
        ),
        (
            "{{ '%9000000d' % 1 }}",
            "'%' formatting of text is not available: write the value as a placeholder",
        ),
        ("{{ '{:>9000000}'.format(1) }}", "access to attribute 'format' of 'str' object is unsafe."),
        ("{{ 10 ** 1000000 }}", "'**' would make a number of more than 4,096 bits"),
        ("{{ lipsum(100) }}", "'lipsum' is undefined"),
    ],
)
def test_what_cannot_be_sized_beforehand_is_not_available(template: str, reason: str) -> None:
    error = _render_error(_text(template), {"company": "Acme"})
    assert (error.field, error.reason) == ("steps.0.text", reason)


def test_nested_loops_stop_at_100000_steps() -> None:
    loops = (
        "{% set r = range(100) %}"
        "{% for a in r %}{% for b in r %}{% for c in r %}{% endfor %}{% endfor %}{% endfor %}"
    )
    error = _render_error(_text(loops), {"company": "A"})
    assert error.reason == "the template took more than 100,000 steps (loop iterations, calls and filters)"
    ordinary = (  # loops, filters and operators well under the limits render as before
        "{% for word in company.split() %}{{ loop.index }}/{{ loop.length }} {{ word|upper }}; {% endfor %}"
        "{{ [company, 'x']|join(', ') }} {{ company|replace('&', 'and') }} {{ 'x' * 3 }} {{ 2 ** 10 }}"
    )
    message = render_step(_text(ordinary), 1, "to@example.org", {"company": "Acme & Co"})
    assert message.text == "1/3 ACME; 2/3 &; 3/3 CO; Acme & Co, x Acme and Co xxx 1024"


def test_a_render_past_its_deadline_is_a_render_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(template_sandbox, "MAX_SECONDS", 0.0)
    error = _render_error(_text("{% for i in range(3) %}{{ i }}{% endfor %}"), {"company": "A"})
    # the unsubscribe target is the first field rendered
    assert (error.field, error.reason) == ("unsubscribe", "the template took more than 0 s to render")


def test_output_stops_as_soon_as_it_passes_the_fields_cap() -> None:
    campaign = _campaign(
        steps=[{"subject": "{% for i in range(10000) %}{{ company }}{% endfor %}", "text": "t"}]
    )
    error = _render_error(campaign, {"company": "Acme & Co"})
    assert (error.field, error.reason) == (
        "steps.0.subject",
        "the output passed 250 characters, the most this field may have",
    )


def test_what_a_macro_or_set_block_produces_counts_toward_one_mebibyte() -> None:
    template = (
        "{% set x %}{% for i in range(10000) %}{{ company * 20 }}{% endfor %}{% endset %}{{ x|length }}"
    )
    error = _render_error(_text(template), {"company": "Acme & Co"})
    assert (
        error.reason
        == "the template produced more than 1,048,576 characters (macros and set blocks included)"
    )


# -- what a message may be (message_caps, subject_characters, html_links) ---------------------------


def test_a_subject_over_250_characters_is_refused_naming_the_field() -> None:
    error = _render_error(_campaign(), {"company": "A" * 251})
    assert (error.field, error.reason) == (
        "steps.0.subject",
        "the output passed 250 characters, the most this field may have",
    )


def test_a_text_body_over_128_kib_is_refused_naming_the_field() -> None:
    campaign = _text("{{ notes }}")
    error = _render_error(campaign, {"notes": "ü" * 70_000})  # 70,000 characters, 140,000 bytes
    assert (error.field, error.reason) == (
        "steps.0.text",
        "140,000 bytes, over the 131,072 bytes it may have",
    )


def test_a_message_over_320_kib_in_all_is_refused_and_one_at_every_cap_fits_in_a_task_row() -> None:
    html = "<p>{{ notes }}{{ notes }}</p>"
    campaign = _campaign(steps=[{"subject": "Hi", "text": "{{ notes }}", "html": html}])
    error = _render_error(campaign, {"notes": "n" * 125_000})  # text 125,000 bytes, html 250,007
    assert error.field == "steps.0"
    assert error.reason.startswith("the message would be 375,")
    assert "over the 327,680 bytes a message may have" in error.reason
    # a message at every cap still fits in one task row, with room to spare
    message = EmailMessage(
        sender="Acme Partnerships <partners@mail.acme.example>",
        to=f"{'r' * 64}@{'d' * 63}.{'e' * 63}.{'f' * 53}.example",  # 254 characters, the most there are
        subject="ü" * message_caps.SUBJECT_CHARS,
        text="t"
        * (message_caps.MESSAGE_BYTES - message_caps.HTML_BYTES - 1000 - 2 * message_caps.SUBJECT_CHARS),
        html="h" * message_caps.HTML_BYTES,
        reply_to=f"{'r' * 64}@{'d' * 63}.{'e' * 63}.example",
        unsubscribe="https://acme.example/" + "u" * (message_caps.UNSUBSCRIBE_CHARS - 21),
    )
    fields = {
        "subject": message.subject,
        "text": message.text,
        "html": message.html,
        "unsubscribe": message.unsubscribe,
    }
    assert message_caps.too_large("steps.9", fields) is None
    email = PlannedEmail(
        campaign_id="c" * 100,
        step=10,
        send_at=START,
        timezone="America/Argentina/ComodRivadavia",
        message=message,
        max_per_minute=10_000,
    )
    assert task_store.email_row_size(email) < task_store.MAX_ROW_BYTES - 60_000


@pytest.mark.parametrize(
    "character",
    ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069",
     "\u200b", "\u200c", "\u200d", "\u200e", "\u200f", "\ufeff"],
)  # fmt: skip
def test_bidi_controls_and_zero_width_characters_in_a_subject_are_refused_naming_the_field(
    character: str,
) -> None:
    error = _render_error(_campaign(), {"company": f"Invoice {character}fdp.exe"})
    assert error.field == "steps.0.subject"
    assert error.reason.startswith(f"character U+{ord(character):04X} (")
    assert error.reason.endswith(
        "at position 15 is not allowed in a subject: bidirectional controls and zero-width characters "
        "change how it reads"
    )


@pytest.mark.parametrize(
    "website",
    [
        "javascript:alert(1)",
        "JaVaScRiPt:alert(1)",
        " \x01javascript:alert(1)",
        "java\tscript:alert(1)",
        "java\nscript:alert(1)",
        "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
        "vbscript:msgbox(1)",
        "file:///etc/passwd",
    ],
)
def test_a_link_with_a_scheme_other_than_http_https_or_mailto_is_refused_naming_the_field(
    website: str,
) -> None:
    html = (
        '<p><a href="{{ website }}">{{ company }}</a> <img src="https://acme.example/logo.png">'
        '<a href="{{ unsubscribe }}">u</a><a href="#top">t</a><a href="acme.example">relative</a></p>'
    )
    campaign = _campaign(steps=[{"subject": "Hi", "text": "t", "html": html}])
    error = _render_error(campaign, {"company": "Acme", "website": website})
    assert error.field == "steps.0.html"
    assert error.reason.startswith("the href of <a> on line 1, ")
    # http(s), the (mailto:) unsubscribe target, a fragment and a relative reference all render
    ok = render_step(
        campaign, 1, "to@example.org", {"company": "Acme", "website": "https://a.example/?a=1&b=2"}
    )
    assert '<a href="https://a.example/?a=1&amp;b=2">Acme</a>' in ok.html
    assert '<a href="mailto:unsubscribe@acme.example?subject=to%40example.org">u</a>' in ok.html


@pytest.mark.parametrize(
    "html",
    [
        '<a href="&#106;avascript:alert({{ n }})">x</a>',
        "<a href=javascript:alert({{ n }})>x</a>",
        '<img srcset="https://acme.example/a.png 1x, javascript:alert({{ n }}) 2x">',
        '<form action="javascript:alert({{ n }})"></form>',
    ],
)
def test_a_script_link_written_in_the_template_is_refused_too(html: str) -> None:
    campaign = _campaign(steps=[{"subject": "Hi", "text": "t", "html": html}])
    assert _render_error(campaign, {"n": "1"}).field == "steps.0.html"


# -- the unsubscribe target (unsubscribe_uri) -------------------------------------------------------


def test_a_value_in_the_unsubscribe_uri_is_percent_encoded_so_it_cannot_add_a_second_uri() -> None:
    campaign = _campaign(unsubscribe="https://acme.example/u/{{ token }}")
    message = render_step(
        campaign, 1, "to@example.org", {"company": "Acme", "token": "x>, <https://evil.example/"}
    )
    assert email_worker.unsubscribe_headers(message) == [
        {
            "Name": "List-Unsubscribe",
            "Value": "<https://acme.example/u/x%3E%2C%20%3Chttps%3A%2F%2Fevil.example%2F>",
        },
        {"Name": "List-Unsubscribe-Post", "Value": "List-Unsubscribe=One-Click"},
    ]


def test_urlencode_in_the_unsubscribe_uri_encodes_once() -> None:
    campaign = _campaign(unsubscribe="https://acme.example/u?who={{ email|urlencode }}&c={{ company }}")
    message = render_step(campaign, 1, "to@example.org", {"company": "A/B & C"})
    assert message.unsubscribe == "https://acme.example/u?who=to%40example.org&c=A%2FB%20%26%20C"


@pytest.mark.parametrize(
    ("unsubscribe", "reason"),
    [
        ("https://{{ website }}/unsubscribe", "write the host out"),
        ("https://acme.example{{ path }}", "write the host out"),
        ("https://{{ user }}@acme.example/u", "write the host out"),
        ("https://user@acme.example/u/{{ email }}", "an https:// target may not have a user name"),
        ("mailto:{{ email }}", "write the address out"),
        ("mailto:a@acme.example,b@evil.example?subject={{ email }}", "exactly one ASCII address"),
    ],
)
def test_an_unsubscribe_host_or_address_not_written_out_is_refused_when_the_campaign_is_read(
    unsubscribe: str, reason: str
) -> None:
    with pytest.raises(CampaignFileError) as caught:
        _campaign(unsubscribe=unsubscribe)
    assert "unsubscribe: " in str(caught.value) and reason in str(caught.value), str(caught.value)


@pytest.mark.parametrize(
    ("unsubscribe", "reason"),
    [
        ("mailto:u@acme.example?to=other@evil.example&subject={{ email }}", "may not add recipients (to)"),
        ("https://acme.example/u/{{ email }} x", "character ' ' at position"),
        ("https://acme.example/u/{{ email }}>", "character '>' at position"),
        ("https://acme.example/u/{{ email }}%zz", "a '%' not followed by two hex digits"),
    ],
)
def test_an_unsubscribe_target_that_is_not_one_uri_on_the_campaigns_host_is_refused_per_row(
    unsubscribe: str, reason: str
) -> None:
    error = _render_error(_campaign(unsubscribe=unsubscribe), {"company": "Acme"})
    assert error.field == "unsubscribe"
    assert reason in error.reason, error.reason


# ---- a campaign without an unsubscribe of its own: the one-click link ---------------------------


def _without_unsubscribe() -> Any:
    data = campaign_data()
    del data["unsubscribe"]
    return parse_campaign(data)


def test_a_campaign_without_its_own_unsubscribe_takes_the_one_click_link_as_placeholder_and_header() -> None:
    links = OneClickLinks("https://u.lambda-url.eu-central-1.on.aws/", None, "spring-2027")
    message = render_step(_without_unsubscribe(), 1, "to@example.org", {"company": "Acme"}, links)
    link = f"https://u.lambda-url.eu-central-1.on.aws/?t={DRY_RUN_TOKEN}"
    assert (message.unsubscribe, message.text) == (link, f"Hello Acme\n{link}")
    assert email_worker.unsubscribe_headers(message)[1] == {
        "Name": "List-Unsubscribe-Post",
        "Value": "List-Unsubscribe=One-Click",
    }


def test_a_campaign_without_its_own_unsubscribe_and_no_endpoint_is_refused_naming_unsubscribe() -> None:
    error = _render_error(_without_unsubscribe(), {"company": "Acme"})
    assert error.field == "unsubscribe"
    assert "no unsubscribe of its own and no one-click endpoint" in error.reason
