"""The receive command: SES receives one raw MIME message on a running embedded AWS and runs the active
receipt rule set's actions (``ses_receiving.receive_email``), as a sender's mail system would make it.

    python -m embedded_aws.receive_mail --endpoint URL --region R --to ADDRESS [--to ...]
        [--from ADDRESS] FILE.eml        (or - for standard input)

It prints a JSON summary (SES's message id, the S3 objects written, the rules and actions run, what
stopped the rule set) and exits 0 when SES accepted the message. It exits 2, saying why on standard
error, before SES does anything when the file cannot be read, when the Region has no active receipt
rule set (receiving is off: https://docs.aws.amazon.com/ses/latest/APIReference/API_SetActiveReceiptRuleSet.html),
when an envelope recipient matches no enabled rule of it (SES rejects such mail:
https://docs.aws.amazon.com/ses/latest/dg/receiving-email-concepts.html, "Email-receiving process"), or
when a matched rule has a Lambda action: the command runs outside the process that runs the stack's
functions, so only S3, SNS, Stop, AddHeader and Bounce actions can run here (the stack's own rule set
stores the message and notifies SNS, whose queue the stack's pollers read). The times it reports are
wall-clock times, not the stack's virtual clock. In-process, ``LocalPipeline.receive_mail`` does the
same on the stack's clock and runtime.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, BinaryIO

from embedded_aws.base import client
from embedded_aws.ses_receiving import (
    EmailTooLargeError,
    ReceivedEmail,
    receive_email,
    rule_recipients,
    verified_domains,
)

USAGE_ERROR = 2


class ReceiveRefusedError(Exception):
    """The message cannot be received as asked; the command exits 2 with this message."""


def _read(source: str, stdin: BinaryIO) -> bytes:
    if source == "-":
        return stdin.read()
    path = Path(source)
    if not path.is_file():
        raise ReceiveRefusedError(f"FILE: no such file: {source}")
    return path.read_bytes()


def _check_recipients(endpoint: str, region: str, recipients: Sequence[str]) -> None:
    """Refuse before SES runs anything: no active rule set, an unmatched address, a Lambda action."""
    ses = client("ses", endpoint, region)
    active = ses.describe_active_receipt_rule_set()
    if "Metadata" not in active:
        raise ReceiveRefusedError(f"--region {region}: no active receipt rule set, email receiving is off")
    rules = active.get("Rules", [])
    verified = (
        verified_domains(ses) if any(r.get("Enabled") and not r.get("Recipients") for r in rules) else []
    )
    matching = {rule["Name"]: rule_recipients(rule, recipients, verified) for rule in rules}
    unmatched = [r for r in recipients if not any(r in found for found in matching.values())]
    if unmatched:
        name = str(active["Metadata"]["Name"])
        raise ReceiveRefusedError(f"--to {', '.join(unmatched)}: no enabled rule of rule set {name} matches")
    with_lambda = [
        str(rule["Name"])
        for rule in rules
        if matching[rule["Name"]] and any("LambdaAction" in a for a in rule.get("Actions") or [])
    ]
    if with_lambda:
        raise ReceiveRefusedError(
            f"rule {', '.join(with_lambda)} has a Lambda action, which this command cannot run "
            "(use LocalPipeline.receive_mail in the stack's process)"
        )


def summary(received: ReceivedEmail) -> dict[str, Any]:
    """The JSON the command prints."""
    return {
        "message_id": received.message_id,
        "accepted": received.accepted,
        "reason": received.reason,
        "s3_objects": [{"bucket": bucket, "key": key} for bucket, key in received.s3_objects],
        "rules": list(received.rules),
        "actions": [asdict(action) for action in received.actions],
        "stopped_by": received.stopped_by,
    }


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m embedded_aws.receive_mail",
        description="SES receives a raw MIME message and runs the active receipt rule set's actions.",
    )
    parser.add_argument("--endpoint", required=True, help="the embedded AWS, e.g. http://127.0.0.1:4566")
    parser.add_argument("--region", required=True, help="the Region SES receives in")
    parser.add_argument(
        "--to", action="append", required=True, metavar="ADDRESS", help="an envelope recipient (repeatable)"
    )
    parser.add_argument(
        "--from",
        dest="sender",
        metavar="ADDRESS",
        help="the envelope MAIL FROM (default: Return-Path, else From)",
    )
    parser.add_argument("file", metavar="FILE", help="the message (.eml), or - for standard input")
    return parser


def main(argv: Sequence[str] | None = None, stdin: BinaryIO | None = None) -> int:
    args = _parser().parse_args(argv)
    recipients = [str(r).strip() for r in args.to]
    try:
        raw = _read(args.file, stdin if stdin is not None else sys.stdin.buffer)
        _check_recipients(args.endpoint, args.region, recipients)
        received = receive_email(args.endpoint, args.region, raw, recipients=recipients, sender=args.sender)
    except (ReceiveRefusedError, EmailTooLargeError) as exc:  # outcome: said on stderr, exit 2
        print(f"receive_mail: {exc}", file=sys.stderr)
        return USAGE_ERROR
    print(json.dumps(summary(received), indent=2, sort_keys=True, default=str))
    return 0 if received.accepted else USAGE_ERROR


if __name__ == "__main__":
    sys.exit(main())
