"""Lambda resource policy statements as AddPermission stores them on AWS: URL conditions, unique ids.

moto 5.2.5 copies AddPermission's ``FunctionUrlAuthType`` and ``InvokedViaFunctionUrl`` into the
statement as top-level fields, where no policy evaluation looks, and it appends a statement whose
StatementId the policy already has. On AWS:

- ``FunctionUrlAuthType`` "adds a condition to your permission that only applies when your function
  URL's AuthType matches" (https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-resource-lambda-permission.html):
  ``"Condition": {"StringEquals": {"lambda:FunctionUrlAuthType": "NONE"}}``, the statement in the
  function URL access page's example policy (https://docs.aws.amazon.com/lambda/latest/dg/urls-auth.html).
- ``InvokedViaFunctionUrl`` limits a ``lambda:InvokeFunction`` grant to calls through the function's
  URL: ``"Condition": {"Bool": {"lambda:InvokedViaFunctionUrl": "true"}}`` (same page, and
  https://docs.aws.amazon.com/lambda/latest/api/API_AddPermission.html). The AWS provider reads both
  conditions back from GetPolicy to fill ``function_url_auth_type`` and ``invoked_via_function_url``.
- A StatementId already in the policy is refused with ResourceConflictException (409)
  (API_AddPermission.html, Errors), so a second statement of the same id never shadows the first.

``store_permission_conditions`` installs the fix on moto's Lambda policies (idempotent);
``function_urls`` evaluates the stored conditions when a URL is called.
"""

from __future__ import annotations

import json
from typing import Any

_PATCHED = "__outreach_permission_statements__"


def _conditions_of(statement: dict[str, Any]) -> None:
    """Move AddPermission's URL fields of ``statement`` into its Condition block, in place."""
    condition: dict[str, dict[str, str]] = statement.setdefault("Condition", {})
    auth_type = statement.pop("FunctionUrlAuthType", None)
    if auth_type is not None:
        condition.setdefault("StringEquals", {})["lambda:FunctionUrlAuthType"] = str(auth_type)
    via_url = statement.pop("InvokedViaFunctionUrl", None)
    if via_url is not None:
        condition.setdefault("Bool", {})["lambda:InvokedViaFunctionUrl"] = str(bool(via_url)).lower()
    if not condition:
        del statement["Condition"]


def _conflict(statement_id: str) -> Exception:
    from moto.awslambda.exceptions import LambdaClientError

    error = LambdaClientError(
        "ResourceConflictException",
        f"The statement id ({statement_id}) provided already exists. Please provide a new statement "
        "id, or remove the existing statement.",
    )
    error.code = 409
    return error


def store_permission_conditions() -> None:
    """Make moto's AddPermission store statements as AWS does (in-process and server). Idempotent."""
    from moto.awslambda.policy import Policy

    if getattr(Policy.add_statement, _PATCHED, False):
        return
    original = Policy.add_statement

    def add_statement(self: Any, raw: str, qualifier: str | None = None) -> tuple[Any, str]:
        statement_id = json.loads(raw).get("StatementId")
        if statement_id and any(s.get("Sid") == statement_id for s in self.statements):
            raise _conflict(str(statement_id))
        statement, revision = original(self, raw, qualifier)
        _conditions_of(statement)  # the dict moto appended to the policy
        return statement, revision

    setattr(add_statement, _PATCHED, True)
    Policy.add_statement = add_statement  # type: ignore[method-assign]
