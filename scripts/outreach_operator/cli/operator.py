"""Who is acting: the name recorded with every operator override and replay."""

from __future__ import annotations

import os

import boto3


def operator_name(explicit: str | None) -> str:
    """``--operator``, else ``OUTREACH_OPERATOR``, else the AWS identity the command runs as."""
    if explicit:
        return explicit
    from_env = os.environ.get("OUTREACH_OPERATOR", "").strip()
    if from_env:
        return from_env
    return str(boto3.client("sts").get_caller_identity()["Arn"])
