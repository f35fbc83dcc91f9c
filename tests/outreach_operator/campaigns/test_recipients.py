"""Recipients from a CSV file or a scrape job's results: addresses checked, bad rows reported by row."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from outreach_operator.campaigns.recipients import (
    RecipientsFileError,
    placeholder_name,
    read_recipients_csv,
    recipients_from_results,
)

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "recipients.csv"


def _csv(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "r.csv"
    path.write_text(text, encoding="utf-8")
    return path


def test_example_recipients_are_all_valid() -> None:
    recipients = read_recipients_csv(EXAMPLE)
    assert [r.email for r in recipients.valid] == [
        "info@northwind.example",
        "hello@contoso.example",
        "sales@fabrikam.example",
    ]
    assert recipients.valid[0].values == {
        "company": "Northwind Traders",
        "website": "https://northwind.example/",
        "contact_name": "Anna",
    }
    assert recipients.rejected == []


def test_invalid_addresses_are_reported_with_line_and_reason_and_not_kept(tmp_path: Path) -> None:
    path = _csv(
        tmp_path,
        'email,company\nok@acme.example,Acme\nno-at-sign,Bad\n,Empty\n"two@a.example b",Space\n',
    )
    recipients = read_recipients_csv(path)
    assert [r.email for r in recipients.valid] == ["ok@acme.example"]
    rejected = {row.row: row.reason for row in recipients.rejected}
    assert set(rejected) == {3, 4, 5}
    assert rejected[3].startswith("invalid e-mail address: ")
    assert rejected[4] == "no e-mail address"
    assert rejected[5].startswith("invalid e-mail address: ")


def test_same_address_twice_is_kept_once_and_reported(tmp_path: Path) -> None:
    recipients = read_recipients_csv(_csv(tmp_path, "Email\na@acme.example\nA@ACME.example\n"))
    assert [r.email for r in recipients.valid] == ["a@acme.example"]
    assert [(r.row, r.reason) for r in recipients.rejected] == [(3, "same address as row 2")]


def test_a_unicode_domain_is_planned_as_its_punycode_form(tmp_path: Path) -> None:
    recipients = read_recipients_csv(_csv(tmp_path, "email,company\ninfo@Bücher.example,Bücher\n"))
    assert [r.email for r in recipients.valid] == ["info@xn--bcher-kva.example"]
    assert recipients.valid[0].values == {"company": "Bücher"}
    assert recipients.rejected == []


def test_a_scraped_address_with_a_unicode_domain_is_planned_as_its_punycode_form() -> None:
    results = [("scrape#j#1", {"title": "Straße", "emails": [{"address": "kontakt@straße.example"}]})]
    assert [r.email for r in recipients_from_results(results).valid] == ["kontakt@xn--strae-oqa.example"]


def test_a_non_ascii_local_part_is_refused_naming_the_row(tmp_path: Path) -> None:
    path = _csv(tmp_path, "email,company\nok@acme.example,Acme\njörg@acme.example,Jörg\n")
    recipients = read_recipients_csv(path)
    assert [r.email for r in recipients.valid] == ["ok@acme.example"]
    [rejected] = recipients.rejected
    assert (rejected.row, rejected.source, rejected.value) == (3, "r.csv:3", "jörg@acme.example")
    assert rejected.reason == (
        "the part before the @ ('jörg') has non-ASCII characters ('ö'): SES sends only to 7-bit ASCII "
        "local parts (it does not support SMTPUTF8)"
    )


def test_an_address_in_unicode_and_in_punycode_is_the_same_address(tmp_path: Path) -> None:
    path = _csv(tmp_path, "email\ninfo@bücher.example\nINFO@xn--bcher-kva.example\n")
    recipients = read_recipients_csv(path)
    assert [r.email for r in recipients.valid] == ["info@xn--bcher-kva.example"]
    assert [(r.row, r.reason) for r in recipients.rejected] == [(3, "same address as row 2")]


def test_csv_without_email_column_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RecipientsFileError, match="no 'email' column"):
        read_recipients_csv(_csv(tmp_path, "mail,company\na@acme.example,Acme\n"))


def test_column_names_become_placeholder_names() -> None:
    assert placeholder_name(" First Name ") == "first_name"
    assert placeholder_name("Company (legal)") == "company_legal"


def test_scraped_sites_give_company_website_and_their_first_address() -> None:
    results: list[tuple[str, dict[str, Any]]] = [
        (
            "scrape#j#1",
            {
                "title": " Acme GmbH ",
                "final_url": "https://acme.example/",
                "description": "Tools",
                "language": "de",
                "emails": [{"address": "info@acme.example"}, {"address": "jobs@acme.example"}],
            },
        ),
        ("scrape#j#2", {"title": "Quiet Ltd", "final_url": "https://quiet.example/", "emails": []}),
    ]
    recipients = recipients_from_results(results)
    assert [(r.email, r.source) for r in recipients.valid] == [("info@acme.example", "scrape#j#1")]
    assert recipients.valid[0].values == {
        "company": "Acme GmbH",
        "website": "https://acme.example/",
        "description": "Tools",
        "language": "de",
        "phone": "",
    }
    assert [(r.row, r.source, r.reason) for r in recipients.rejected] == [
        (2, "scrape#j#2", "no e-mail address")
    ]


def test_scraped_sites_give_their_valid_numbers_and_language_tag_for_the_recipients_zone() -> None:
    numbers = [f"+49 30 2093 45{n:02}" for n in range(12)]
    phones: list[Any] = [
        {"e164": "+493020934567", "kind": "phone"},
        {"e164": "+442079460958", "kind": "fax"},
        {"e164": "not a number"},
        {"e164": 4930},
        "+4930",
        *({"e164": n.replace(" ", "")} for n in numbers),
    ]
    results: list[tuple[str, dict[str, Any]]] = [
        ("scrape#j#1", {"emails": ["a@acme.example"], "phones": phones, "language": "de-at"}),
        ("scrape#j#2", {"emails": ["b@acme.example"], "language": "de-" + "-".join(["abcdefgh"] * 4)}),
        ("scrape#j#3", {"emails": ["c@acme.example"], "phones": None, "language": None}),
    ]
    first, long_tag, none = (r.values for r in recipients_from_results(results).valid)
    assert first["phone"].split(";") == [
        "+493020934567",
        "+442079460958",
        *(n.replace(" ", "") for n in numbers[:8]),
    ]
    assert first["language"] == "de-at"
    assert (long_tag["language"], long_tag["phone"], none["language"], none["phone"]) == ("", "", "", "")


@pytest.mark.parametrize(
    ("header", "named"),
    [
        ("email,company,EMAIL", "columns 1 ('email') and 3 ('EMAIL') are both the placeholder 'email'"),
        (
            "email,Company,company ",
            "columns 2 ('Company') and 3 ('company ') are both the placeholder 'company'",
        ),
        (
            "email,First Name,first_name",
            "columns 2 ('First Name') and 3 ('first_name') are both the placeholder",
        ),
    ],
)
def test_two_columns_that_become_one_placeholder_refuse_the_header_naming_both(
    tmp_path: Path, header: str, named: str
) -> None:
    path = _csv(tmp_path, f"{header}\nfirst@acme.example,Acme,second@evil.example\n")
    with pytest.raises(RecipientsFileError, match="rename or remove one") as caught:
        read_recipients_csv(path)
    assert named in str(caught.value)


def test_a_line_over_256_ki_characters_refuses_the_file_naming_the_line(tmp_path: Path) -> None:
    path = _csv(tmp_path, "email,notes\na@acme.example,short\nb@acme.example," + "n" * 2_000_000 + "\n")
    with pytest.raises(RecipientsFileError) as caught:
        read_recipients_csv(path)
    assert str(caught.value) == f"{path}: line 3 is longer than 262,144 characters, the most a line may have"


def test_a_rejected_address_is_echoed_cut_to_200_characters_with_its_length(tmp_path: Path) -> None:
    path = _csv(tmp_path, "email\n" + "x" * 100_000 + "@acme.example\n")
    [rejected] = read_recipients_csv(path).rejected
    assert rejected.value == "x" * 200 + "… (100,013 characters)"
