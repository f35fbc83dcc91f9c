"""The AWS SDK features the handlers' requests rely on, checked when a function starts.

The functions take boto3 from the Lambda runtime, which AWS updates on its own schedule
(https://docs.aws.amazon.com/lambda/latest/dg/lambda-python.html lists the SDK version each Python
runtime includes). A runtime whose botocore lacks a request member the code sends would fail every
call with a ParamValidationError at send time, after the email task was claimed; this check fails the
cold start instead, naming the feature and the SDK versions found, so the first invocation of a
deployment tells a person what to change (docs/deploying.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import boto3
import botocore
import botocore.session

from outreach.errors import ConfigurationError


@dataclass(frozen=True)
class Feature:
    """A request member (``path`` from the operation's input) that ``needed_for`` sends."""

    service: str
    operation: str
    path: tuple[str, ...]
    needed_for: str
    since: str  # the first boto3 release that has it


# SendEmail's Content.Simple.Headers: List-Unsubscribe and List-Unsubscribe-Post on every email.
SES_SEND_EMAIL_HEADERS = Feature(
    "sesv2", "SendEmail", ("Content", "Simple", "Headers"), "the List-Unsubscribe headers", "1.34.56"
)
# CreateSchedule's ActionAfterCompletion: a one-time email schedule deletes itself after it fired.
SCHEDULER_ACTION_AFTER_COMPLETION = Feature(
    "scheduler", "CreateSchedule", ("ActionAfterCompletion",), "self-deleting email schedules", "1.34.14"
)


def missing(feature: Feature) -> bool:
    """Whether this process's botocore lacks ``feature``."""
    model = botocore.session.get_session().get_service_model(feature.service)
    shape = model.operation_model(feature.operation).input_shape
    for name in feature.path:
        members = getattr(shape, "members", {})
        if name not in members:
            return True
        shape = members[name]
    return False


def require(*features: Feature) -> None:
    """Raise ``ConfigurationError`` naming every feature this runtime's SDK lacks."""
    absent = [feature for feature in features if missing(feature)]
    if absent:
        names = "; ".join(
            f"{f.service} {f.operation} {'.'.join(f.path)} ({f.needed_for}, boto3 >= {f.since})"
            for f in absent
        )
        raise ConfigurationError(
            f"the runtime's AWS SDK (boto3 {boto3.__version__}, botocore {botocore.__version__}) lacks "
            f"{names}; deploy a newer runtime or package the SDK with the function (docs/deploying.md)"
        )
