"""SES v2 for the embedded AWS: the suppression list, configuration set event destinations, the
configuration set as AWS returns it, and a full record of every email sent.

moto's SES v2 sends mail (keeping sender, recipients, subject and body) but leaves out what the email
worker and Terraform rely on:

- GetSuppressedDestination, PutSuppressedDestination and DeleteSuppressedDestination are not
  implemented. SES keeps an account-level suppression list; with account-level suppression on it adds
  addresses that hard-bounced or complained
  (https://docs.aws.amazon.com/ses/latest/dg/sending-email-suppression-list.html), and
  GetSuppressedDestination answers NotFoundException for an address that is not on it
  (https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_GetSuppressedDestination.html).
- Configuration set event destinations (Create/Get/Update/DeleteConfigurationSetEventDestination(s))
  are not implemented, so Terraform cannot apply ``aws_sesv2_configuration_set_event_destination``
  (https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_CreateConfigurationSetEventDestination.html:
  NotFoundException for an unknown configuration set, AlreadyExistsException for a taken name).
- SendEmail drops the custom headers (List-Unsubscribe), the reply-to addresses and the
  configuration set name, so nothing can check them afterwards; of a ``Raw`` message it keeps only
  text decoded from it. The record keeps a Raw message's bytes as sent: ``Content.Raw.Data`` is the
  whole MIME message, "Base64-encoded binary data object" on the wire
  (https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_RawMessage.html), so what a forward
  carries can be compared byte for byte.
- GetConfigurationSet nests the stored SendingOptions in itself
  (``{"SendingEnabled": {"SendingEnabled": true}}``), which the AWS provider cannot decode; AWS
  answers ``{"SendingEnabled": true}``, true when it was never set
  (https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_GetConfigurationSet.html).
- PutConfigurationSetSendingOptions is not implemented, so a configuration set's sending cannot be
  paused or resumed, and SendEmail sends through a paused one. AWS stores ``SendingEnabled``
  (https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_PutConfigurationSetSendingOptions.html)
  and refuses to send while it is false. Which error SendEmail answers then is not on SES v2's page:
  its SendEmail declares only ``SendingPausedException`` (400, "the account's ability to send email
  is currently paused"; SES v1 has a ``ConfigurationSetSendingPausedException`` of its own), so the
  emulator answers that, marked unconfirmed for a configuration set's pause.

The fix adds the missing actions to moto's SES v2 responses and records each accepted SendEmail
request with its message id; ``sent_emails`` reads them back (in-process, or from the process running
the embedded server). Each accepted SendEmail then has its events published
(``ses_event_publishing``, outcomes set with ``ses_outcomes``). Installed by ``support_ses_v2``
(idempotent).
"""

from __future__ import annotations

import base64
import json
import threading
from dataclasses import dataclass, field
from datetime import UTC
from email.parser import BytesParser
from email.policy import default
from typing import Any

_PATCHED = "__outreach_ses_v2__"
_LOCK = threading.RLock()


@dataclass(frozen=True)
class SentEmail:
    """One email SES accepted: its id, when (seconds since the epoch on the emulator's clock, the
    virtual one when installed) and the SendEmail request's fields that matter (its message tags too)."""

    message_id: str
    sent_at: float
    sender: str
    to: tuple[str, ...]
    subject: str
    text: str
    html: str
    headers: dict[str, str]
    reply_to: tuple[str, ...]
    configuration_set: str | None
    tags: dict[str, str] = field(default_factory=dict)  # the EmailTags, name to value
    raw: bytes | None = None  # a Raw message's bytes as sent (its subject is the message's Subject)


def _state(backend: Any) -> dict[str, Any]:
    """Per-backend (account and region) state, created on first use; moto's reset drops it."""
    with _LOCK:
        state = backend.__dict__.get("_outreach_ses")
        if state is None:
            state = {"suppressed": {}, "destinations": {}, "sent": []}
            backend.__dict__["_outreach_ses"] = state
        return state  # type: ignore[no-any-return]


def sent_emails(region: str, account_id: str | None = None) -> list[SentEmail]:
    """Every email the embedded SES accepted in ``region``, in the order they were sent."""
    from moto.core.models import DEFAULT_ACCOUNT_ID
    from moto.sesv2.models import sesv2_backends

    backend = sesv2_backends[account_id or DEFAULT_ACCOUNT_ID][region]
    with _LOCK:
        return list(_state(backend)["sent"])


def event_destinations(backend: Any, configuration_set: str) -> list[dict[str, Any]]:
    """The event destinations of a configuration set, as CreateConfigurationSetEventDestination kept them."""
    with _LOCK:
        return [dict(d) for d in _state(backend)["destinations"].get(configuration_set, {}).values()]


