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

The send quota is the account's too, where this module used to answer fixed figures and 0 sent: unless
``set_ses_account`` names others, ``MaxSendRate`` and ``Max24HourSend`` are 1 and 200 in the sandbox
(AWS's figures, https://docs.aws.amazon.com/ses/latest/dg/quotas.html) and 14 and 50,000 with
production access (AWS sets those per account; these are the emulator's). ``SentLast24Hours`` counts
what the embedded SES accepted in the last 24 hours on the emulator's clock (``ses_v2.sent_emails``,
stamped with moto's ``utcnow``: the virtual clock when one is installed, else the wall clock, never
``outreach.clock``), by recipient, as SES counts its quotas (the same page).
``ses_faults.throttle_at_account_rate`` refuses sends over these figures.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import Any

_PATCHED = "__outreach_ses_account__"
_LOCK = threading.Lock()


# (production access, sandbox): MaxSendRate per second and Max24HourSend.
_DEFAULT_RATE = (14.0, 1.0)
_DEFAULT_DAILY = (50000.0, 200.0)
DAY_SECONDS = 24 * 3600.0


@dataclass
class SesAccount:
    sending_enabled: bool = True
    production_access: bool = True
    # None: the default for production access or the sandbox.
    max_send_rate: float | None = None
    max_24_hour_send: float | None = None

    def send_rate(self) -> float:
        if self.max_send_rate is not None:
            return self.max_send_rate
        return _DEFAULT_RATE[0] if self.production_access else _DEFAULT_RATE[1]

    def daily_quota(self) -> float:
        """Max24HourSend; -1 means no limit, as in GetAccount's answer."""
        if self.max_24_hour_send is not None:
            return self.max_24_hour_send
        return _DEFAULT_DAILY[0] if self.production_access else _DEFAULT_DAILY[1]


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
    max_send_rate: float | None = None,
    max_24_hour_send: float | None = None,
) -> None:
    """Set one account and region's SES state (the defaults restore a ready account).

    ``max_send_rate`` (emails per second) and ``max_24_hour_send`` (emails per 24 hours, -1 for no
    limit) replace the quota GetAccount reports and ``throttle_at_account_rate`` enforces; None keeps
    the default for production access (14 and 50,000) or the sandbox (1 and 200).
    """
    from moto.core.models import DEFAULT_ACCOUNT_ID

    state = SesAccount(sending_enabled, production_access, max_send_rate, max_24_hour_send)
    with _LOCK:
        _ACCOUNTS[(account_id or DEFAULT_ACCOUNT_ID, region)] = state


def set_identity_verification(identity: str, status: str, region: str, account_id: str | None = None) -> None:
    """Give an existing identity a verification status (SUCCESS, PENDING, FAILED, ...)."""
    from moto.core.models import DEFAULT_ACCOUNT_ID
    from moto.sesv2.models import sesv2_backends

    backend = sesv2_backends[account_id or DEFAULT_ACCOUNT_ID][region]
    backend.get_email_identity(identity).verification_status = status


def emulator_now() -> float:
    """Seconds since the epoch on the emulator's clock (moto's ``utcnow``: virtual when installed)."""
    from datetime import UTC

    from moto.core import utils

    return float(utils.utcnow().replace(tzinfo=UTC).timestamp())


def send_quota(backend: Any) -> tuple[float, float]:
    """(MaxSendRate, Max24HourSend) of one backend's account and region."""
    state = _account(backend.account_id, backend.region_name)
    return state.send_rate(), state.daily_quota()


def recipients_sent(backend: Any, within_seconds: float, now: float | None = None) -> int:
    """How many recipients the embedded SES accepted emails for in the ``within_seconds`` up to ``now``
    (the emulator's clock by default). Counts the To addresses ``ses_v2`` records."""
    from embedded_aws.ses_v2 import sent_emails

    at = emulator_now() if now is None else now
    since = at - within_seconds
    sent = sent_emails(backend.region_name, backend.account_id)
    return sum(len(email.to) for email in sent if since < email.sent_at <= at)


def account_details(backend: Any) -> dict[str, Any]:
    """The GetAccount answer for one backend (one account and region)."""
    state = _account(backend.account_id, backend.region_name)
    return {
        "DedicatedIpAutoWarmupEnabled": False,
        "EnforcementStatus": "HEALTHY",
        "ProductionAccessEnabled": state.production_access,
        "SendingEnabled": state.sending_enabled,
        "SendQuota": {
            "Max24HourSend": state.daily_quota(),
            "MaxSendRate": state.send_rate(),
            "SentLast24Hours": float(recipients_sent(backend, DAY_SECONDS)),
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
