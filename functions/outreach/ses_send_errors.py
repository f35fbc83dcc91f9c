"""Which failures of an SES send prove that SES does not have the message, and the code of an SES error.

An email cannot be taken back, so a sender that cannot tell whether SES accepted its request must
assume it did: only the failures listed here allow a retry (the email worker releases its claim, the
inbound processor releases its forward).

``NOT_SENT_ERRORS`` are raised before any byte of the request left this process. botocore raises
EndpointConnectionError only for a connection that could not be opened (DNS, refused),
ConnectTimeoutError and ProxyConnectionError while connecting (botocore's httpsession maps urllib3's
NewConnectionError, ConnectTimeoutError and ProxyError to them); credentials and parameter errors come
before signing. A ``ClientError`` is SES's own answer, also proof it did not send. Everything else, a
ReadTimeoutError or ConnectionClosedError above all, may follow an accepted request.
https://docs.aws.amazon.com/boto3/latest/guide/error-handling.html
"""

from __future__ import annotations

from botocore.exceptions import (
    ClientError,
    ConnectTimeoutError,
    EndpointConnectionError,
    NoCredentialsError,
    ParamValidationError,
    ProxyConnectionError,
)

NOT_SENT_ERRORS: tuple[type[Exception], ...] = (
    EndpointConnectionError,
    ConnectTimeoutError,
    ProxyConnectionError,
    NoCredentialsError,
    ParamValidationError,
)


def error_code(error: ClientError) -> str:
    """The error code of an AWS answer (``MessageRejected``), empty when it names none."""
    return str(error.response.get("Error", {}).get("Code", ""))
