"""Lambda function URL configurations on the embedded AWS, as the Lambda API answers for them.

moto 5.2.5 stores one URL configuration per function but differs from AWS where Terraform and the
emulator's URL host read it:

- ListFunctionUrlConfigs (``GET /2021-10-31/functions/{name}/urls``) has no route: 404 with an HTML
  page. The control loop lists the applied URLs with it
  (https://docs.aws.amazon.com/lambda/latest/api/API_ListFunctionUrlConfigs.html).
- CreateFunctionUrlConfig on a function that has a URL silently replaces it, with a new URL; AWS
  answers ResourceConflictException (409) and keeps the first
  (https://docs.aws.amazon.com/lambda/latest/api/API_CreateFunctionUrlConfig.html, Errors). It takes any
  AuthType, or none; AWS requires ``AWS_IAM`` or ``NONE`` and InvokeMode ``BUFFERED`` or
  ``RESPONSE_STREAM`` (ValidationException otherwise).
- UpdateFunctionUrlConfig on a function without a URL fails inside moto (HTTP 500), and it ignores a
  new InvokeMode; DeleteFunctionUrlConfig without a URL answers 204. AWS answers
  ResourceNotFoundException (404) for both
  (https://docs.aws.amazon.com/lambda/latest/api/API_UpdateFunctionUrlConfig.html,
  API_DeleteFunctionUrlConfig.html).
- GetFunctionUrlConfig answers 201, not 200, and every answer gives ``FunctionUrl`` without the
  trailing slash AWS returns (``https://<url-id>.lambda-url.<region>.on.aws/``, the form in the API
  reference's examples and what ``aws_lambda_function_url.function_url`` holds on AWS).

``support_function_urls`` installs the fixes (idempotent). What a URL does when it is called is
``function_urls``'s.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import unquote

AUTH_TYPES = ("AWS_IAM", "NONE")
INVOKE_MODES = ("BUFFERED", "RESPONSE_STREAM")
_PATCHED = "__outreach_function_urls__"
_LIST_PATH = r"{0}/(?P<api_version>[^/]+)/functions/(?P<function_name>[\w_:%-]+)/urls/?$"


def _validated(config: dict[str, Any], *, creating: bool) -> None:
    """ValidationException for an AuthType or InvokeMode AWS would refuse."""
    from moto.awslambda.exceptions import ValidationException

    auth_type = config.get("AuthType")
    if (creating or auth_type is not None) and auth_type not in AUTH_TYPES:
        raise ValidationException(
            str(auth_type), "authType", f"Member must satisfy enum value set: [{', '.join(AUTH_TYPES)}]"
        )
    invoke_mode = config.get("InvokeMode")
    if invoke_mode is not None and invoke_mode not in INVOKE_MODES:
        raise ValidationException(
            str(invoke_mode), "invokeMode", f"Member must satisfy enum value set: [{', '.join(INVOKE_MODES)}]"
        )


def _conflict(function_arn: str) -> Exception:
    from moto.awslambda.exceptions import LambdaClientError

    error = LambdaClientError(
        "ResourceConflictException",
        f"Failed to create function url config for [functionArn = {function_arn}]. "
        "Error message:  FunctionUrlConfig exists for this Lambda function",
    )
    error.code = 409
    return error


def _stamp() -> str:
    from moto.core.utils import utcnow

    return str(utcnow().strftime("%Y-%m-%dT%H:%M:%S.000+0000"))


def _to_dict(self: Any) -> dict[str, Any]:
    """A URL configuration as GetFunctionUrlConfig and ListFunctionUrlConfigs return it."""
    answer = {
        "FunctionUrl": self.url,
        "FunctionArn": self.function.function_arn,
        "AuthType": self.config.get("AuthType"),
        "CreationTime": self.created,
        "LastModifiedTime": self.last_modified,
        "InvokeMode": self.config.get("InvokeMode") or "BUFFERED",
    }
    if self.config.get("Cors"):
        answer["Cors"] = self.config["Cors"]
    return answer


def _update(self: Any, new_config: dict[str, Any]) -> None:
    for name in ("AuthType", "Cors", "InvokeMode"):
        if new_config.get(name) is not None:
            self.config[name] = new_config[name]
    self.last_modified = _stamp()


def support_function_urls() -> None:
    """Install the URL configuration fixes on moto's Lambda (in-process and server). Idempotent."""
    from moto.awslambda import urls
    from moto.awslambda.exceptions import GenericResourcNotFound
    from moto.awslambda.models import FunctionUrlConfig, LambdaFunction
    from moto.awslambda.responses import LambdaResponse

    if getattr(LambdaResponse, _PATCHED, False):
        return
    original_init = FunctionUrlConfig.__init__

    def init(self: Any, function: Any, config: dict[str, Any]) -> None:
        original_init(self, function=function, config=config)
        self.url = self.url.rstrip("/") + "/"
        self.created = self.last_modified = _stamp()

    def create_url_config(self: Any, config: dict[str, Any]) -> Any:
        _validated(config, creating=True)
        if self.url_config is not None:
            raise _conflict(self.function_arn)
        self.url_config = FunctionUrlConfig(function=self, config=dict(config))
        return self.url_config

    def update_url_config(self: Any, config: dict[str, Any]) -> Any:
        _validated(config, creating=False)
        if self.url_config is None:
            raise GenericResourcNotFound()
        self.url_config.update(config)
        return self.url_config

    def delete_url_config(self: Any) -> None:
        if self.url_config is None:
            raise GenericResourcNotFound()
        self.url_config = None

    def get_function_url_config(self: Any) -> tuple[int, dict[str, Any], str]:
        function_name = unquote(self.path.split("/")[-2])
        config = self.backend.get_function_url_config(function_name)
        return 200, {}, json.dumps(config.to_dict())

    def list_function_url_configs(self: Any) -> tuple[int, dict[str, Any], str]:
        function_name = unquote(self.path.split("?")[0].rstrip("/").split("/")[-2])
        function = self.backend.get_function(function_name)
        configs = [] if function.url_config is None else [function.url_config.to_dict()]
        return 200, {}, json.dumps({"FunctionUrlConfigs": configs})

    FunctionUrlConfig.__init__ = init  # type: ignore[method-assign]
    FunctionUrlConfig.to_dict = _to_dict  # type: ignore[method-assign]
    FunctionUrlConfig.update = _update  # type: ignore[method-assign]
    LambdaFunction.create_url_config = create_url_config  # type: ignore[method-assign]
    LambdaFunction.update_url_config = update_url_config  # type: ignore[method-assign]
    LambdaFunction.delete_url_config = delete_url_config  # type: ignore[method-assign]
    LambdaResponse.get_function_url_config = get_function_url_config  # type: ignore[method-assign]
    LambdaResponse.list_function_url_configs = list_function_url_configs  # type: ignore[attr-defined]
    urls.url_paths[_LIST_PATH] = LambdaResponse.dispatch
    setattr(LambdaResponse, _PATCHED, True)
