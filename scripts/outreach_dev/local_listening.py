"""`make local`'s listening section: an unsubscribe, a hard bounce and a link scanner stop what they should.

Around the local campaign (``local_campaign``): SES hard-bounces the first step to one recipient
(``ses_outcomes``), and after the first step one recipient POSTs the one-click unsubscribe of their
email (RFC 8058) to the function URL served on loopback while another only fetches the link, as a
mail system's link scanner does. The report shows what the contact ledger recorded for each, what the
campaign sent them after that, and the campaign's status counts of what SES said.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from embedded_aws.one_click_requests import request_as_a_provider
from embedded_aws.pipeline import LocalPipeline
from embedded_aws.ses_outcomes import ses_outcomes
from embedded_aws.ses_v2 import SentEmail, sent_emails
from outreach import contacts, ses_tags


@dataclass(frozen=True)
class Listeners:
    """Who does what: ``bounces`` hard-bounces, ``unsubscribes`` POSTs one-click, ``looks`` only GETs."""

    bounces: str
    unsubscribes: str
    looks: str

    @classmethod
    def of(cls, recipients: Sequence[str]) -> Listeners | None:
        """The second, third and fourth recipient (the first is on the suppression list); ``None`` if
        the campaign has fewer than four."""
        if len(recipients) < 4:
            return None
        return cls(recipients[1].lower(), recipients[2].lower(), recipients[3].lower())


@contextlib.contextmanager
def bouncing(listeners: Listeners | None) -> Iterator[None]:
    """SES hard-bounces every email to ``listeners.bounces`` while the block runs."""
    if listeners is None:
        yield
        return
    with ses_outcomes(hard_bounce={listeners.bounces}):
        yield


def campaign_emails(stack: LocalPipeline, campaign_id: str) -> list[SentEmail]:
    """The emails SES accepted for the campaign (its ``outreach-campaign`` message tag)."""
    tag = ses_tags.encode_campaign(campaign_id)
    return [e for e in sent_emails(stack.region) if e.tags.get("outreach-campaign") == tag]


def _link(email: SentEmail) -> str:
    """The one-click https URI of List-Unsubscribe (beside it, with a reply domain, a ``mailto:``)."""
    targets = [t.strip().strip("<>") for t in email.headers.get("List-Unsubscribe", "").split(",")]
    return next((t for t in targets if t.startswith("https://")), "")


def click(stack: LocalPipeline, campaign_id: str, listeners: Listeners) -> dict[str, int]:
    """The one-click POST of ``unsubscribes`` and the GET of ``looks``, on their first emails' links."""
    first = {e.to[0].lower(): e for e in campaign_emails(stack, campaign_id) if _step(e) == 1}
    answers: dict[str, int] = {}
    for who, method, body in (
        (listeners.unsubscribes, "POST", b"List-Unsubscribe=One-Click"),
        (listeners.looks, "GET", None),
    ):
        email = first.get(who)
        if email is None or not _link(email).startswith("https://"):
            answers[method] = 0
            continue
        answer = request_as_a_provider(stack.loopback_url(_link(email)), method=method, body=body)
        answers[method] = answer.status
        answers[f"{method} retried"] = answer.retries
    return answers


def _step(email: SentEmail) -> int:
    return int(email.tags.get("outreach-step", "0"))


def wait_bounced(stack: LocalPipeline, listeners: Listeners, *, timeout: float) -> bool:
    """Wait until the ledger holds the hard bounce (SES's event reaches it through the event consumer,
    asynchronously); the unsubscribe needs no wait: the endpoint records it before it answers."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with stack.as_caller():
            if contacts.stop_of(listeners.bounces) is not None:
                return True
        time.sleep(1.0)
    return False


def listening_report(
    stack: LocalPipeline, campaign_id: str, listeners: Listeners, answers: Mapping[str, int], status: Any
) -> dict[str, Any]:
    """What the ledger says of each listener, what they got after their stop, and SES's counts."""
    emails = campaign_emails(stack, campaign_id)
    people: dict[str, Any] = {}
    for role, address in (
        ("hard bounce", listeners.bounces),
        ("one-click unsubscribe", listeners.unsubscribes),
        ("only fetched the link", listeners.looks),
    ):
        with stack.as_caller():
            stop = contacts.stop_of(address)
        later = [e for e in emails if e.to[0].lower() == address and stop is not None and stop.recorded_at]
        after = [e for e in later if stop is not None and e.sent_at > _epoch(stop.recorded_at)]
        people[role] = {
            "state": stop.state.value if stop is not None else "ok",
            "emails": sum(1 for e in emails if e.to[0].lower() == address),
            "sent_after_stop": len(after),
        }
    steps = {str(entry["step"]): entry for entry in status["steps"]}
    return {
        "answers": dict(answers),
        "people": people,
        "ses_said": {
            step: {k: entry.get(k, 0) for k in ("delivered", "bounced_hard", "complained", "unsubscribed")}
            for step, entry in steps.items()
        },
        "ok": answers.get("POST") == 200
        and answers.get("GET") == 200
        and people["hard bounce"]["state"] == "bounced"
        and people["one-click unsubscribe"]["state"] == "unsubscribed"
        and people["only fetched the link"]["state"] == "ok"
        and not any(p["sent_after_stop"] for p in people.values()),
    }


def _epoch(iso: str) -> float:
    from outreach.email_task import parse_utc_iso

    # recorded_at is to the second: a send in the same second may be the claimed one before it.
    return parse_utc_iso(iso).timestamp() + 1


def report_lines(report: Mapping[str, Any]) -> list[str]:
    answers = report["answers"]
    lines = [
        f"listening (POST {answers.get('POST')} after {answers.get('POST retried', 0)} 5xx, "
        f"GET {answers.get('GET')} after {answers.get('GET retried', 0)} 5xx):"
    ]
    for role, person in report["people"].items():
        lines.append(
            f"  {role:<22} ledger {person['state']:<13} emails {person['emails']}, "
            f"sent after the stop {person['sent_after_stop']}"
        )
    for step, said in report["ses_said"].items():
        lines.append(f"  step {step} SES said  {said}")
    lines.append(f"  listening ok   {report['ok']}")
    return lines
