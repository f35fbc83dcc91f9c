"""The email scheduler role's trust policy: only EventBridge Scheduler, for the email group's schedules
of this account, may assume it.

Scheduler assumes a schedule's execution role with ``aws:SourceAccount`` (the schedule's account)
and ``aws:SourceArn`` (its schedule group's ARN,
``arn:aws:scheduler:<region>:<account>:schedule-group/<group>``, never the schedule's own) in the request
context
(https://docs.aws.amazon.com/scheduler/latest/UserGuide/cross-service-confused-deputy-prevention.html).
``scheduler_trust_findings`` evaluates the planned trust policy for that request and for the ones it
must refuse; each finding is a request it admits wrongly (or the one it refuses wrongly).
"""

from __future__ import annotations

from typing import Any

from embedded_aws.iam_policies import trust_allows

SCHEDULER = "scheduler.amazonaws.com"
SOURCE_ACCOUNT = "aws:SourceAccount"
SOURCE_ARN = "aws:SourceArn"
OTHER_ACCOUNT = "444455556666"


def scheduler_trust_findings(document: Any, group_arn: str) -> list[str]:
    account = group_arn.split(":")[4]
    other_group = group_arn.rsplit("/", 1)[0] + "/another-group"
    own = {SOURCE_ACCOUNT: [account], SOURCE_ARN: [group_arn]}
    refused = {
        "a schedule of another group of this account": {SOURCE_ACCOUNT: [account], SOURCE_ARN: [other_group]},
        "a request without aws:SourceArn": {SOURCE_ACCOUNT: [account]},
        "a schedule group of another account": {
            SOURCE_ACCOUNT: [OTHER_ACCOUNT],
            SOURCE_ARN: [group_arn.replace(f":{account}:", f":{OTHER_ACCOUNT}:")],
        },
    }
    findings = (
        []
        if trust_allows(document, SCHEDULER, own)
        else [f"refuses the email group's schedules ({group_arn})"]
    )
    findings += [
        f"admits {what}" for what, context in refused.items() if trust_allows(document, SCHEDULER, context)
    ]
    if trust_allows(document, "lambda.amazonaws.com", own):
        findings.append("admits a service other than EventBridge Scheduler")
    return findings
