"""``outreach sending status|pause|resume``: whether the environment's SES configuration set sends.

Every campaign email is sent with the environment's configuration set; its ``SendingEnabled``
(PutConfigurationSetSendingOptions,
https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_PutConfigurationSetSendingOptions.html)
stops and restarts them all at once, before SES's own review would stop the whole account (the
reputation alarms of modules/email page first). The reputation guard pauses it by itself when a
reputation stop alarm goes to ALARM (``outreach.sending_guard``); only ``resume`` turns it back on.
While it is paused SES refuses each send: the worker sees SES's answer, so the email was not sent; it
is moved later by the recheck interval inside its window and tried again (``outreach.sending_pause``).
An email whose grace period passes meanwhile ends ``too_late``. ``status`` also shows the account's
own sending switch and enforcement status (GetAccount), and the stop alarms in ALARM (DescribeAlarms:
which one paused it, since when and why) when the environment names them (``--reputation-stop-alarms``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import boto3
import click
from botocore.exceptions import ClientError
from rich.console import Console

from outreach.ses_send_errors import error_code
from outreach_operator.cli.confirm import confirm_change
from outreach_operator.cli.output import BadInput, Session


def configuration_set(s: Session, override: str | None) -> str:
    """The configuration set the commands act on: ``--configuration-set``, else the environment's."""
    return override or s.targets.require("email_configuration_set", "--email-configuration-set")


def stop_alarm_names(s: Session) -> tuple[str, ...]:
    """The reputation stop alarms the environment names (``--reputation-stop-alarms``), if any."""
    named = s.targets.reputation_stop_alarms or ""
    return tuple(name.strip() for name in named.split(",") if name.strip())


def stop_alarms_in_alarm(names: Sequence[str]) -> list[dict[str, str]] | str:
    """The stop alarms now in ALARM (name, since, reason), the earliest first; or, when CloudWatch
    refused DescribeAlarms, why they could not be read.
    https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_DescribeAlarms.html"""
    if not names:
        return []
    try:
        found = boto3.client("cloudwatch").describe_alarms(AlarmNames=list(names), StateValue="ALARM")
    except ClientError as exc:
        return f"DescribeAlarms refused: {error_code(exc)}"
    alarms = sorted(found.get("MetricAlarms", []), key=lambda alarm: alarm["StateUpdatedTimestamp"])
    return [
        {
            "alarm": str(alarm["AlarmName"]),
            "since": alarm["StateUpdatedTimestamp"].isoformat(),
            "reason": str(alarm.get("StateReason", ""))[:300],
        }
        for alarm in alarms
    ]


def sending_state(name: str, stop_alarms: Sequence[str] = ()) -> dict[str, Any]:
    """Whether ``name`` sends, the account's own switch and SES enforcement status, and which of
    ``stop_alarms`` are in ALARM (``stop_alarms_in_alarm``)."""
    ses = boto3.client("sesv2")
    options = ses.get_configuration_set(ConfigurationSetName=name).get("SendingOptions", {})
    account = ses.get_account()
    return {
        "configuration_set": name,
        "sending_enabled": options.get("SendingEnabled", True) is not False,
        "account_sending_enabled": account.get("SendingEnabled", True) is not False,
        "enforcement_status": account.get("EnforcementStatus"),
        "stop_alarms": stop_alarms_in_alarm(stop_alarms),
    }


def why_nothing_is_sent(state: dict[str, Any]) -> str | None:
    """What keeps every email from going out, in the words an operator acts on; ``None`` if nothing."""
    if not state["account_sending_enabled"]:
        return f"the account's SES sending is paused (enforcement status {state['enforcement_status']})"
    if not state["sending_enabled"]:
        alarms = state.get("stop_alarms")
        if isinstance(alarms, list) and alarms:
            first = alarms[0]
            return (
                f"the reputation guard paused configuration set {state['configuration_set']}: alarm "
                f"{first['alarm']} in ALARM since {first['since']} ({first['reason']}); find the campaign "
                "that bounces or is complained about, then outreach sending resume"
            )
        return (
            f"sending is paused for configuration set {state['configuration_set']}: outreach sending resume"
        )
    return None


def _shown(state: dict[str, Any]) -> str:
    return "paused" if not state["sending_enabled"] else "sending"


def _switch(s: Session, name: str | None, *, enable: bool, dry_run: bool) -> None:
    chosen = configuration_set(s, name)
    before = sending_state(chosen)
    verb = "resume" if enable else "pause"
    if before["sending_enabled"] == enable:
        raise BadInput(f"{chosen} is already {_shown(before)}: nothing to {verb}")
    report: dict[str, Any] = {
        "configuration_set": chosen,
        "before": _shown(before),
        "after": "sending" if enable else "paused",
        "dry_run": dry_run,
    }
    if not dry_run:
        confirm_change(s, f"{verb} sending for configuration set {chosen}")
        boto3.client("sesv2").put_configuration_set_sending_options(
            ConfigurationSetName=chosen, SendingEnabled=enable
        )
    prefix = "dry run: would " if dry_run else ""
    s.emit(report, lambda c: c.print(f"{prefix}{verb} {chosen}: {report['before']} -> {report['after']}"))


@click.group()
def sending() -> None:
    """Pause and resume every campaign email at once (the environment's SES configuration set)."""


@sending.command()
@click.option("--configuration-set", "name", help="SES configuration set (default: the environment's).")
@click.pass_context
def status(ctx: click.Context, name: str | None) -> None:
    """Show whether the configuration set and the account send."""
    s: Session = ctx.obj
    state = sending_state(configuration_set(s, name), stop_alarm_names(s))
    report = {**state, "why_nothing_is_sent": why_nothing_is_sent(state)}

    def render(console: Console) -> None:
        console.print(f"{state['configuration_set']}: {_shown(state)}")
        if report["why_nothing_is_sent"]:
            console.print(f"nothing is sent: {report['why_nothing_is_sent']}")

    s.emit(report, render)


@sending.command()
@click.option("--configuration-set", "name", help="SES configuration set (default: the environment's).")
@click.option("--dry-run", is_flag=True, help="Show what would change; change nothing.")
@click.pass_context
def pause(ctx: click.Context, name: str | None, dry_run: bool) -> None:
    """Stop every send through the configuration set; due emails wait, moved later, until the resume."""
    _switch(ctx.obj, name, enable=False, dry_run=dry_run)


@sending.command()
@click.option("--configuration-set", "name", help="SES configuration set (default: the environment's).")
@click.option("--dry-run", is_flag=True, help="Show what would change; change nothing.")
@click.pass_context
def resume(ctx: click.Context, name: str | None, dry_run: bool) -> None:
    """Send through the configuration set again."""
    _switch(ctx.obj, name, enable=True, dry_run=dry_run)
