"""The local root applied twice on one embedded AWS: lambda mode, and pipe mode with replies on.

Two applies of ``terraform/environments/local`` side by side on one in-process moto server: one with
the dispatcher function (lambda mode, replies off, as prod's default), one with the EventBridge Pipe
(pipe mode) and ``inbound_reply_domain`` set, so that the receipt rule set, bucket, topic, queue and
processor of modules/email-inbound are applied too. Only one receipt rule set can be active in an
account and Region, so replies are on in one of the two. ``conftest.py`` makes it a package
fixture: the tests of ``test_local_apply.py`` and ``test_local_apply_inbound.py`` share it and run
on one worker (``tests/support/worker_groups.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import boto3
import pytest

from embedded_aws.server import embedded_aws, reset_backends
from outreach_dev import terraform_cli
from tests.support.packages import code_only_packages

REGION = "eu-central-1"
LOCAL_ROOT = terraform_cli.ENVIRONMENTS_DIR / "local"
LAMBDA_ENV = "tfapply"
PIPE_ENV = "tfapply-pipe"
REPLY_DOMAIN = "reply.outreach.test"
UNMATCHED = "sales@outreach.test"


@dataclass(frozen=True)
class Applied:
    endpoint: str
    lambda_mode: dict[str, Any]
    pipe_mode: dict[str, Any]

    def client(self, service: str) -> Any:
        make_client: Callable[..., Any] = boto3.client
        return make_client(
            service,
            endpoint_url=self.endpoint,
            region_name=REGION,
            aws_access_key_id="test",
            aws_secret_access_key="test",
        )


@contextmanager
def applied_local_root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Applied]:
    """Both applies, yielded once done; the server is emptied afterwards."""
    packages = code_only_packages(tmp_path_factory.mktemp("packages"))
    with embedded_aws() as endpoint:
        reset_backends(endpoint)

        def apply(environment: str, variables: dict[str, str]) -> dict[str, Any]:
            root = terraform_cli.copy_configuration(LOCAL_ROOT, tmp_path_factory.mktemp(environment))
            return terraform_cli.apply_root(
                root,
                variables={
                    "endpoint": endpoint,
                    "environment": environment,
                    "package_dir": str(packages),
                    # One emulated account holds both stacks: each its own SES identity.
                    "email_sender_identity": f"{environment}.outreach.test",
                    **variables,
                },
            )

        try:
            with ThreadPoolExecutor(max_workers=2) as pool:
                lambda_run = pool.submit(apply, LAMBDA_ENV, {"dispatch_mode": "lambda"})
                pipe_run = pool.submit(
                    apply,
                    PIPE_ENV,
                    {
                        "dispatch_mode": "pipe",
                        "inbound_reply_domain": REPLY_DOMAIN,
                        "inbound_unmatched_forward_to": UNMATCHED,
                    },
                )
                yield Applied(endpoint, lambda_run.result(), pipe_run.result())
        finally:
            reset_backends(endpoint)
