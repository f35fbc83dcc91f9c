"""The ``receiving`` preflight check: SES receives in the root's receiving Region, and the reply domain's
MX record points at that Region's inbound endpoint, the most preferred host.

The root's settings are given as its plan gives them (variables and the pipeline's lifted root outputs);
DNS is a stand-in lookup, except where ``dns_mx`` itself is under test (dnspython's resolver replaced).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import dns.exception
import dns.resolver
import pytest

from outreach_dev import terraform_cli
from outreach_dev.planned_root import RootPlan
from outreach_operator import preflight
from outreach_operator.preflight import MxAnswer, Preflight, Status
from outreach_operator.preflight.email_receiving import RECEIVING_REGIONS_FILE

DOMAIN = "reply.example.com"
FRANKFURT = "inbound-smtp.eu-central-1.amazonaws.com"


def context(values: Mapping[str, Any], *, env: str = "prod", region: str = "eu-central-1") -> Preflight:
    plan = RootPlan(
        env=env, region=region, allowed_account_ids=(), reservations={}, values=dict(values), resources=()
    )
    return Preflight(env=env, root=terraform_cli.environment_dir(env), plan=plan)


class StandInDns:
    """A DNS stand-in answering ``records`` for any domain, keeping the domains it was asked."""

    def __init__(self, *records: tuple[int, str]) -> None:
        self.records = records
        self.asked: list[str] = []

    def __call__(self, domain: str) -> MxAnswer:
        self.asked.append(domain)
        return MxAnswer(tuple(self.records))


def test_a_root_without_a_reply_domain_is_skipped_without_asking_dns() -> None:
    lookup = StandInDns()

    result = preflight.check_receiving(context({"inbound_reply_domain": None}), lookup)

    assert result.status is Status.SKIP
    assert "receives no replies" in result.detail
    assert lookup.asked == []


def test_a_receiving_region_where_ses_receives_no_email_fails_naming_the_regions_that_do() -> None:
    ctx = context({"inbound_reply_domain": DOMAIN, "receiving_region": "eu-south-1"})

    result = preflight.check_receiving(ctx, StandInDns((10, FRANKFURT)))

    assert result.status is Status.FAIL
    assert result.detail == f"SES does not receive email in eu-south-1 (the receiving Region of {DOMAIN})"
    assert result.fix is not None
    assert "eu-central-1" in result.fix and "regions.html#region-receive-email" in result.fix


def test_without_a_receiving_region_the_roots_own_region_is_checked() -> None:
    result = preflight.check_receiving(
        context({"inbound_reply_domain": DOMAIN}, region="eu-south-1"), StandInDns((10, FRANKFURT))
    )

    assert result.status is Status.FAIL
    assert "eu-south-1" in result.detail


def test_the_pipelines_receiving_region_output_wins_over_the_variable() -> None:
    ctx = context(
        {
            "inbound_reply_domain": DOMAIN,
            "receiving_region": None,
            "inbound_receiving_region": "eu-west-1",
        }
    )

    result = preflight.check_receiving(ctx, StandInDns((10, "inbound-smtp.eu-west-1.amazonaws.com")))

    assert result.status is Status.PASS, result
    assert (
        result.detail
        == f"SES receives in eu-west-1; the MX of {DOMAIN} is inbound-smtp.eu-west-1.amazonaws.com"
    )


@pytest.mark.parametrize(
    ("records", "status", "detail"),
    [
        ([(10, FRANKFURT)], Status.PASS, f"the MX of {DOMAIN} is {FRANKFURT}"),
        ([(10, FRANKFURT), (20, "mx.backup.example")], Status.PASS, f"the MX of {DOMAIN} is {FRANKFURT}"),
        ([], Status.FAIL, f"{DOMAIN} has no MX record: replies to it do not reach SES"),
        (
            [(1, "aspmx.l.google.com"), (5, "alt1.aspmx.l.google.com")],
            Status.FAIL,
            f"the MX of {DOMAIN} (1 aspmx.l.google.com, 5 alt1.aspmx.l.google.com) does not name {FRANKFURT}",
        ),
        (
            [(10, "inbound-smtp.us-east-1.amazonaws.com")],
            Status.FAIL,
            f"the MX of {DOMAIN} (10 inbound-smtp.us-east-1.amazonaws.com) does not name {FRANKFURT}",
        ),
        ([(5, "mx.example.net"), (10, FRANKFURT)], Status.FAIL, f"prefers another host to {FRANKFURT}"),
        ([(10, "mx.example.net"), (10, FRANKFURT)], Status.FAIL, f"prefers another host to {FRANKFURT}"),
    ],
    ids=[
        "ses-alone",
        "ses-with-a-backup",
        "no-mx",
        "another-provider",
        "another-region",
        "another-host-first",
        "another-host-as-preferred",
    ],
)
def test_the_mx_passes_only_when_the_receiving_regions_endpoint_is_the_most_preferred_host(
    records: list[tuple[int, str]], status: Status, detail: str
) -> None:
    lookup = StandInDns(*records)

    result = preflight.check_receiving(context({"inbound_reply_domain": DOMAIN}), lookup)

    assert result.status is status, result
    assert detail in result.detail
    assert lookup.asked == [DOMAIN]
    if status is Status.FAIL:
        assert result.fix is not None


def test_a_missing_mx_record_is_fixed_by_the_record_to_publish() -> None:
    result = preflight.check_receiving(context({"inbound_reply_domain": DOMAIN}), StandInDns())

    assert result.fix is not None
    assert result.fix.startswith(
        f"publish {DOMAIN}. MX 10 {FRANKFURT} (docs/deploying.md, Receiving replies)"
    )


def test_dns_that_does_not_answer_skips_the_mx_and_says_why() -> None:
    def silent(domain: str) -> MxAnswer:
        return MxAnswer(unavailable="LifetimeTimeout: no answer in 5 s")

    result = preflight.check_receiving(context({"inbound_reply_domain": DOMAIN}), silent)

    assert result.status is Status.SKIP
    assert result.detail.endswith("LifetimeTimeout: no answer in 5 s")


def test_on_the_embedded_aws_only_the_region_is_checked() -> None:
    lookup = StandInDns()

    result = preflight.check_receiving(
        context({"inbound_reply_domain": "reply.outreach.test"}, env="local"), lookup
    )

    assert result.status is Status.PASS
    assert (
        result.detail
        == "SES receives in eu-central-1; MX not checked on the embedded AWS (reply.outreach.test)"
    )
    assert lookup.asked == []


class _Record:
    def __init__(self, preference: int, exchange: str) -> None:
        self.preference = preference
        self.exchange = dns.name.from_text(exchange)


def test_dns_mx_reads_each_records_preference_and_host_in_lower_case(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[tuple[str, str]] = []

    def resolve(name: str, kind: str, lifetime: float) -> list[_Record]:
        asked.append((name, kind))
        return [_Record(20, "Backup.Example.NET."), _Record(10, "inbound-smtp.eu-central-1.amazonaws.com.")]

    monkeypatch.setattr(dns.resolver, "resolve", resolve)

    assert preflight.dns_mx(DOMAIN) == MxAnswer(((10, FRANKFURT), (20, "backup.example.net")))
    assert asked == [(DOMAIN, "MX")]


@pytest.mark.parametrize(
    ("raised", "expected"),
    [
        (dns.resolver.NXDOMAIN, MxAnswer()),
        (dns.resolver.NoAnswer, MxAnswer()),
    ],
    ids=["no-such-name", "no-mx"],
)
def test_dns_mx_takes_a_name_without_mx_records_for_none(
    monkeypatch: pytest.MonkeyPatch, raised: type[Exception], expected: MxAnswer
) -> None:
    def resolve(name: str, kind: str, lifetime: float) -> None:
        raise raised

    monkeypatch.setattr(dns.resolver, "resolve", resolve)

    assert preflight.dns_mx(DOMAIN) == expected


@pytest.mark.parametrize(
    "raised",
    [dns.exception.Timeout, dns.resolver.NoNameservers, dns.resolver.NoResolverConfiguration],
    ids=["timeout", "no-nameservers", "no-resolver"],
)
def test_dns_mx_reports_dns_that_gave_no_answer_as_unavailable(
    monkeypatch: pytest.MonkeyPatch, raised: type[Exception]
) -> None:
    def resolve(name: str, kind: str, lifetime: float) -> None:
        raise raised

    monkeypatch.setattr(dns.resolver, "resolve", resolve)

    answer = preflight.dns_mx(DOMAIN)

    assert answer.records == () and answer.unavailable is not None
    assert answer.unavailable.startswith(raised.__name__)


def test_the_checked_regions_are_the_modules_validation_list_from_the_ses_guide() -> None:
    document = json.loads(RECEIVING_REGIONS_FILE.read_text(encoding="utf-8"))
    variables = (terraform_cli.MODULES_DIR / "email-inbound" / "variables.tf").read_text(encoding="utf-8")
    main = (terraform_cli.MODULES_DIR / "email-inbound" / "main.tf").read_text(encoding="utf-8")

    assert preflight.receiving_regions() == tuple(document["regions"])
    assert document["source"] == "https://docs.aws.amazon.com/ses/latest/dg/regions.html#region-receive-email"
    assert 'jsondecode(file("${path.module}/receiving_regions.json")).regions' in main
    assert re.search(r"contains\(local\.receiving_regions, var\.receiving_region\)", variables)
    assert (
        "eu-central-1" in preflight.receiving_regions() and "eu-south-1" not in preflight.receiving_regions()
    )


def test_the_check_is_registered_after_the_email_check() -> None:
    names = [check.__name__ for check in preflight.CHECKS]

    assert names[-2:] == ["check_email", "check_receiving"]
