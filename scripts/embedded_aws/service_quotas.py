"""ListServiceQuotas for the embedded AWS, answered as moto answers GetServiceQuota.

moto implements GetServiceQuota and ListAWSDefaultServiceQuotas (with the default quotas of ``vpc``
only) but not ListServiceQuotas, so a command that reads an account's applied quota, as ``campaign
schedule`` and ``campaign cancel`` read Scheduler's request rates (``outreach_operator.scheduler_quota``),
would stop on a ``NotImplementedError`` instead of an answer AWS can give. The replacement lists the
quotas moto knows for the service and, for a service it has none of, answers
``NoSuchResourceException`` as its GetServiceQuota does: an account whose applied values Service Quotas
does not give, which the caller treats by taking the documented default
(https://docs.aws.amazon.com/servicequotas/2019-06-24/apireference/API_ListServiceQuotas.html lists
``NoSuchResourceException`` among the errors of the action).
"""

from __future__ import annotations

import json
from typing import Any

_PATCHED = "__outreach_list_service_quotas__"


def _list_service_quotas(self: Any) -> str:
    params = json.loads(self.body)
    quotas = self.backend.list_aws_default_service_quotas(str(params.get("ServiceCode")))
    return json.dumps({"Quotas": quotas})


def support_list_service_quotas() -> None:
    """Install ListServiceQuotas on moto's Service Quotas responses (idempotent)."""
    from moto.servicequotas.responses import ServiceQuotasResponse

    if getattr(getattr(ServiceQuotasResponse, "list_service_quotas", None), _PATCHED, False):
        return
    setattr(_list_service_quotas, _PATCHED, True)
    ServiceQuotasResponse.list_service_quotas = _list_service_quotas  # type: ignore[attr-defined]
