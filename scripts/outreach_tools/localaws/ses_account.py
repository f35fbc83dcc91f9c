"""Whether SES will send, on the embedded AWS: sesv2 GetAccount and an identity's sending status.

moto has no sesv2 GetAccount (nor PutAccountSendingAttributes), and it answers GetEmailIdentity with
``VerificationStatus: SUCCESS`` next to ``VerifiedForSendingStatus: false``, which SES never does: an
identity whose verification succeeded is verified for sending
(https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_GetEmailIdentity.html).

Here each account and region has SES account details: sending enabled and production access granted
unless ``set_ses_account`` says otherwise (a new AWS account starts in the sandbox; the emulator plays
one that has left it, and a test puts it back with ``set_ses_account(..., production_access=False)``).
GetAccount answers from them (https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_GetAccount.html),
PutAccountSendingAttributes turns sending on and off, and an identity is verified for sending exactly
when its verification status is SUCCESS (``set_identity_verification`` makes it PENDING or FAILED).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import Any

_PATCHED = "__outreach_ses_account__"
_LOCK = threading.Lock()


@dataclass
class SesAccount:
    sending_enabled: bool = True
    production_access: bool = True


_ACCOUNTS: dict[tuple[str, str], SesAccount] = {}


def _account(account_id: str, region: str) -> SesAccount:
    with _LOCK:
        return _ACCOUNTS.setdefault((account_id, region), SesAccount())


def set_ses_account(
    region: str,
    *,
    production_access: bool = True,
    sending_enabled: bool = True,
    account_id: str | None = None,
) -> None:
    """Set one account and region's SES state (the defaults restore a ready account)."""
    from moto.core.models import DEFAULT_ACCOUNT_ID

    with _LOCK:
        _ACCOUNTS[(account_id or DEFAULT_ACCOUNT_ID, region)] = SesAccount(sending_enabled, production_access)


def set_identity_verification(identity: str, status: str, region: str, account_id: str | None = None) -> None:
    """Give an existing identity a verification status (SUCCESS, PENDING, FAILED, ...)."""
    from moto.core.models import DEFAULT_ACCOUNT_ID
    from moto.sesv2.models import sesv2_backends

    backend = sesv2_backends[account_id or DEFAULT_ACCOUNT_ID][region]
    backend.get_email_identity(identity).verification_status = status


def account_details(backend: Any) -> dict[str, Any]:
    """The GetAccount answer for one backend (one account and region)."""
    state = _account(backend.account_id, backend.region_name)
    return {
        "DedicatedIpAutoWarmupEnabled": False,
        "EnforcementStatus": "HEALTHY",
        "ProductionAccessEnabled": state.production_access,
        "SendingEnabled": state.sending_enabled,
        "SendQuota": {
            "Max24HourSend": 50000.0 if state.production_access else 200.0,
            "MaxSendRate": 14.0 if state.production_access else 1.0,
            "SentLast24Hours": 0.0,
        },
    }


def report_ses_account() -> None:
    """Install GetAccount, PutAccountSendingAttributes and the sending status on moto's SES v2.
    Idempotent."""
    from moto.ses.models import EmailIdentity
    from moto.sesv2 import urls
    from moto.sesv2.responses import SESV2Response

    if getattr(SESV2Response, _PATCHED, False):
        return

    def get_account(self: Any) -> str:
        return json.dumps(account_details(self.sesv2_backend))

    def put_account_sending_attributes(self: Any) -> str:
        backend = self.sesv2_backend
        state = _account(backend.account_id, backend.region_name)
        with _LOCK:
            state.sending_enabled = bool(self._get_param("SendingEnabled", False))
        return json.dumps({})

    original = EmailIdentity.get_response_object

    def get_response_object(self: Any) -> dict[str, Any]:
        answer: dict[str, Any] = dict(original.fget(self))  # type: ignore[attr-defined]
        answer["VerifiedForSendingStatus"] = self.verification_status == "SUCCESS"
        return answer

    # moto's catch-all /v2/ path does not reach the server's routes: name both paths.
    for path in (r"{0}/v2/email/account$", r"{0}/v2/email/account/sending$"):
        urls.url_paths[path] = SESV2Response.dispatch
    SESV2Response.get_account = get_account  # type: ignore[attr-defined]
    SESV2Response.put_account_sending_attributes = put_account_sending_attributes  # type: ignore[attr-defined]
    EmailIdentity.get_response_object = property(get_response_object)  # type: ignore[method-assign,assignment]
    setattr(SESV2Response, _PATCHED, True)
