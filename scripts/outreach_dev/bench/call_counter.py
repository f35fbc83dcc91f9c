"""Counting AWS calls by service and operation, through botocore's ``before-call`` event.

Every client created from boto3's default session (the handlers' clients are) emits
``before-call.<service>.<operation>`` once per API call, before botocore's own retries; moto
answers every call at once, so here one event is one billed request.
https://boto3.amazonaws.com/v1/documentation/api/latest/guide/events.html
"""

from __future__ import annotations

import contextlib
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import boto3

from outreach_dev.bench.cost_model import dynamodb_items_written, dynamodb_units


class CallCount:
    """Calls seen while counting, keyed ``service:Operation`` (``dynamodb:TransactWriteItems``), and
    the DynamoDB request units they are billed (see :func:`cost_model.dynamodb_units`)."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.write_units = 0.0
        self.items_written = 0
        # Wall time from each call's before-call to its after-call (moto answers in-process, so this
        # is the time the call itself took, serialising and parsing included).
        self.seconds_in_calls = 0.0
        self.read_units = 0.0
        # Items DynamoDB read for Query and Scan calls (their ``ScannedCount``, before any filter).
        self.items_read = 0
        # perf_counter() when the last call of each ``service:Operation`` returned.
        self.last_return: dict[str, float] = {}
        self.active = False

    def _on_call(self, model: Any, context: Any = None, **_: Any) -> None:  # before-call
        if self.active:
            self.calls[f"{model.service_model.endpoint_prefix}:{model.name}"] += 1
            if isinstance(context, dict):
                context["bench_started"] = time.perf_counter()

    def _after_call(self, model: Any, http_response: Any, **kwargs: Any) -> None:
        if not self.active:
            return
        context = kwargs.get("context", {})
        if "bench_started" in context:
            self.seconds_in_calls += time.perf_counter() - context.pop("bench_started")
        self.last_return[f"{model.service_model.endpoint_prefix}:{model.name}"] = time.perf_counter()
        if model.service_model.endpoint_prefix != "dynamodb":
            return
        parsed = kwargs.get("parsed")
        if model.name in ("Query", "Scan") and isinstance(parsed, dict):
            self.items_read += int(parsed.get("ScannedCount", 0))
        params = context.get("bench_params", {})
        writes, reads = dynamodb_units(model.name, params, len(getattr(http_response, "content", b"") or b""))
        self.write_units += writes
        self.items_written += dynamodb_items_written(model.name, params)
        self.read_units += reads

    def _keep_params(self, params: Any, context: Any, **_: Any) -> None:
        if self.active and isinstance(context, dict):
            context["bench_params"] = params

    @contextlib.contextmanager
    def counting(self) -> Iterator[None]:
        """Count only inside this block (the benchmark's own set-up calls stay out)."""
        self.active = True
        try:
            yield
        finally:
            self.active = False

    def service_total(self, service: str) -> int:
        return sum(count for key, count in self.calls.items() if key.split(":", 1)[0] == service)


_HOOKS = ("before-call.*.*", "provide-client-params.dynamodb.*", "after-call.*.*")
_current: list[CallCount] = []


def _forward(event_name: str, **kwargs: Any) -> None:
    if not _current:
        return
    count = _current[-1]
    if event_name.startswith("before-call."):
        count._on_call(**kwargs)
    elif event_name.startswith("provide-client-params."):
        count._keep_params(**kwargs)
    else:
        count._after_call(**kwargs)


def install() -> None:
    """Hook boto3's default session once; clients copy its hooks when created, so call this first."""
    if boto3.DEFAULT_SESSION is None:
        boto3.setup_default_session()
    assert boto3.DEFAULT_SESSION is not None
    events = boto3.DEFAULT_SESSION.events
    for event in _HOOKS:
        events.register(event, _forward, unique_id=f"outreach-bench-{event}")


@contextlib.contextmanager
def call_count() -> Iterator[CallCount]:
    """A fresh count, fed by the hooks :func:`install` put on clients created after it."""
    install()
    count = CallCount()
    _current.append(count)
    try:
        yield count
    finally:
        _current.remove(count)
