"""Rules of the SES message tags: a campaign id is written in SES's tag alphabet and read back exactly;
every tag value another writer could make is either one this code writes or refused naming its tag."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from outreach import ses_tags
from outreach.errors import MalformedFieldError

# The job id pattern of task_ids.validate_job_id: what a campaign id may be.
CAMPAIGN_IDS = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}", fullmatch=True)
SES_TAG_VALUE = re.compile(r"[A-Za-z0-9_-]{1,256}")
DIGEST = "0123456789abcdef" * 2


@settings(max_examples=300, deadline=None)
@given(CAMPAIGN_IDS)
def test_a_campaign_id_is_written_in_the_tag_alphabet_and_read_back_exactly(campaign_id: str) -> None:
    value = ses_tags.encode_campaign(campaign_id)
    assert re.fullmatch(r"[A-Za-z0-9_-]+", value)
    assert ses_tags.decode_campaign(value) == campaign_id
    if len(value) <= ses_tags.TAG_VALUE_CHARS:
        assert SES_TAG_VALUE.fullmatch(ses_tags.check_taggable(campaign_id))
    else:
        with pytest.raises(MalformedFieldError) as refused:
            ses_tags.check_taggable(campaign_id)
        assert refused.value.field == "outreach-campaign"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="AZaz09-_5F2E3A", min_size=1, max_size=40))
def test_any_tag_value_is_the_one_encoding_of_a_campaign_or_refused(value: str) -> None:
    try:
        campaign_id = ses_tags.decode_campaign(value)
    except MalformedFieldError as exc:  # outcome: the property allows a refusal naming the tag
        assert exc.field == "outreach-campaign"
        return
    assert ses_tags.encode_campaign(campaign_id) == value


def test_the_documented_escapes() -> None:
    assert ses_tags.encode_campaign("a_b.c:d-e") == "a_5Fb_2Ec_3Ad-e"


def _tags(**values: Any) -> dict[str, Any]:
    tags: dict[str, Any] = {
        "outreach-campaign": ["spring_5F2027"],
        "outreach-step": ["2"],
        "outreach-task": [DIGEST],
        "ses:configuration-set": ["outreach-prod-email"],
    }
    for name, value in values.items():
        key = name.replace("_", "-")
        if value is None:
            tags.pop(key)
        else:
            tags[key] = value
    return tags


def test_tags_name_their_task() -> None:
    assert ses_tags.task_ref(_tags()) == ses_tags.TaskRef("spring_2027", 2, f"email#spring_2027#{DIGEST}")


def test_mail_without_the_outreach_tags_names_no_task() -> None:
    assert ses_tags.task_ref({"ses:configuration-set": ["x"], "other": ["y"]}) is None
    assert ses_tags.task_ref({}) is None


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"outreach_step": None}, "outreach-step"),
        ({"outreach_task": None, "outreach_step": None}, "outreach-step"),
        ({"outreach_step": ["0"]}, "outreach-step"),
        ({"outreach_step": ["02"]}, "outreach-step"),
        ({"outreach_step": ["1", "2"]}, "outreach-step"),
        ({"outreach_step": "2"}, "outreach-step"),
        ({"outreach_task": [DIGEST.upper()]}, "outreach-task"),
        ({"outreach_task": [DIGEST[:-1]]}, "outreach-task"),
        ({"outreach_task": [1234]}, "outreach-task"),
        ({"outreach_campaign": ["spring.2027"]}, "outreach-campaign"),
        ({"outreach_campaign": ["_41spring"]}, "outreach-campaign"),
        ({"outreach_campaign": ["_FF"]}, "outreach-campaign"),
        ({"outreach_campaign": ["_5F"]}, "outreach-campaign"),
        ({"outreach_campaign": ["x" * 257]}, "outreach-campaign"),
    ],
)
def test_malformed_tags_are_refused_naming_the_tag(changes: dict[str, Any], field: str) -> None:
    with pytest.raises(MalformedFieldError) as refused:
        ses_tags.task_ref(_tags(**changes))
    assert refused.value.field == field


def test_tags_that_are_not_a_map_are_refused() -> None:
    with pytest.raises(MalformedFieldError) as refused:
        ses_tags.task_ref(["outreach-step"])  # type: ignore[arg-type]
    assert refused.value.field == "tags"
