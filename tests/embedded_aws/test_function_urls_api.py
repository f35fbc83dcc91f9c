"""The Lambda API for function URLs on the embedded AWS answers as AWS's does, and stores URL permissions
as AWS stores them.

AWS pages: https://docs.aws.amazon.com/lambda/latest/api/API_CreateFunctionUrlConfig.html,
API_GetFunctionUrlConfig.html, API_ListFunctionUrlConfigs.html, API_UpdateFunctionUrlConfig.html,
API_DeleteFunctionUrlConfig.html, API_AddPermission.html, and the example policy in
https://docs.aws.amazon.com/lambda/latest/dg/urls-auth.html.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from botocore.exceptions import ClientError

from embedded_aws.clock import VirtualClock
from tests.embedded_aws.conftest import Lab

URL = re.compile(r"^https://[a-z0-9]{32}\.lambda-url\.us-east-1\.on\.aws/$")
HANDLER = "def handler(event, context):\n    return None\n"


def _error(call: Any, **kwargs: Any) -> tuple[str, int]:
    with pytest.raises(ClientError) as failure:
        call(**kwargs)
    response = failure.value.response
    return response["Error"]["Code"], response["ResponseMetadata"]["HTTPStatusCode"]


def test_a_url_configuration_is_created_once_read_listed_updated_and_deleted_as_aws_answers(
    lab: Lab, clock: VirtualClock
) -> None:
    lam = lab.lam
    arn = lab.function("with-url", HANDLER)
    # Create: the URL in AWS's form; a second create is a conflict and keeps the first URL
    created = lam.create_function_url_config(FunctionName="with-url", AuthType="NONE")
    assert URL.match(created["FunctionUrl"])
    assert (created["FunctionArn"], created["AuthType"], created["InvokeMode"]) == (arn, "NONE", "BUFFERED")
    assert _error(lam.create_function_url_config, FunctionName="with-url", AuthType="NONE") == (
        "ResourceConflictException",
        409,
    )
    # Get (200) and List answer the same configuration
    got = lam.get_function_url_config(FunctionName="with-url")
    assert got["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert got["FunctionUrl"] == created["FunctionUrl"]
    listed = lam.list_function_url_configs(FunctionName="with-url")["FunctionUrlConfigs"]
    assert [c["FunctionUrl"] for c in listed] == [created["FunctionUrl"]]
    # Update changes what it is given, InvokeMode included, and keeps the URL
    updated = lam.update_function_url_config(FunctionName="with-url", InvokeMode="RESPONSE_STREAM")
    assert (updated["FunctionUrl"], updated["AuthType"]) == (created["FunctionUrl"], "NONE")
    assert lam.get_function_url_config(FunctionName="with-url")["InvokeMode"] == "RESPONSE_STREAM"
    # Delete, then every call on the missing configuration is ResourceNotFoundException
    lam.delete_function_url_config(FunctionName="with-url")
    for call in (lam.get_function_url_config, lam.delete_function_url_config, lam.update_function_url_config):
        assert _error(call, FunctionName="with-url") == ("ResourceNotFoundException", 404)
    assert lam.list_function_url_configs(FunctionName="with-url")["FunctionUrlConfigs"] == []


def test_an_auth_type_or_invoke_mode_outside_the_api_values_is_refused(lab: Lab, clock: VirtualClock) -> None:
    lab.function("strict", HANDLER)
    assert _error(lab.lam.create_function_url_config, FunctionName="strict", AuthType="PUBLIC")[0] == (
        "ValidationException"
    )
    assert _error(
        lab.lam.create_function_url_config, FunctionName="strict", AuthType="NONE", InvokeMode="STREAMED"
    )[0] == ("ValidationException")
    assert lab.lam.list_function_url_configs(FunctionName="strict")["FunctionUrlConfigs"] == []


def test_url_permissions_are_stored_as_conditions_and_a_statement_id_is_unique(
    lab: Lab, clock: VirtualClock
) -> None:
    arn = lab.function("public", HANDLER)
    lab.lam.add_permission(
        FunctionName="public",
        StatementId="FunctionURLAllowPublicAccess",
        Action="lambda:InvokeFunctionUrl",
        Principal="*",
        FunctionUrlAuthType="NONE",
    )
    lab.lam.add_permission(
        FunctionName="public",
        StatementId="FunctionURLInvokeAllowPublicAccess",
        Action="lambda:InvokeFunction",
        Principal="*",
        InvokedViaFunctionUrl=True,
    )
    # THEN the policy holds the two statements of the urls-auth page's example, conditions and all
    policy = json.loads(lab.lam.get_policy(FunctionName="public")["Policy"])
    statements = {s["Sid"]: s for s in policy["Statement"]}
    assert statements["FunctionURLAllowPublicAccess"] == {
        "Sid": "FunctionURLAllowPublicAccess",
        "Effect": "Allow",
        "Principal": "*",
        "Action": "lambda:InvokeFunctionUrl",
        "Resource": arn,
        "Condition": {"StringEquals": {"lambda:FunctionUrlAuthType": "NONE"}},
    }
    assert statements["FunctionURLInvokeAllowPublicAccess"]["Condition"] == {
        "Bool": {"lambda:InvokedViaFunctionUrl": "true"}
    }
    # AND a statement id already in the policy is a conflict, leaving the policy as it was
    assert _error(
        lab.lam.add_permission,
        FunctionName="public",
        StatementId="FunctionURLAllowPublicAccess",
        Action="lambda:InvokeFunction",
        Principal="*",
    ) == ("ResourceConflictException", 409)
    assert json.loads(lab.lam.get_policy(FunctionName="public")["Policy"]) == policy
