"""moto server in-process on loopback, with moto's own push-to-Lambda delivery turned off.

moto delivers event source mappings by pushing records into Docker Lambdas; with no Docker engine it
drops them (and for SQS it first receives the messages, bumping their receive count). Here mappings
are still created, listed and described through the Lambda API, but never registered on the queue,
table or stream, so records stay where they are until the project's pollers deliver them.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import socket
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from embedded_aws.clock import VirtualClock, install_in_moto
from embedded_aws.cloudwatch_alarm_state import start_alarms_without_data
from embedded_aws.dynamodb_condition_parses import remember_condition_parses
from embedded_aws.dynamodb_indexed_query import query_one_partition
from embedded_aws.dynamodb_partition_throttling import partition_throttling as throttled_partitions
from embedded_aws.dynamodb_query_projection import project_top_level_names_directly
from embedded_aws.dynamodb_read_isolation import isolate_dynamodb_reads
from embedded_aws.dynamodb_response_items import write_dynamodb_items_directly
from embedded_aws.dynamodb_size_limits import enforce_dynamodb_size_limits
from embedded_aws.dynamodb_stream_images import write_stream_images_when_read
from embedded_aws.dynamodb_transactions import make_transactions_atomic
from embedded_aws.dynamodb_update_names import remember_update_expression_parses
from embedded_aws.event_bus import support_event_pattern_rules
from embedded_aws.filter_validation import refuse_invalid_filter_patterns
from embedded_aws.kms_hmac_keys import support_hmac_keys
from embedded_aws.lambda_account_settings import report_account_settings
from embedded_aws.lambda_function_urls import support_function_urls
from embedded_aws.lambda_permission_statements import store_permission_conditions
from embedded_aws.scheduler_client_token import honour_schedule_client_tokens
from embedded_aws.scheduler_thread_safety import make_scheduler_thread_safe
from embedded_aws.service_quotas import support_list_service_quotas
from embedded_aws.ses_account import report_ses_account
from embedded_aws.ses_v2 import support_ses_v2
from embedded_aws.sqs_fair_queues import share_standard_queues_fairly
from embedded_aws.sqs_message_move import support_message_move_tasks
from embedded_aws.sqs_pending_groups import read_pending_groups_from_a_snapshot
from embedded_aws.sqs_queue_scans import scan_queues_with_one_clock_read
from embedded_aws.sqs_redrive_allow_policy import keep_redrive_allow_policies

DEFAULT_PORT = 4566


class _DiscardingRegistry(dict[str, Any]):
    """A mapping registry that accepts registrations and keeps none of them."""

    def __setitem__(self, key: str, value: Any) -> None:
        return None


def _without_push(init: Callable[..., None]) -> Callable[..., None]:
    @functools.wraps(init)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        self.lambda_event_source_mappings = _DiscardingRegistry()

    wrapper.__outreach_no_push__ = True  # type: ignore[attr-defined]
    return wrapper


def disable_lambda_push() -> None:
    """Patch moto's queue, table and Kinesis stream models so mappings never push. Idempotent."""
    from moto.dynamodb.models.table import Table
    from moto.kinesis.models import Stream
    from moto.sqs.models import Queue

    for model in (Queue, Table, Stream):
        if not getattr(model.__init__, "__outreach_no_push__", False):
            model.__init__ = _without_push(model.__init__)  # type: ignore[method-assign]


def _secure_transport_holds(condition: Any) -> bool:
    """True when a statement's condition is only about ``aws:SecureTransport`` being false."""
    if not isinstance(condition, dict) or set(condition) != {"Bool"}:
        return False
    keys = {k.lower(): str(v).lower() for k, v in condition["Bool"].items()}
    return keys == {"aws:securetransport": "false"} or keys == {"aws:securetransport": "['false']"}


