"""The campaign file: what a valid one holds, and that every error names its field."""

from __future__ import annotations

import json
from datetime import time
from pathlib import Path

import pytest

from outreach_operator.campaigns.campaign_file import CampaignFileError, load_campaign, parse_campaign
from tests.outreach_operator.campaigns.conftest import campaign_data

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "campaign.yaml"


def _error(data: object) -> str:
    with pytest.raises(CampaignFileError) as caught:
        parse_campaign(data)
    return str(caught.value)


def test_example_campaign_file_is_valid() -> None:
    campaign = load_campaign(EXAMPLE)
    assert campaign.campaign_id == "spring-outreach-2027"
    assert [step.after_days for step in campaign.steps] == [0, 4]
    assert campaign.window.weekday_numbers == frozenset(range(5))
    assert (campaign.window.start, campaign.window.end) == (time(9), time(17))


def test_json_campaign_file_reads_like_yaml(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps(campaign_data()))
    assert load_campaign(path).steps[1].after_days == 3


def test_every_invalid_field_is_named_in_the_error() -> None:
    data = campaign_data(
        campaign_id="has space",
        reply_to="not-an-address",
        unsubscribe="http://plain.example/",
        max_per_minute=0,
    )
    data["window"] = {**data["window"], "weekdays": ["mon", "someday"], "timezone": "Mars/Olympus"}
    message = _error(data)
    for field in (
        "campaign_id:",
        "reply_to:",
        "unsubscribe:",
        "max_per_minute:",
        "window.weekdays:",
        "window.timezone:",
    ):
        assert field in message, (field, message)


def test_unknown_field_is_refused_by_name() -> None:
    assert "steps.0.subjet: Extra inputs are not permitted" in _error(
        campaign_data(steps=[{"subjet": "x", "subject": "x", "text": "y"}])
    )


def test_unquoted_yaml_time_is_refused_not_misread(tmp_path: Path) -> None:
    text = EXAMPLE.read_text().replace('end: "17:00"', "end: 17:00")
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(CampaignFileError, match=r'window\.end: write the time as a quoted "HH:MM"'):
        load_campaign(path)


def test_window_must_open_before_it_closes() -> None:
    data = campaign_data()
    data["window"] = {**data["window"], "start": "17:00", "end": "09:00"}
    assert "window: window start 17:00 must be before its end 09:00" in _error(data)


def test_line_break_in_sender_display_name_is_refused() -> None:
    message = _error(campaign_data(sender="Acme\r\nBcc: victim@example.org <sales@acme.example>"))
    assert "sender: control character '\\r' not allowed in a header" in message


def test_sender_with_two_addresses_is_refused() -> None:
    assert "sender: not an e-mail address" in _error(campaign_data(sender="a@acme.example, b@acme.example"))


def test_template_syntax_error_names_the_step_field() -> None:
    data = campaign_data(steps=[{"subject": "Hi {{ company", "text": "x"}])
    assert "steps.0.subject: template error on line 1" in _error(data)


def test_first_step_goes_at_the_start_and_follow_ups_wait_at_least_a_day() -> None:
    assert "after_days must be 0" in _error(
        campaign_data(steps=[{"after_days": 2, "subject": "s", "text": "t"}])
    )
    message = _error(
        campaign_data(steps=[{"subject": "s", "text": "t"}, {"after_days": 0, "subject": "s", "text": "t"}])
    )
    assert "follow-up steps [2] need after_days >= 1" in message


def test_unreadable_yaml_is_a_campaign_file_error(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("steps: [unclosed\n")
    with pytest.raises(CampaignFileError, match="not valid yaml"):
        load_campaign(path)


@pytest.mark.parametrize(
    ("suffix", "nested"),
    [(".json", "[" * 100_000 + "]" * 100_000), (".yaml", "a: " + "[" * 100_000 + "]" * 100_000)],
)
def test_a_campaign_file_nested_100000_levels_deep_is_a_clear_error(
    tmp_path: Path, suffix: str, nested: str
) -> None:
    path = tmp_path / f"deep{suffix}"
    path.write_text(nested)
    with pytest.raises(CampaignFileError) as caught:
        load_campaign(path)
    assert f"{path}: not a campaign: its {suffix[1:]} is nested too deeply to read" in str(caught.value)


def test_a_campaign_file_over_4_mib_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_text(EXAMPLE.read_text() + "# " + "x" * (4 * 1024 * 1024) + "\n")
    with pytest.raises(CampaignFileError) as caught:
        load_campaign(path)
    assert str(caught.value) == f"{path}: larger than 4 MiB, the most a campaign file may have"


def test_a_campaign_id_ses_cannot_carry_as_a_message_tag_is_refused() -> None:
    # 128 characters, a valid job id; as a tag every "_" is "_5F": 382 characters, SES allows 256.
    long_id = "c" + "_" * 127
    message = _error(campaign_data(campaign_id=long_id))
    assert "campaign_id:" in message and "outreach-campaign" in message and "256" in message, message
    assert parse_campaign(campaign_data(campaign_id="c" + "-" * 127)).campaign_id == "c" + "-" * 127
