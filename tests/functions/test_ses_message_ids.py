"""SES's Message-ID in the form received mail shows it, and the ids a reply's headers name, bounded."""

from __future__ import annotations

import pytest

from outreach.ses_message_ids import MAX_IDS, message_id_header, ses_ids_in

SES_ID = "0107018f3c1a2b3c-5d6e7f80-1a2b-4c3d-9e8f-0123456789ab-000000"


@pytest.mark.parametrize(
    ("region", "header"),
    [
        ("us-east-1", f"<{SES_ID}@email.amazonses.com>"),
        ("eu-central-1", f"<{SES_ID}@eu-central-1.amazonses.com>"),
        ("ap-southeast-2", f"<{SES_ID}@ap-southeast-2.amazonses.com>"),
        ("us-gov-west-1", f"<{SES_ID}@us-gov-west-1.amazonses.com>"),
    ],
)
def test_the_message_id_names_email_amazonses_com_in_us_east_1_and_the_region_elsewhere(
    region: str, header: str
) -> None:
    assert message_id_header(SES_ID, region) == header


@pytest.mark.parametrize(
    ("ses_id", "region"),
    [
        ("", "eu-central-1"),
        ("a b", "eu-central-1"),
        ("a>b", "eu-central-1"),
        ("a@b", "eu-central-1"),
        ("x" * 201, "eu-central-1"),
        (SES_ID, "EU-CENTRAL-1"),
        (SES_ID, "eu-central-1.evil.example"),
        (SES_ID, ""),
    ],
)
def test_an_id_or_region_no_message_id_can_hold_is_refused(ses_id: str, region: str) -> None:
    with pytest.raises(ValueError):
        message_id_header(ses_id, region)


def test_the_ids_of_references_come_back_in_order_each_once() -> None:
    first = message_id_header("first-000000", "eu-central-1")
    second = message_id_header("second-000000", "eu-central-1")
    value = f"{first}\r\n {second} <other@mail.example.org> {first}"
    assert ses_ids_in(value) == ["first-000000", "second-000000", "other"]


@pytest.mark.parametrize(
    "value",
    ["", "no ids here", "<no-at-sign>", "<@no-left>", "<left@>", "< spaced@example.org>"],
)
def test_a_value_without_a_msg_id_names_none(value: str) -> None:
    assert ses_ids_in(value) == []


def test_the_ids_read_are_bounded_in_number_and_length() -> None:
    many = " ".join(f"<id{n}@example.org>" for n in range(MAX_IDS + 20))
    assert ses_ids_in(many) == [f"id{n}" for n in range(MAX_IDS)]
    long_one = f"<{'x' * 1000}@example.org> <short@example.org>"
    assert ses_ids_in(long_one) == ["short"]


def test_a_huge_header_is_read_only_at_its_start() -> None:
    value = " " * 1_000_000 + "<late@example.org>"
    assert ses_ids_in(value) == []


def test_a_value_that_is_not_text_names_none() -> None:
    assert ses_ids_in(None) == []  # type: ignore[arg-type]