def is_suppressed(backend: Any, address: str) -> bool:
    """Whether ``address`` is on the account's suppression list (one backend: account and region)."""
    with _LOCK:
        return address.lower() in _state(backend)["suppressed"]


def suppress(backend: Any, address: str, reason: str, at: float) -> None:
    """Put ``address`` on the account's suppression list as SES does after a hard bounce or complaint."""
    with _LOCK:
        _state(backend)["suppressed"][address.lower()] = {
            "EmailAddress": address,
            "Reason": reason,
            "LastUpdateTime": at,
        }


def _not_found(message: str) -> Exception:
    from moto.ses.exceptions import NotFoundException

    return NotFoundException(message)


def _sending_paused(name: str) -> Exception:
    from moto.core.exceptions import JsonRESTError

    return JsonRESTError("SendingPausedException", f"Sending is paused for configuration set <{name}>.")


def sending_enabled(backend: Any, configuration_set: str) -> bool:
    """Whether the configuration set sends (true when its sending was never set)."""
    stored = backend.core_backend.config_sets[configuration_set].enabled
    while isinstance(stored, dict):
        stored = stored.get("SendingEnabled", True)
    return stored is not False


def _already_exists(message: str) -> Exception:
    from moto.core.exceptions import JsonRESTError

    return JsonRESTError("AlreadyExistsException", message)


def _configuration_set_exists(response: Any, name: str) -> None:
    if name not in response.sesv2_backend.core_backend.config_sets:
        raise _not_found(f"Configuration set <{name}> does not exist.")


def _raw(request: dict[str, Any]) -> tuple[bytes | None, str]:
    """A Raw message's bytes (base64 in the request, API_RawMessage) and its decoded Subject."""
    data = request.get("Content", {}).get("Raw", {}).get("Data")
    if data is None:
        return None, ""
    raw = base64.b64decode(data)
    subject = BytesParser(policy=default).parsebytes(raw, headersonly=True).get("Subject", "")
    return raw, str(subject)


def _recorded(request: dict[str, Any], message_id: str) -> SentEmail:
    simple = request.get("Content", {}).get("Simple", {})
    body = simple.get("Body", {})
    raw, raw_subject = _raw(request)
    from moto.core import utils

    return SentEmail(
        message_id=message_id,
        sent_at=utils.utcnow().replace(tzinfo=UTC).timestamp(),
        sender=str(request.get("FromEmailAddress", "")),
        to=tuple(request.get("Destination", {}).get("ToAddresses", [])),
        subject=str(simple.get("Subject", {}).get("Data", "")) or raw_subject,
        text=str(body.get("Text", {}).get("Data", "")),
        html=str(body.get("Html", {}).get("Data", "")),
        headers={str(h["Name"]): str(h["Value"]) for h in simple.get("Headers", [])},
        reply_to=tuple(request.get("ReplyToAddresses", [])),
        configuration_set=request.get("ConfigurationSetName"),
        tags={str(t["Name"]): str(t["Value"]) for t in request.get("EmailTags", [])},
        raw=raw,
    )


