"""Who may call a function URL: the function's resource policy, evaluated for an anonymous caller.

With AuthType ``NONE`` "Lambda doesn't perform any authentication before invoking your function.
However, your function's resource-based policy is always in effect and must grant public access
before your function URL can receive requests", and "starting in October 2025, new function URLs will
require both lambda:InvokeFunctionUrl and lambda:InvokeFunction permissions"
(https://docs.aws.amazon.com/lambda/latest/dg/urls-auth.html). A request is let through when the
policy lets the anonymous principal (``"*"``) do both:

- ``lambda:InvokeFunctionUrl``, in a request context with ``lambda:FunctionUrlAuthType`` ``NONE`` and
  ``lambda:FunctionArn`` (the page's statement has ``StringEquals lambda:FunctionUrlAuthType NONE``);
- ``lambda:InvokeFunction``, in a request context with ``lambda:InvokedViaFunctionUrl`` ``true``, the
  condition key Lambda defines for that action besides ``lambda:EventSourceToken``
  (https://docs.aws.amazon.com/service-authorization/latest/reference/list_awslambda.html). A statement
  without a condition grants it too (hashicorp/aws 5.x cannot write the condition). One conditioned
  on ``lambda:FunctionUrlAuthType`` does not: that key is not one of InvokeFunction's, so here it is
  absent and the condition fails. Whether AWS fills it in for a call through a URL is not documented;
  refusing it keeps the emulator from passing a policy AWS might refuse.

Otherwise the URL answers 403 ``Forbidden``, as AWS does (the message is the one AWS returns, quoted
in https://github.com/brikis98/devops-book/pull/12). An explicit Deny for ``"*"`` wins. An
``AWS_IAM`` URL needs a SigV4-signed caller the emulator does not authenticate, so it answers 403 to
every request.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from embedded_aws.iam_policies import documents_allow

FORBIDDEN = (
    "Forbidden. For troubleshooting Function URL authorization issues, see: "
    "https://docs.aws.amazon.com/lambda/latest/dg/urls-auth.html"
)


def _anonymous(principal: Any) -> bool:
    """Whether a statement's Principal covers an unauthenticated caller."""
    if principal == "*":
        return True
    if isinstance(principal, Mapping):
        values = principal.get("AWS")
        return values == "*" or (isinstance(values, list) and "*" in values)
    return False


def _public_statements(policy: Mapping[str, Any]) -> list[dict[str, Any]]:
    statements = policy.get("Statement", [])
    if isinstance(statements, dict):
        statements = [statements]
    return [dict(s) for s in statements if _anonymous(s.get("Principal"))]


def anonymous_may_invoke(policy: str | Mapping[str, Any] | None, function_arn: str, auth_type: str) -> bool:
    """Whether the resource ``policy`` (GetPolicy's document; None when the function has none) lets
    an unauthenticated request through the function's URL of ``auth_type``."""
    if auth_type != "NONE" or policy is None:
        return False
    document = json.loads(policy) if isinstance(policy, str) else policy
    public = [{"Statement": _public_statements(document)}]
    url_context = {"lambda:FunctionUrlAuthType": ["NONE"], "lambda:FunctionArn": [function_arn]}
    invoke_context = {"lambda:InvokedViaFunctionUrl": ["true"]}
    return documents_allow(public, "lambda:InvokeFunctionUrl", function_arn, url_context) and documents_allow(
        public, "lambda:InvokeFunction", function_arn, invoke_context
    )
