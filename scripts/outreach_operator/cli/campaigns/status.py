"""``campaign status``: per step what was planned, sent, what SES said of it and what came back by mail;
why emails were not sent.

Read from the campaign's counter shards and the ``campaign-open`` index, never from a Scan of the table
(BatchGetItem of the shards, for the statuses, the events and the steps, and one Query per shard of
the campaign's own key). The shards give, each exact (moved in the transaction of the change they
count): the campaign's emails per status, per step and status (``sent`` is Finished) and per step,
status and reason group (``task_store.step_counts``; the reason group is the failure reason's text
before its ``:`` when that is a name such as ``contact_stopped``, else ``other``), and the events per
step (``task_store.email_event_counts``): SES's (delivered, bounced hard and soft, complained,
unsubscribed, rejected, delayed, rendering failed) and the inbound processor's (replied, auto replied,
forwarded), each counted once per email however often it came. The next send time is the earliest
``send_at`` of the campaign's Pending emails in the index, one entry read a shard: what status reads
does not grow with the campaign's size or with other campaigns' open emails. A campaign scheduled
before the step counters existed has emails no step counts (``uncounted``, said beside the table).
``--json`` keeps every key it had and adds, per step, ``planned``, ``sent``, each event kind and
``cancelled_by_reason``, and ``events``. While emails are pending it also reads whether they can go
out (``sending``: the configuration set's and the account's sending switches, and why nothing is sent
when one is off).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from botocore.exceptions import ClientError
from rich.console import Console

from outreach import task_store
from outreach.ses_send_errors import error_code
from outreach.task_model import Status
from outreach_operator.cli.output import BadInput, Session, table
from outreach_operator.cli.sending import sending_state, stop_alarm_names, why_nothing_is_sent

EVENT_KINDS = tuple(event.value for event in task_store.EmailEvent)
# The event columns the tables show (every kind is in --json): SES's, then the replies'.
SHOWN_EVENTS = ("delivered", "bounced_hard", "bounced_soft", "complained", "unsubscribed")
REPLY_EVENTS = ("replied", "auto_replied", "forwarded")


def campaign_status(s: Session, campaign_id: str) -> None:
    """The campaign's counters and events (from its counter shards) and its next send time, emitted."""
    s.targets.require("tasks_table", "--table")
    row = task_store.get_job(campaign_id)
    counts = task_store.job_counts(campaign_id)
    if row is None and not any(counts.values()):
        raise BadInput(f"no campaign {campaign_id!r} in {s.targets.tasks_table}")
    events = task_store.email_event_counts(campaign_id)
    counted = task_store.step_counts(campaign_id)
    per_step = {step: Counter(statuses) for step, statuses in counted.statuses.items()}
    cancelled: dict[int, Counter[str]] = {}
    reasons: Counter[tuple[str, str]] = Counter()
    for step, groups in counted.reasons.items():
        for (status, reason), emails in groups.items():
            if emails <= 0:
                continue
            reasons[(status, reason)] += emails
            if status == Status.CANCELLED.value:
                cancelled.setdefault(step, Counter())[reason] += emails
    next_send_at = _next_send_at(campaign_id) if counts[Status.PENDING.value] else None
    steps = sorted(set(per_step) | set(events))
    data: dict[str, Any] = {
        "campaign_id": campaign_id,
        "created_at": None if row is None else row.get("created_at"),
        "created_by": None if row is None else row.get("created_by"),
        "source": None if row is None else row.get("source"),
        "counts": counts,
        "steps": [_step(step, per_step.get(step, Counter()), events, cancelled) for step in steps],
        "reasons": [{"status": st, "reason": r, "emails": n} for (st, r), n in reasons.most_common()],
        "events": {str(step): kinds for step, kinds in events.items()},
        "next_send_at": next_send_at,
        "sending": _sending(s) if next_send_at else None,
        "uncounted": counted.uncounted,
    }

    def render(console: Console) -> None:
        statuses = [st.value for st in Status]
        columns = ["step", "planned", *statuses]
        rows = [[entry[c] for c in columns] for entry in data["steps"]]
        rows.append(["all (counters)", sum(counts.values()), *(counts[st] for st in statuses)])
        console.print(table(f"campaign {campaign_id}", columns, rows))
        if data["uncounted"]:
            console.print(
                f"{data['uncounted']} emails are in no step: scheduled before the step counters, they "
                "count only in the totals"
            )
        for title, kinds in (
            ("what SES said, per step (each event counted once)", SHOWN_EVENTS),
            ("what came back by mail, per step (each email counted once)", REPLY_EVENTS),
        ):
            seen = ["step", "sent", *kinds]
            console.print(
                table(
                    title,
                    [c.replace("_", " ") for c in seen],
                    [[entry[c] for c in seen] for entry in data["steps"]],
                )
            )
        by_reason = [
            [entry["step"], reason, n]
            for entry in data["steps"]
            for reason, n in entry["cancelled_by_reason"].items()
        ]
        if by_reason:
            console.print(table("cancelled, per step and reason", ["step", "reason", "emails"], by_reason))
        if data["reasons"]:
            console.print(
                table(
                    "why not sent",
                    ["status", "reason", "emails"],
                    [[r["status"], r["reason"], r["emails"]] for r in data["reasons"]],
                )
            )
        if data["next_send_at"]:
            console.print(f"next send: {data['next_send_at']}")
        if data["sending"] and data["sending"].get("why_nothing_is_sent"):
            console.print(f"nothing is sent: {data['sending']['why_nothing_is_sent']}")

    s.emit(data, render)


def _next_send_at(campaign_id: str) -> str | None:
    """The earliest send time of the campaign's Pending emails: a Query of each shard of the campaign's
    key in the sparse ``campaign-open`` index, one entry each (``Limit`` 1, ascending ``send_at``), so
    no other campaign's emails are read
    (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-indexes-general-sparse-indexes.html)."""
    return task_store.next_send_at(campaign_id)


def _sending(s: Session) -> dict[str, Any]:
    """Whether the pending emails can go out: the configuration set's and the account's sending
    switches (``outreach sending status``), or why they were not read."""
    name = s.targets.email_configuration_set
    if not name:
        return {"checked": False, "reason": "no configuration set known (--email-configuration-set)"}
    try:
        state = sending_state(name, stop_alarm_names(s))
    except ClientError as exc:
        return {"checked": False, "reason": f"GetConfigurationSet/GetAccount refused: {error_code(exc)}"}
    return {"checked": True, **state, "why_nothing_is_sent": why_nothing_is_sent(state)}


def _step(
    step: int, statuses: Counter[str], events: dict[int, dict[str, int]], cancelled: dict[int, Counter[str]]
) -> dict[str, Any]:
    """One step's row: its statuses (the keys ``--json`` always had), planned, sent, events, cancels."""
    seen = events.get(step, {})
    return {
        "step": step,
        **{st.value: statuses[st.value] for st in Status},
        "planned": sum(statuses.values()),
        "sent": statuses[Status.FINISHED.value],
        **{kind: int(seen.get(kind, 0)) for kind in EVENT_KINDS},
        "cancelled_by_reason": dict(cancelled.get(step, Counter()).most_common()),
    }
