"""The receive command (``python -m embedded_aws.receive_mail``): SES receives a raw message from a file
or standard input and runs the active rule set's actions, or the command refuses with exit code 2.

Pages: https://docs.aws.amazon.com/ses/latest/dg/receiving-email-concepts.html ("Email-receiving
process": mail no rule matches is rejected), receiving-email-action-s3.html and
receiving-email-action-sns.html (what the actions write and publish),
https://docs.aws.amazon.com/ses/latest/APIReference/API_SetActiveReceiptRuleSet.html (no active rule
set: receiving is off).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from embedded_aws.base import client
from embedded_aws.receive_mail import main
from tests.embedded_aws.conftest import Lab
from tests.embedded_aws.test_ses_receiving import (
    BUCKET,
    REGION,
    activate,
    inbox,
    message,
    ses_function,
    to_s3,
)

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
TO = "reply+token@in.example.com"


def _run(endpoint: str, *args: str, stdin: bytes = b"") -> tuple[int, dict[str, Any] | None]:
    """``main`` with the endpoint and Region; its exit code and the JSON it printed (None if none)."""
    out = io.StringIO()
    saved, sys.stdout = sys.stdout, out
    try:
        code = main(["--endpoint", endpoint, "--region", REGION, *args], stdin=io.BytesIO(stdin))
    finally:
        sys.stdout = saved
    return code, json.loads(out.getvalue()) if out.getvalue() else None


def _store_and_notify(lab: Lab) -> str:
    """The stack's shape: the message to S3, then an SNS notification to a queue; the queue's URL."""
    inbox(lab)
    sns = client("sns", lab.endpoint, REGION)
    topic = sns.create_topic(Name="inbound")["TopicArn"]
    queue = lab.sqs.create_queue(QueueName="inbound")["QueueUrl"]
    queue_arn = lab.sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"]
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=queue_arn["QueueArn"])
    actions = [to_s3("inbound/"), {"SNSAction": {"TopicArn": topic, "Encoding": "Base64"}}]
    activate(lab.endpoint, {"Name": "replies", "Recipients": ["in.example.com"], "Actions": actions})
    return str(queue)


def test_the_command_runs_the_rule_sets_actions_on_a_file_and_prints_what_they_did(
    lab: Lab, tmp_path: Path
) -> None:
    queue = _store_and_notify(lab)
    eml = tmp_path / "reply.eml"
    eml.write_bytes(message(to=TO))
    code, printed = _run(lab.endpoint, "--to", TO, "--from", "bounce@client.example", str(eml))
    assert code == 0 and printed is not None
    key = f"inbound/{printed['message_id']}"
    assert printed["accepted"] and printed["rules"] == ["replies"]
    assert printed["s3_objects"] == [{"bucket": BUCKET, "key": key}]
    assert [(a["type"], a["outcome"]) for a in printed["actions"]] == [("S3", "done"), ("SNS", "done")]
    assert lab.s3.get_object(Bucket=BUCKET, Key=key)["Body"].read() == eml.read_bytes()
    delivered = lab.sqs.receive_message(QueueUrl=queue, WaitTimeSeconds=1)["Messages"]
    notification = json.loads(json.loads(delivered[0]["Body"])["Message"])
    assert notification["mail"]["messageId"] == printed["message_id"]
    assert notification["mail"]["source"] == "bounce@client.example"
    assert notification["receipt"]["action"]["type"] == "SNS"


def test_the_command_reads_the_message_from_standard_input_as_a_module(lab: Lab) -> None:
    _store_and_notify(lab)
    raw = message(to=TO, body="FROM-STDIN")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(ROOT / p) for p in ("scripts", "functions"))}
    command = [sys.executable, "-m", "embedded_aws.receive_mail", "--endpoint", lab.endpoint]
    done = subprocess.run(
        [*command, "--region", REGION, "--to", TO, "-"], input=raw, capture_output=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert lab.s3.get_object(Bucket=BUCKET, Key=printed["s3_objects"][0]["key"])["Body"].read() == raw


@pytest.mark.parametrize(
    ("setup", "to", "file", "says"),
    [
        ("rule set", TO, "missing.eml", "no such file"),
        ("none", TO, "reply.eml", "no active receipt rule set"),
        ("rule set", "someone@elsewhere.example", "reply.eml", "no enabled rule"),
        ("lambda rule", TO, "reply.eml", "Lambda action"),
    ],
)
def test_the_command_refuses_with_exit_code_2_and_says_why_before_ses_runs_anything(
    lab: Lab, tmp_path: Path, capsys: pytest.CaptureFixture[str], setup: str, to: str, file: str, says: str
) -> None:
    if setup == "rule set":
        _store_and_notify(lab)
    if setup == "lambda rule":
        inbox(lab)
        function = ses_function(lab, "on-reply", "process")
        action = {"LambdaAction": {"FunctionArn": function, "InvocationType": "Event"}}
        activate(lab.endpoint, {"Name": "process", "Recipients": ["in.example.com"], "Actions": [action]})
    (tmp_path / "reply.eml").write_bytes(message(to=TO))
    code, printed = _run(lab.endpoint, "--to", to, str(tmp_path / file))
    assert (code, printed) == (2, None)
    assert says in capsys.readouterr().err
    listed = lab.s3.list_objects_v2(Bucket=BUCKET).get("Contents", []) if setup != "none" else []
    assert listed == []