def _responses(original_send: Any, original_get_configuration_set: Any) -> dict[str, Any]:
    def get_configuration_set(self: Any) -> str:
        body = json.loads(original_get_configuration_set(self))
        enabled = body.get("SendingOptions", {}).get("SendingEnabled")
        if isinstance(enabled, dict):
            body["SendingOptions"] = {"SendingEnabled": bool(enabled.get("SendingEnabled", True))}
        return json.dumps(body)

    def send_email(self: Any) -> str:
        request = json.loads(self.body)
        name = request.get("ConfigurationSetName")
        if name:
            _configuration_set_exists(self, name)
            if not sending_enabled(self.sesv2_backend, name):
                raise _sending_paused(name)
        result = original_send(self)
        record = _recorded(request, json.loads(result)["MessageId"])
        state = _state(self.sesv2_backend)
        with _LOCK:
            state["sent"].append(record)
        from embedded_aws.ses_event_publishing import publish_accepted

        publish_accepted(self, request, record)
        return str(result)

    def put_suppressed_destination(self: Any) -> str:
        address = str(self._get_param("EmailAddress"))
        reason = str(self._get_param("Reason"))
        from moto.core.utils import utcnow

        state = _state(self.sesv2_backend)
        with _LOCK:
            state["suppressed"][address.lower()] = {
                "EmailAddress": address,
                "Reason": reason,
                "LastUpdateTime": utcnow().timestamp(),
            }
        return "{}"

    def get_suppressed_destination(self: Any) -> str:
        address = str(self._get_param("EmailAddress"))
        state = _state(self.sesv2_backend)
        with _LOCK:
            found = state["suppressed"].get(address.lower())
        if found is None:
            raise _not_found(f"Email address {address} does not exist on your suppression list.")
        return json.dumps({"SuppressedDestination": found})

    def delete_suppressed_destination(self: Any) -> str:
        address = str(self._get_param("EmailAddress"))
        state = _state(self.sesv2_backend)
        with _LOCK:
            removed = state["suppressed"].pop(address.lower(), None)
        if removed is None:
            raise _not_found(f"Email address {address} does not exist on your suppression list.")
        return "{}"

    def create_configuration_set_event_destination(self: Any) -> str:
        config_set = str(self._get_param("ConfigurationSetName"))
        _configuration_set_exists(self, config_set)
        name = str(self._get_param("EventDestinationName"))
        destination = dict(self._get_param("EventDestination") or {})
        state = _state(self.sesv2_backend)
        with _LOCK:
            per_set = state["destinations"].setdefault(config_set, {})
            if name in per_set:
                raise _already_exists(f"Event destination {name} already exists.")
            per_set[name] = {"Name": name, "Enabled": False, **destination}
        return "{}"

    def get_configuration_set_event_destinations(self: Any) -> str:
        config_set = str(self._get_param("ConfigurationSetName"))
        _configuration_set_exists(self, config_set)
        state = _state(self.sesv2_backend)
        with _LOCK:
            found = list(state["destinations"].get(config_set, {}).values())
        return json.dumps({"EventDestinations": found})

    def update_configuration_set_event_destination(self: Any) -> str:
        config_set = str(self._get_param("ConfigurationSetName"))
        _configuration_set_exists(self, config_set)
        name = str(self._get_param("EventDestinationName"))
        destination = dict(self._get_param("EventDestination") or {})
        state = _state(self.sesv2_backend)
        with _LOCK:
            per_set = state["destinations"].get(config_set, {})
            if name not in per_set:
                raise _not_found(f"Event destination {name} does not exist.")
            per_set[name] = {"Name": name, "Enabled": False, **destination}
        return "{}"

    def delete_configuration_set_event_destination(self: Any) -> str:
        config_set = str(self._get_param("ConfigurationSetName"))
        _configuration_set_exists(self, config_set)
        name = str(self._get_param("EventDestinationName"))
        state = _state(self.sesv2_backend)
        with _LOCK:
            if state["destinations"].get(config_set, {}).pop(name, None) is None:
                raise _not_found(f"Event destination {name} does not exist.")
        return "{}"

    def put_configuration_set_sending_options(self: Any) -> str:
        name = str(self._get_param("ConfigurationSetName"))
        _configuration_set_exists(self, name)
        enabled = self._get_param("SendingEnabled")
        with _LOCK:
            self.sesv2_backend.core_backend.config_sets[name].enabled = {
                "SendingEnabled": enabled is not False
            }
        return "{}"

    return {
        "put_configuration_set_sending_options": put_configuration_set_sending_options,
        "get_configuration_set": get_configuration_set,
        "send_email": send_email,
        "put_suppressed_destination": put_suppressed_destination,
        "get_suppressed_destination": get_suppressed_destination,
        "delete_suppressed_destination": delete_suppressed_destination,
        "create_configuration_set_event_destination": create_configuration_set_event_destination,
        "get_configuration_set_event_destinations": get_configuration_set_event_destinations,
        "update_configuration_set_event_destination": update_configuration_set_event_destination,
        "delete_configuration_set_event_destination": delete_configuration_set_event_destination,
    }


# moto's catch-all "/v2/.*" route only works in-process: its server turns it into a literal path, so
# the server needs each added action's path (from the API reference's request syntax).
_PATHS = (
    "{0}/v2/email/configuration-sets/(?P<ConfigurationSetName>[^/]+)/sending$",
    "{0}/v2/email/suppression/addresses/(?P<EmailAddress>[^/]+)$",
    "{0}/v2/email/suppression/addresses$",
    "{0}/v2/email/configuration-sets/(?P<ConfigurationSetName>[^/]+)/event-destinations$",
    "{0}/v2/email/configuration-sets/(?P<ConfigurationSetName>[^/]+)/event-destinations/"
    "(?P<EventDestinationName>[^/]+)$",
)


def support_ses_v2() -> None:
    """Install the actions on moto's SES v2 responses (in-process and server mode). Idempotent."""
    from moto.sesv2 import urls
    from moto.sesv2.responses import SESV2Response

    if getattr(SESV2Response, _PATCHED, False):
        return
    for path in _PATHS:
        urls.url_paths.setdefault(path, SESV2Response.dispatch)
    for name, method in _responses(SESV2Response.send_email, SESV2Response.get_configuration_set).items():
        setattr(SESV2Response, name, method)
    setattr(SESV2Response, _PATCHED, True)
