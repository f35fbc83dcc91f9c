"""How ``campaign schedule`` looks to a person: rejected rows, the recipients the contact ledger stops,
the plan per day and step (and per recipient zone), the unsubscribe target, the stop rules, the domain
pacing, the warm-up ramp (planned vs cap per UTC day), the quota."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from outreach_operator.cli.output import table


def render_rejected(console: Console, rejected: list[dict[str, Any]]) -> None:
    console.print(
        table(
            f"{len(rejected)} rows not scheduled",
            ["row", "source", "value", "reason"],
            [[r["row"], r["source"], r["value"], r["reason"]] for r in rejected],
        )
    )


def render_stopped(console: Console, report: dict[str, Any]) -> None:
    if not report["stops"]["checked"]:
        console.print(report["stops"]["reason"])
    stopped = report["stopped"]
    if not stopped:
        return
    console.print(
        table(
            f"{len(stopped)} recipients left out: the contact ledger stops them",
            ["row", "address", "state", "since", "why", "by"],
            [[r["row"], r["address"], r["state"], r["since"], r["why"], r["stopped_by"]] for r in stopped],
        )
    )


def render_scheduled(console: Console, report: dict[str, Any], *, planned: bool = True) -> None:
    if report["rejected"]:
        render_rejected(console, report["rejected"])
    render_stopped(console, report)
    if not planned:
        return
    unsubscribe = report["unsubscribe"]
    if unsubscribe["default"]:
        console.print(f"unsubscribe: one-click links to {unsubscribe['url']}; tokens {unsubscribe['tokens']}")
    render_stop_rules(console, report["stop_rules"])
    console.print(
        table(
            f"campaign {report['campaign_id']}: {report['emails']:,} emails to "
            f"{report['recipients_scheduled']:,} recipients (times in {report['timezone']})",
            ["day", "step", "emails", "first", "last"],
            [[r["day"], r["step"], r["emails"], r["first"], r["last"]] for r in report["plan"]],
        )
    )
    _render_zones(console, report["zones"])
    _render_pacing(console, report["pacing"])
    _render_warmup(console, report["warmup"])
    _render_quota(console, report["ses_quota"])
    if report["dry_run"]:
        known = "" if "existing" not in report else f" ({report['existing']:,} tasks already exist)"
        console.print(f"dry run: nothing written{known}")
        return
    console.print(
        f"tasks: {report['created']:,} created, {report['existing']:,} already there; schedules: "
        f"{report['schedules_created']:,} created, {report['schedules_existing']:,} already there, "
        f"{report['not_pending']:,} tasks no longer pending"
    )


def render_stop_rules(console: Console, rules: dict[str, Any]) -> None:
    """The campaign's stop rules: what a reply and an out-of-office do, where replies go, the thread."""
    others = "in every campaign" if rules["reply_stops_other_campaigns"] else "in this campaign only"
    threaded = ", ".join(str(step) for step in rules["threaded_steps"]) or "none"
    lines = [
        f"stop rules: on reply {rules['on_reply']} ({others}); on out-of-office {rules['on_out_of_office']}; "
        f"auto-replies {'forwarded' if rules['forward_auto_replies'] else 'not forwarded'}",
        f"replies: Reply-To {rules['reply_to']}; received by the pipeline: {rules['received']}; "
        f"owner {rules['owner']}; threaded steps: {threaded}",
    ]
    if "unsubscribe_mailto" in rules:
        lines.append(f"unsubscribe by mail: {rules['unsubscribe_mailto']} (after the one-click link)")
    if "macs" in rules:
        lines.append(f"reply addresses: MACs {rules['macs']}")
    for line in lines:
        console.print(line, markup=False)


def _render_quota(console: Console, quota: dict[str, Any]) -> None:
    if not quota["checked"]:
        console.print(f"SES {quota['reason']}")
        return
    daily = (
        "no 24-hour limit" if quota["max_24_hour_send"] < 0 else f"{quota['max_24_hour_send']:,.0f} per 24 h"
    )
    busiest = quota["busiest_24_hours"]
    console.print(
        f"SES quota in {quota['region']}: {quota['max_send_rate']:.1f}/s, {daily} "
        f"({quota['sent_last_24_hours']:,.0f} sent in the last 24 h); the plan's busiest 24 h: "
        f"{busiest['emails']:,} emails"
    )


def _render_pacing(console: Console, pacing: dict[str, Any]) -> None:
    console.print(
        table(
            f"domain pacing: at most {pacing['domain_daily_cap']} a local day and "
            f"{pacing['domain_min_gap_seconds']} s apart per domain; "
            f"{pacing['emails_moved']:,} emails moved later",
            ["domain", "emails", "days", "most in a day"],
            [[d["domain"], d["emails"], d["days"], d["most_in_a_day"]] for d in pacing["busiest_domains"]],
        )
    )


def _render_warmup(console: Console, warmup: dict[str, Any]) -> None:
    """The sending identity's warm-up ramp: per UTC day of the plan under a cap, planned vs cap."""
    if not warmup["known"]:
        console.print(f"warm-up ramp: not known ({warmup['reason']})")
        return
    if warmup["start_date"] is None:
        console.print("warm-up ramp: none (an established identity)")
        return
    ceiling = warmup.get("max_24_hour_send", warmup.get("quota"))
    console.print(
        table(
            f"warm-up ramp from {warmup['start_date']} to {warmup['last_day']} (UTC days; the account's "
            f"24-hour quota {ceiling} is the ceiling)",
            ["day", "planned", "cap"],
            [[d["day"], d["planned"], d["cap"]] for d in warmup.get("days", [])],
        )
    )


def _render_zones(console: Console, zones: dict[str, Any]) -> None:
    if set(zones["sources"]) <= {"campaign"}:
        return  # every recipient in the campaign's zone: the plan table says it all
    sources = ", ".join(f"{count} by {source}" for source, count in sorted(zones["sources"].items()))
    console.print(
        table(
            f"recipients' local days and hours (zones: {sources})",
            ["zone", "day", "hour", "emails"],
            [[r["zone"], r["day"], r["hour"], r["emails"]] for r in zones["plan"]],
        )
    )
