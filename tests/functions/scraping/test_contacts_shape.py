"""The one documented shape of e-mails and phones, and the README's example of it."""

from __future__ import annotations

import json
from pathlib import Path

from outreach.scraping.contacts import Decoded, FoundEmail, FoundPhone, PhoneKind

README = Path(__file__).resolve().parents[3] / "README.md"


def test_the_readme_results_example_has_the_one_documented_shape() -> None:
    results = README.read_text(encoding="utf-8").split("## Results", 1)[1]
    example = json.loads(results.split("```json", 1)[1].split("```", 1)[0])
    email_keys = set(FoundEmail("a@b.de", "https://b.de/", Decoded.MAILTO).to_document())
    phone_keys = set(FoundPhone("+4930583920", PhoneKind.PHONE, "030 583920", "https://b.de/").to_document())
    assert example["emails"] and example["phones"]
    assert all(set(email) == email_keys for email in example["emails"])
    assert all(set(phone) == phone_keys for phone in example["phones"])
    assert {email["decoded"] for email in example["emails"]} <= {how.value for how in Decoded}
    assert {phone["kind"] for phone in example["phones"]} <= {kind.value for kind in PhoneKind}


def test_an_email_and_a_phone_are_stored_as_maps_of_strings() -> None:
    email = FoundEmail("info@b.de", "https://b.de/impressum", Decoded.WRITTEN_OUT)
    phone = FoundPhone("+4930583929", PhoneKind.FAX, "030 / 58 39 29", "https://b.de/impressum")
    assert email.to_document() == {
        "address": "info@b.de",
        "page": "https://b.de/impressum",
        "decoded": "written_out",
    }
    assert phone.to_document() == {
        "e164": "+4930583929",
        "kind": "fax",
        "as_found": "030 / 58 39 29",
        "page": "https://b.de/impressum",
    }
