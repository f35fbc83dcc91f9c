"""Lambda's account concurrency on the embedded AWS: GetAccountSettings and the 100-unreserved floor.

moto has no GetAccountSettings at all, and it refuses a reservation that would leave fewer than 100
unreserved executions only when MOTO_LAMBDA_CONCURRENCY_QUOTA is set. In AWS every account has a
concurrency limit per region (1,000 by default, often lower in a new account). GetAccountSettings
reports it as ``AccountLimit.ConcurrentExecutions``, with ``UnreservedConcurrentExecutions`` the
limit less every function's reservation, and PutFunctionConcurrency refuses a reservation that would
leave fewer than 100 unreserved
(https://docs.aws.amazon.com/lambda/latest/api/API_GetAccountSettings.html,
https://docs.aws.amazon.com/lambda/latest/dg/configuration-concurrency.html).

Here each account and region has a limit: the one ``set_concurrency_limit`` gave it, else
MOTO_LAMBDA_CONCURRENCY_QUOTA, else 1,000. GetAccountSettings answers from it and from the functions'
reservations, and PutFunctionConcurrency enforces the floor against it, always.
"""

from __future__ import annotations

import functools
import json
import os
import threading
from collections.abc import Callable
from typing import Any

DEFAULT_LIMIT = 1000
MINIMUM_UNRESERVED = 100
_QUOTA_ENV = "MOTO_LAMBDA_CONCURRENCY_QUOTA"
_PATCHED = "__outreach_account_settings__"
_PATH = r"{0}/(?P<api_version>[^/]+)/account-settings/?$"
_LIMITS: dict[tuple[str, str], int] = {}
_LOCK = threading.Lock()

# Fixed quotas GetAccountSettings reports besides concurrency (Lambda's documented defaults).
_CODE_SIZE_UNZIPPED = 250 * 1024 * 1024
_CODE_SIZE_ZIPPED = 50 * 1024 * 1024
_TOTAL_CODE_SIZE = 75 * 1024**3


def set_concurrency_limit(region: str, limit: int | None, account_id: str | None = None) -> None:
    """Give one account and region a concurrency limit; ``None`` restores the default."""
    from moto.core.models import DEFAULT_ACCOUNT_ID

    key = (account_id or DEFAULT_ACCOUNT_ID, region)
    with _LOCK:
        if limit is None:
            _LIMITS.pop(key, None)
        else:
            _LIMITS[key] = limit


def concurrency_limit(account_id: str, region: str) -> int:
    with _LOCK:
        chosen = _LIMITS.get((account_id, region))
    if chosen is not None:
        return chosen
    return int(os.environ.get(_QUOTA_ENV) or DEFAULT_LIMIT)


def _reserved(backend: Any, *, besides: str | None = None) -> int:
    return sum(
        int(fn.reserved_concurrency or 0) for fn in backend.list_functions() if fn.function_name != besides
    )


def account_settings(backend: Any) -> dict[str, Any]:
    """The GetAccountSettings answer for one backend (one account and region)."""
    limit = concurrency_limit(backend.account_id, backend.region_name)
    functions = list(backend.list_functions())
    return {
        "AccountLimit": {
            "TotalCodeSize": _TOTAL_CODE_SIZE,
            "CodeSizeUnzipped": _CODE_SIZE_UNZIPPED,
            "CodeSizeZipped": _CODE_SIZE_ZIPPED,
            "ConcurrentExecutions": limit,
            "UnreservedConcurrentExecutions": limit - _reserved(backend),
        },
        "AccountUsage": {
            "TotalCodeSize": sum(int(getattr(fn, "code_size", 0) or 0) for fn in functions),
            "FunctionCount": len(functions),
        },
    }


def _enforce_floor(put: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(put)
    def wrapper(self: Any, function_name: str, reserved_concurrency: Any) -> Any:
        from moto.awslambda.exceptions import InvalidParameterValueException

        fn = self.get_function(function_name)
        limit = concurrency_limit(self.account_id, self.region_name)
        left = limit - int(reserved_concurrency) - _reserved(self, besides=fn.function_name)
        if left < MINIMUM_UNRESERVED:
            raise InvalidParameterValueException(
                "Specified ReservedConcurrentExecutions for function decreases account's "
                f"UnreservedConcurrentExecution below its minimum value of [{MINIMUM_UNRESERVED}]."
            )
        return put(self, function_name, reserved_concurrency)

    return wrapper


def report_account_settings() -> None:
    """Install GetAccountSettings and the floor on moto's Lambda (in-process and server). Idempotent."""
    from moto.awslambda import urls
    from moto.awslambda.models import LambdaBackend
    from moto.awslambda.responses import LambdaResponse

    if getattr(LambdaResponse, _PATCHED, False):
        return

    def get_account_settings(self: Any) -> tuple[int, dict[str, str], str]:
        return 200, {}, json.dumps(account_settings(self.backend))

    urls.url_paths[_PATH] = LambdaResponse.dispatch
    LambdaResponse.get_account_settings = get_account_settings  # type: ignore[attr-defined]
    LambdaBackend.put_function_concurrency = _enforce_floor(  # type: ignore[method-assign]
        LambdaBackend.put_function_concurrency
    )
    setattr(LambdaResponse, _PATCHED, True)
