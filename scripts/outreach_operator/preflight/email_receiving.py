"""The ``receiving`` check: SES receives email in the root's receiving Region, and the reply domain's MX
record sends the replies there.

SES receives email only in some Regions: ``modules/email-inbound/receiving_regions.json`` lists those
the SES Developer Guide names (https://docs.aws.amazon.com/ses/latest/dg/regions.html#region-receive-email),
and the module refuses any other at plan time; this check says so before a plan. A domain's mail
reaches SES when its MX record points at the Region's inbound endpoint,
``10 inbound-smtp.<region>.amazonaws.com``
(https://docs.aws.amazon.com/ses/latest/dg/receiving-email-mx-record.html): the check reads the MX
records (a DNS query, nothing is changed) and passes when that endpoint is the most preferred one
(RFC 5321 section 5.1: a sender tries the lowest preference first). A team whose mail provider routes
the reply addresses to SES instead (docs/deploying.md) has no such MX record; the check then fails
with both ways out, since it cannot see a provider's routing.

On the embedded AWS (``--env local``) only the Region is checked: a ``.test`` reply domain never
resolves, and mail reaches the emulator through ``embedded_aws.ses_receiving`` instead of DNS.

dnspython is the resolver: email-validator, which the tooling depends on, requires it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import dns.exception
import dns.resolver

from outreach_dev import terraform_cli
from outreach_operator.preflight.target import Preflight, Result, Status

RECEIVING_REGIONS_FILE = terraform_cli.MODULES_DIR / "email-inbound" / "receiving_regions.json"
# The root settings the check reads: the pipeline's inbound outputs (root_outputs, lifted), else the
# root's variables; no reply domain means the root receives no replies.
REPLY_DOMAIN_SETTING = "inbound_reply_domain"
RECEIVING_REGION_OUTPUT = "inbound_receiving_region"
RECEIVING_REGION_VARIABLE = "receiving_region"
MX_PREFERENCE = 10
DNS_TIMEOUT_SECONDS = 5.0


def receiving_regions(path: Path = RECEIVING_REGIONS_FILE) -> tuple[str, ...]:
    """The Regions where SES receives email, as the module's list has them."""
    return tuple(str(region) for region in json.loads(path.read_text(encoding="utf-8"))["regions"])


def inbound_endpoint(region: str) -> str:
    """SES's inbound SMTP endpoint of ``region``, the MX target."""
    return f"inbound-smtp.{region}.amazonaws.com"


@dataclass(frozen=True)
class MxAnswer:
    """A domain's MX records (preference, host without the final dot, lower case); ``unavailable`` says
    why DNS gave no answer at all (a timeout, no resolver), when it did not."""

    records: tuple[tuple[int, str], ...] = ()
    unavailable: str | None = None


MxLookup = Callable[[str], MxAnswer]


def dns_mx(domain: str) -> MxAnswer:
    """The MX records of ``domain`` from the system's resolver: none for a name without any (or without
    the name itself), ``unavailable`` when no server answered."""
    try:
        answer = dns.resolver.resolve(domain, "MX", lifetime=DNS_TIMEOUT_SECONDS)
    except (dns.resolver.NXDOMAIN, dns.resolver.NoAnswer):  # outcome: the domain has no MX record
        return MxAnswer()
    except (dns.exception.Timeout, dns.resolver.NoNameservers, dns.resolver.NoResolverConfiguration) as exc:
        # outcome: no DNS answer at all; the check is skipped, saying why
        return MxAnswer(unavailable=f"{type(exc).__name__}: {exc}")
    records = [
        (int(record.preference), record.exchange.to_text(omit_final_dot=True).lower()) for record in answer
    ]
    return MxAnswer(tuple(sorted(records)))


def _setting(ctx: Preflight, *names: str) -> str | None:
    assert ctx.plan is not None
    for name in names:
        value = ctx.plan.values.get(name)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def _record(domain: str, region: str) -> str:
    return f"{domain}. MX {MX_PREFERENCE} {inbound_endpoint(region)}"


def _shown(records: Sequence[tuple[int, str]]) -> str:
    return ", ".join(f"{preference} {host}" for preference, host in records)


def check_receiving(ctx: Preflight, lookup: MxLookup = dns_mx) -> Result:
    name = "receiving"
    if ctx.plan is None:
        return Result(name, Status.SKIP, "needs the root's settings (see root)")
    domain = _setting(ctx, REPLY_DOMAIN_SETTING)
    if domain is None:
        return Result(name, Status.SKIP, f"the root has no {REPLY_DOMAIN_SETTING}: it receives no replies")
    domain = domain.lower().rstrip(".")
    region = _setting(ctx, RECEIVING_REGION_OUTPUT, RECEIVING_REGION_VARIABLE) or ctx.plan.region
    supported = receiving_regions()
    if region not in supported:
        return Result(
            name,
            Status.FAIL,
            f"SES does not receive email in {region} (the receiving Region of {domain})",
            f"set {RECEIVING_REGION_VARIABLE} to one of {', '.join(supported)} "
            "(https://docs.aws.amazon.com/ses/latest/dg/regions.html#region-receive-email)",
        )
    if ctx.local:
        return Result(
            name, Status.PASS, f"SES receives in {region}; MX not checked on the embedded AWS ({domain})"
        )
    endpoint = inbound_endpoint(region)
    answer = lookup(domain)
    if answer.unavailable is not None:
        return Result(
            name,
            Status.SKIP,
            f"SES receives in {region}; the MX of {domain} was not read: {answer.unavailable}",
        )
    fix = (
        f"publish {_record(domain, region)} (docs/deploying.md, Receiving replies); or, where the mail "
        f"provider routes the reply addresses to {endpoint} instead, send a test reply and find it in "
        "the inbound bucket"
    )
    if not answer.records:
        return Result(name, Status.FAIL, f"{domain} has no MX record: replies to it do not reach SES", fix)
    best = min(preference for preference, _ in answer.records)
    if not any(host == endpoint for _, host in answer.records):
        return Result(
            name, Status.FAIL, f"the MX of {domain} ({_shown(answer.records)}) does not name {endpoint}", fix
        )
    if any(host != endpoint and preference <= best for preference, host in answer.records):
        return Result(
            name,
            Status.FAIL,
            f"the MX of {domain} ({_shown(answer.records)}) prefers another host to {endpoint}: "
            "senders try it first",
            f"make {endpoint} the only (or the most preferred) MX host of {domain}",
        )
    return Result(name, Status.PASS, f"SES receives in {region}; the MX of {domain} is {endpoint}")
