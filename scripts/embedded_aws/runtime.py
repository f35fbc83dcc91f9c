"""Function runtime: runs the applied Lambda functions from their deployed zips in worker processes.

Everything about a function comes from the emulator: handler, timeout, memory, environment and
reserved concurrency from GetFunction / GetFunctionConcurrency, the code from the zip the emulator
stored at CreateFunction (checked against the CodeSha256 that GetFunction reports). Each function has
a pool of warm worker processes (``worker_bootstrap.py``); a worker serves one invocation at a time,
keeps its module state between invocations, and is killed on timeout or crash (the next invocation
gets a cold one), as a Lambda execution environment would be.

Reserved concurrency is a limit, not a queue: an invocation that would exceed it is refused with
``ThrottledError`` (Lambda's 429 TooManyRequestsException) before it starts, and reserved concurrency 0
refuses every invocation (https://docs.aws.amazon.com/lambda/latest/dg/configuration-concurrency.html).
The reservation is read again every ``spec_ttl_seconds``, so PutFunctionConcurrency and
DeleteFunctionConcurrency made during a run take effect within that time. The local worker cap
(``max_workers_per_function``) is this machine's limit, not AWS's: past it invocations wait.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3

from embedded_aws.clock import CLOCK_ENV, VirtualClock
from embedded_aws.errors import FunctionNotFoundError, ThrottledError
from embedded_aws.function_code import extract_package, moto_code_loader
from embedded_aws.function_worker import INIT_TIMEOUT_REAL_SECONDS, Worker
from embedded_aws.runtime_records import Ending, FunctionSpec, FunctionStats, InvocationResult

__all__ = [
    "FunctionRuntime",
    "FunctionSpec",
    "FunctionStats",
    "InvocationResult",
    "extract_package",
    "moto_code_loader",
]


@dataclass
class _Pool:
    spec: FunctionSpec
    code_dir: Path
    semaphore: threading.BoundedSemaphore
    idle: list[Worker] = field(default_factory=list)
    busy: dict[str, Worker] = field(default_factory=dict)
    events: dict[str, Any] = field(default_factory=dict)


class FunctionRuntime:
    """Invokes functions deployed on the emulator, synchronously, with Lambda's execution model."""

    def __init__(
        self,
        endpoint: str,
        clock: VirtualClock,
        *,
        cache_dir: Path | None = None,
        region: str = "us-east-1",
        max_workers_per_function: int = 16,
        extra_env: Mapping[str, str] | None = None,
        code_loader: Callable[[FunctionSpec], bytes] = moto_code_loader,
        spec_ttl_seconds: float = 2.0,
    ) -> None:
        self.endpoint = endpoint
        self.clock = clock
        self.region = region
        self.max_workers_per_function = max_workers_per_function
        self.extra_env = dict(extra_env or {})
        self._code_loader = code_loader
        self._spec_ttl = spec_ttl_seconds
        self._own_cache = cache_dir is None
        self.cache_dir = cache_dir or Path(tempfile.mkdtemp(prefix="outreach-functions-"))
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        self._lambda = boto3.client(
            "lambda",
            endpoint_url=endpoint,
            region_name=region,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )
        self._lock = threading.Lock()
        self._pools: dict[str, _Pool] = {}
        self._specs: dict[str, tuple[float, FunctionSpec]] = {}
        self.stats: dict[str, FunctionStats] = {}
        self.host_provided: dict[str, list[str]] = {}
        self._closed = False

    # -- configuration ---------------------------------------------------------------------------
    def spec(self, function: str, *, fresh: bool = False) -> FunctionSpec:
        """The applied configuration of ``function`` (name or ARN), re-read every few seconds."""
        name = function.split(":")[6] if function.startswith("arn:") else function
        cached = self._specs.get(name)
        if cached and not fresh and time.monotonic() - cached[0] < self._spec_ttl:
            return cached[1]
        try:
            response = self._lambda.get_function(FunctionName=name)
            # GetFunctionConcurrency, not GetFunction's Concurrency: the emulator leaves a
            # reservation of 0 out of GetFunction, and 0 is the one value that must never be missed.
            reserved = self._lambda.get_function_concurrency(FunctionName=name).get(
                "ReservedConcurrentExecutions"
            )
        except self._lambda.exceptions.ResourceNotFoundException as exc:
            raise FunctionNotFoundError(name) from exc
        config = response["Configuration"]
        spec = FunctionSpec(
            name=config["FunctionName"],
            arn=config["FunctionArn"],
            handler=config["Handler"],
            timeout=int(config.get("Timeout", 3)),
            memory=int(config.get("MemorySize", 128)),
            environment=dict(config.get("Environment", {}).get("Variables", {})),
            code_sha256=config["CodeSha256"],
            region=config["FunctionArn"].split(":")[3],
            reserved_concurrency=None if reserved is None else int(reserved),
        )
        self._specs[name] = (time.monotonic(), spec)
        return spec

    def _code_dir(self, spec: FunctionSpec) -> Path:
        digest = base64.b64decode(spec.code_sha256).hex()
        target = self.cache_dir / digest
        if not target.exists():
            data = self._code_loader(spec)
            actual = base64.b64encode(hashlib.sha256(data).digest()).decode()
            if actual != spec.code_sha256:
                raise RuntimeError(
                    f"{spec.name}: stored code has sha256 {actual}, GetFunction reports {spec.code_sha256}"
                )
            self.host_provided[spec.name] = extract_package(data, target)
        return target

    def _pool(self, spec: FunctionSpec) -> _Pool:
        key = json.dumps(
            [spec.code_sha256, spec.handler, spec.timeout, spec.memory, sorted(spec.environment.items())]
        )
        with self._lock:
            pool = self._pools.get(spec.name)
            if pool is not None and pool.events.get("key") == key:
                return pool
            if pool is not None:  # configuration changed: new environments from now on
                for worker in pool.idle:
                    worker.close()
                pool.idle.clear()
            semaphore = pool.semaphore if pool is not None else None
            pool = _Pool(
                spec,
                self._code_dir(spec),
                semaphore or threading.BoundedSemaphore(self.max_workers_per_function),
            )
            pool.events["key"] = key
            self._pools[spec.name] = pool
            self.stats.setdefault(spec.name, FunctionStats())
            return pool

    def _env(self, spec: FunctionSpec, code_dir: Path) -> dict[str, str]:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "TZ": ":UTC",
            "LAMBDA_TASK_ROOT": str(code_dir),
            "AWS_EXECUTION_ENV": "AWS_Lambda_python3.12",
            "AWS_LAMBDA_FUNCTION_NAME": spec.name,
            "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(spec.memory),
            "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
            "AWS_LAMBDA_LOG_GROUP_NAME": f"/aws/lambda/{spec.name}",
            "AWS_LAMBDA_LOG_STREAM_NAME": f"local/{uuid.uuid4().hex}",
            "AWS_REGION": spec.region,
            "AWS_DEFAULT_REGION": spec.region,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_SESSION_TOKEN": "testing",
            "AWS_CONFIG_FILE": os.devnull,
            "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
            "AWS_EC2_METADATA_DISABLED": "true",
            "AWS_ENDPOINT_URL": self.endpoint,
            CLOCK_ENV: self.clock.to_env(),
        }
        env.update(spec.environment)
        env.update(self.extra_env)
        return env

    def _start_worker(self, pool: _Pool) -> Worker:
        spec = pool.spec
        log = self.cache_dir / f"{spec.name}.log"
        worker = Worker(spec, pool.code_dir, self._env(spec, pool.code_dir), log)
        started = time.monotonic()
        ready = worker.read_line(lambda: time.monotonic() - started > INIT_TIMEOUT_REAL_SECONDS)
        if ready is None or not ready.get("ready"):
            worker.close()
            raise RuntimeError(f"{spec.name}: worker did not start (see {log})")
        with self._lock:
            self.stats[spec.name].cold_starts += 1
        return worker

    # -- invocation ------------------------------------------------------------------------------
    def invoke(self, function: str, event: Any) -> InvocationResult:
        """Synchronous invocation (RequestResponse).

        Raises ``ThrottledError`` when the function's reserved concurrency is in use (0: always); waits
        while the local worker cap is reached.
        """
        if self._closed:
            raise RuntimeError("the function runtime is closed")
        spec = self.spec(function)
        pool = self._pool(spec)
        self._admit(spec)
        try:
            with pool.semaphore:
                return self._invoke_in_pool(pool, event)
        finally:
            with self._lock:
                self.stats[spec.name].admitted -= 1

    def _admit(self, spec: FunctionSpec) -> None:
        """Count the invocation against the reservation, or refuse it as Lambda would (429)."""
        with self._lock:
            stats = self.stats.setdefault(spec.name, FunctionStats())
            reserved = spec.reserved_concurrency
            if reserved is not None and stats.admitted >= reserved:
                stats.throttles += 1
                raise ThrottledError(spec.name, reserved)
            stats.admitted += 1

    def _invoke_in_pool(self, pool: _Pool, event: Any) -> InvocationResult:
        spec = pool.spec
        stats = self.stats[spec.name]
        request_id = str(uuid.uuid4())
        with self._lock:
            worker = pool.idle.pop() if pool.idle else None
            stats.in_flight += 1
            stats.invocations += 1
            stats.max_in_flight = max(stats.max_in_flight, stats.in_flight)
        try:
            if worker is None:
                worker = self._start_worker(pool)
            with self._lock:
                pool.busy[request_id] = worker
            started = self.clock.now()
            deadline = started + spec.timeout
            worker.send(
                {
                    "event": event,
                    "context": {
                        "function_name": spec.name,
                        "invoked_function_arn": spec.arn,
                        "memory_limit_in_mb": spec.memory,
                        "aws_request_id": request_id,
                        "log_group_name": f"/aws/lambda/{spec.name}",
                        "log_stream_name": f"local/{spec.name}",
                        "deadline": deadline,
                    },
                }
            )
            timed_out = False

            def past_deadline() -> bool:
                nonlocal timed_out
                timed_out = self.clock.now() > deadline or self._closed
                return timed_out

            answer = worker.read_line(past_deadline)
            ended = self.clock.now()
            with self._lock:
                pool.busy.pop(request_id, None)
            ending = Ending.of(answer, timed_out=timed_out)
            if answer is None:
                worker.close()
            else:
                worker.invocations += 1
                with self._lock:
                    if self._closed:
                        worker.close()
                    else:
                        pool.idle.append(worker)
            with self._lock:
                ending.count(stats)
            return ending.result(spec, request_id, answer or {}, started=started, ended=ended)
        finally:
            with self._lock:
                stats.in_flight -= 1

    # -- the clock ---------------------------------------------------------------------------------
    def advance_clock_if_idle(self, seconds: float) -> bool:
        """Jump the virtual clock ``seconds`` ahead unless an invocation is running; True when it moved.

        An invocation's deadline is virtual (``started + timeout``), so a jump while one runs would
        end it as ``Sandbox.Timedout`` although it used none of its time: an email worker killed that
        way after its claim leaves the task for the reconciler's ``delivery_unknown``. The check and
        the jump hold the lock an invocation takes to count itself in flight, before it reads its
        start time: every invocation starts either before the jump (which then waits) or after it
        (its deadline counts from the new time).
        """
        with self._lock:
            if any(stats.in_flight for stats in self.stats.values()):
                return False
            self.clock.advance(seconds)
            return True

    # -- faults and teardown -------------------------------------------------------------------
    def stats_of(self, function: str) -> FunctionStats:
        """The counters of ``function``, zero before its first invocation."""
        return self.stats.setdefault(function, FunctionStats())

    def reset_peak(self, function: str) -> None:
        """Start a new measurement of ``max_in_flight`` for ``function`` from what is in flight now."""
        with self._lock:
            stats = self.stats.setdefault(function, FunctionStats())
            stats.max_in_flight = stats.in_flight

    def in_flight_workers(self, function: str) -> list[int]:
        """PIDs of the workers currently running an invocation of ``function``."""
        with self._lock:
            pool = self._pools.get(function)
            return [] if pool is None else [w.proc.pid for w in pool.busy.values()]

    def kill_in_flight(self, function: str) -> int:
        """Kill every worker of ``function`` that is inside an invocation (a crash mid-task)."""
        with self._lock:
            pool = self._pools.get(function)
            victims = [] if pool is None else list(pool.busy.values())
        for worker in victims:
            worker.killed_on_purpose = True
            worker.kill()
        return len(victims)

    @contextlib.contextmanager
    def session(self) -> Iterator[FunctionRuntime]:
        try:
            yield self
        finally:
            self.close()

    def close(self) -> None:
        self._closed = True
        with self._lock:
            pools = list(self._pools.values())
        for pool in pools:
            for worker in pool.idle + list(pool.busy.values()):
                worker.close()
            pool.idle.clear()
        if self._own_cache:
            shutil.rmtree(self.cache_dir, ignore_errors=True)
