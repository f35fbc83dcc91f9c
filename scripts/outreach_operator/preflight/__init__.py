"""`make preflight ENV=dev|prod|local`: read-only checks of the target account before a plan.

    python -m outreach_operator.preflight --env dev [--json] [--region R] [--endpoint-url URL]

Each check prints one line: PASS, SKIP (and why) or FAIL (and, below it, what to do):

- ``terraform``    the Terraform binary and the locked aws provider fit the root's and the modules'
                   ``required_version`` and ``required_providers`` (and the mirror holds the provider);
- ``backend``      ``backend.hcl`` exists and is filled in, for roots that use the S3 backend;
- ``root``         the root plans (on a scratch embedded AWS, see ``planned_root``), which gives its
                   region, the accounts it may deploy to and the reservations it will make;
- ``credentials``  sts:GetCallerIdentity answers, its account is one the root allows, and the session's
                   region is the root's;
- ``concurrency``  lambda:GetAccountSettings leaves at least 100 unreserved executions once the root's
                   reservations are made, counting those its functions already hold;
- ``email``        when the root has an ``email_sender_identity``: SES has it verified for sending,
                   the account may send outside the sandbox, and the rate the root sizes the email
                   stage for (its ``email_max_send_rate`` output) is at most the account's SES
                   sending rate (GetAccount ``SendQuota.MaxSendRate``,
                   https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_GetAccount.html);
- ``receiving``    when the root has an ``inbound_reply_domain``: SES receives email in its receiving
                   Region (modules/email-inbound/receiving_regions.json, from the SES guide), and the
                   domain's MX record points at ``inbound-smtp.<region>.amazonaws.com`` (a DNS query;
                   on the embedded AWS only the Region is checked).

Nothing is changed anywhere. Exit 0 when no check failed, 1 when one did, 2 on a usage error.
``--env local`` checks the embedded AWS at ``--endpoint-url`` (default http://127.0.0.1:4566) with the
local root's fake credentials.
"""

from __future__ import annotations

from outreach_operator.preflight.backend import check_backend
from outreach_operator.preflight.concurrency import (
    CONCURRENCY_QUOTA_CODE,
    MINIMUM_UNRESERVED,
    check_concurrency,
)
from outreach_operator.preflight.credentials import check_credentials
from outreach_operator.preflight.email_receiving import (
    REPLY_DOMAIN_SETTING,
    MxAnswer,
    check_receiving,
    dns_mx,
    inbound_endpoint,
    receiving_regions,
)
from outreach_operator.preflight.email_sending import (
    EMAIL_IDENTITY_SETTING,
    EMAIL_RATE_SETTING,
    SES_IDENTITY_RESOURCES,
    check_email,
)
from outreach_operator.preflight.root import check_root
from outreach_operator.preflight.runner import CHECKS, RootReader, main, run_checks
from outreach_operator.preflight.target import LOCAL_CREDENTIALS, Check, Preflight, Result, Status
from outreach_operator.preflight.terraform import AWS_PROVIDER, check_terraform

__all__ = [
    "AWS_PROVIDER",
    "CHECKS",
    "CONCURRENCY_QUOTA_CODE",
    "EMAIL_IDENTITY_SETTING",
    "EMAIL_RATE_SETTING",
    "LOCAL_CREDENTIALS",
    "MINIMUM_UNRESERVED",
    "REPLY_DOMAIN_SETTING",
    "SES_IDENTITY_RESOURCES",
    "Check",
    "MxAnswer",
    "Preflight",
    "Result",
    "RootReader",
    "Status",
    "check_backend",
    "check_concurrency",
    "check_credentials",
    "check_email",
    "check_receiving",
    "check_root",
    "check_terraform",
    "dns_mx",
    "inbound_endpoint",
    "main",
    "receiving_regions",
    "run_checks",
]