def evaluate_bucket_policies_as_tls() -> None:
    """Make moto evaluate bucket policies as for a request over TLS. Idempotent.

    moto ignores policy conditions, so the usual "deny everything unless aws:SecureTransport" statement
    denies every request. The emulator stands in for AWS's TLS endpoints: statements that only deny
    insecure transport are left out of the evaluation; every other statement still applies.
    """
    from moto.s3.models import FakeBucket

    if getattr(FakeBucket.get_permission, "__outreach_tls__", False):
        return
    original = FakeBucket.get_permission

    def get_permission(self: Any, action: str, resource: str) -> Any:
        if self.policy is None:
            return original(self, action, resource)
        import json

        document = json.loads(self.policy.decode())
        statements = document.get("Statement", [])
        if isinstance(statements, dict):
            statements = [statements]
        kept = [
            st
            for st in statements
            if not (st.get("Effect") == "Deny" and _secure_transport_holds(st.get("Condition")))
        ]
        if len(kept) == len(statements):
            return original(self, action, resource)
        from moto.iam.access_control import IAMPolicy, PermissionResult

        if not kept:
            return PermissionResult.NEUTRAL
        return IAMPolicy(json.dumps({**document, "Statement": kept})).is_action_permitted(action, resource)

    get_permission.__outreach_tls__ = True  # type: ignore[attr-defined]
    FakeBucket.get_permission = get_permission  # type: ignore[method-assign]


def list_moto_services_once() -> None:
    """Read moto's list of service packages once, not on every request. Idempotent.

    moto's server finds the backend of a request by listing its own package folder and checking every
    entry with ``isdir``: a couple of hundred file-system calls per request, a tenth of the emulator's
    time when sixteen scrapers and their pollers call it at once. The folder does not change while the
    server runs.
    """
    from moto import backends

    if getattr(backends.list_of_moto_modules, "__outreach_once__", False):
        return
    services = tuple(backends.list_of_moto_modules())

    def listed() -> tuple[str, ...]:
        return services

    listed.__outreach_once__ = True  # type: ignore[attr-defined]
    backends.list_of_moto_modules = listed


def reset_backends(endpoint: str) -> None:
    """Clear every moto backend of this process (moto's ``POST /moto-api/reset``): no resource made
    before is seen after."""
    request = urllib.request.Request(f"{endpoint}/moto-api/reset", method="POST")
    with urllib.request.urlopen(request, timeout=30) as response:
        if response.status != 200:
            raise RuntimeError(f"moto's reset at {endpoint} answered {response.status}")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def embedded_aws(
    port: int | None = None, clock: VirtualClock | None = None, *, partition_throttling: bool = False
) -> Iterator[str]:
    """Run moto server on 127.0.0.1 for the duration of the block; yields its endpoint URL.

    The block starts on an empty account: moto keeps its backends in the process, so whatever an
    earlier server of this process made (an e2e stack before this one, a test's resources) is reset
    first through moto's own ``/moto-api/reset``.

    With ``clock`` every time moto keeps (visibility timeouts, timestamps) follows that virtual clock.
    With ``partition_throttling`` writes past 1,000 write units a second to one partition key of a
    table or index are throttled (``dynamodb_partition_throttling``, per second of ``clock``).
    """
    from moto.server import ThreadedMotoServer

    disable_lambda_push()
    list_moto_services_once()
    evaluate_bucket_policies_as_tls()
    make_transactions_atomic()
    isolate_dynamodb_reads()
    query_one_partition()
    enforce_dynamodb_size_limits()
    write_dynamodb_items_directly()
    project_top_level_names_directly()
    remember_condition_parses()
    write_stream_images_when_read()
    remember_update_expression_parses()
    support_message_move_tasks()
    keep_redrive_allow_policies()
    scan_queues_with_one_clock_read()
    share_standard_queues_fairly()
    read_pending_groups_from_a_snapshot()
    refuse_invalid_filter_patterns()
    report_account_settings()
    support_function_urls()
    store_permission_conditions()
    support_hmac_keys()
    report_ses_account()
    support_ses_v2()
    support_list_service_quotas()
    support_event_pattern_rules()
    start_alarms_without_data()
    honour_schedule_client_tokens()
    make_scheduler_thread_safe()
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    if clock is not None:
        install_in_moto(clock)
    chosen = port if port is not None else free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=chosen, verbose=False)
    server.start()
    reset_backends(f"http://127.0.0.1:{chosen}")
    try:
        with throttled_partitions() if partition_throttling else contextlib.nullcontext():
            yield f"http://127.0.0.1:{chosen}"
    finally:
        server.stop()
        if clock is not None:
            install_in_moto(None)
