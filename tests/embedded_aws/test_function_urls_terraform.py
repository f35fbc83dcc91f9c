"""A function URL written with Terraform's aws provider 5.x applies on the embedded AWS, plans clean, and
is served on loopback.

With ``authorization_type = "NONE"`` the provider adds the ``lambda:InvokeFunctionUrl`` statement for
``"*"`` itself (``FunctionURLAllowPublicAccess``); the ``lambda:InvokeFunction`` statement AWS requires
of URLs created since October 2025 (https://docs.aws.amazon.com/lambda/latest/dg/urls-auth.html) is an
``aws_lambda_permission``: 5.x has no ``invoked_via_function_url`` (6.28 added it), so it carries no
condition.
"""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest

from embedded_aws.base import client
from embedded_aws.clock import VirtualClock
from embedded_aws.cloud import LocalCloud
from embedded_aws.runtime import FunctionRuntime
from tests.embedded_aws.conftest import build_zip
from tests.embedded_aws.tiny_terraform import TinyRoot

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

REGION = "us-east-1"
HANDLER = """
def handler(event, context):
    return {"statusCode": 200, "headers": {"content-type": "text/plain"},
            "body": event["requestContext"]["http"]["method"] + " " + event["rawPath"]}
"""
CONFIGURATION = """
resource "aws_iam_role" "fn" {
  name = "url-fn"
  assume_role_policy = jsonencode({
    Version   = "2012-10-17"
    Statement = [{
      Effect    = "Allow"
      Principal = { Service = "lambda.amazonaws.com" }
      Action    = "sts:AssumeRole"
    }]
  })
}

resource "aws_lambda_function" "fn" {
  function_name    = "url-fn"
  role             = aws_iam_role.fn.arn
  handler          = "app.handler"
  runtime          = "python3.12"
  filename         = "${path.module}/app.zip"
  source_code_hash = filebase64sha256("${path.module}/app.zip")
}

resource "aws_lambda_function_url" "fn" {
  function_name      = aws_lambda_function.fn.function_name
  authorization_type = "NONE"
}

resource "aws_lambda_permission" "invoke_via_url" {
  statement_id  = "FunctionURLInvokeAllowPublicAccess"
  action        = "lambda:InvokeFunction"
  function_name = aws_lambda_function.fn.function_name
  principal     = "*"
}

output "url" { value = aws_lambda_function_url.fn.function_url }
output "url_id" { value = aws_lambda_function_url.fn.url_id }
"""


def test_an_applied_function_url_plans_clean_and_answers_on_its_loopback_address(
    endpoint: str, clock: VirtualClock, runtime: FunctionRuntime, tmp_path: Path
) -> None:
    # GIVEN the configuration applied with Terraform
    root = TinyRoot(tmp_path / "tf", CONFIGURATION, region=REGION)
    (root.directory / "app.zip").write_bytes(build_zip(HANDLER))
    outputs = root.apply(endpoint)
    url = outputs["url"]
    # THEN its URL has AWS's form, and a second plan finds nothing to change
    assert url == f"https://{outputs['url_id']}.lambda-url.{REGION}.on.aws/"
    assert root.plan_is_empty(endpoint)
    # AND the provider's InvokeFunctionUrl statement carries AWS's condition
    policy = json.loads(client("lambda", endpoint, REGION).get_policy(FunctionName="url-fn")["Policy"])
    statements = {s["Sid"]: s for s in policy["Statement"]}
    assert statements["FunctionURLAllowPublicAccess"]["Condition"] == {
        "StringEquals": {"lambda:FunctionUrlAuthType": "NONE"}
    }
    # WHEN the control loop runs and a client GETs the loopback address of the applied URL
    with LocalCloud(endpoint, clock, runtime, region=REGION) as cloud:
        loopback = cloud.function_urls.loopback_url(f"{url}unsubscribe?t=abc")
        with urllib.request.urlopen(loopback, timeout=60) as response:
            status, body = response.status, response.read()
    # THEN the function answered through it
    assert loopback.startswith("http://127.0.0.1:")
    assert (status, body) == (200, b"GET /unsubscribe")
