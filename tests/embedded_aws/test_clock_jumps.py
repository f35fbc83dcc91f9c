"""A jump of the virtual clock never lands inside a running invocation.

An invocation's deadline is virtual (``started + timeout``, Lambda's function timeout:
https://docs.aws.amazon.com/lambda/latest/dg/configuration-timeout.html). The drivers that skip idle
virtual time (``LocalPipeline.wait_terminal``, ``make local``'s campaign loop) used to check for work in
flight and then jump: an invocation that started between the two lost its whole timeout at once and
ended ``Sandbox.Timedout``, an email worker after its claim leaving its task to ``delivery_unknown``.
``FunctionRuntime.advance_clock_if_idle`` checks and jumps under the lock every invocation takes to
start.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from embedded_aws.base import Journal
from embedded_aws.clock import VirtualClock
from embedded_aws.pipeline import LocalPipeline
from embedded_aws.runtime import FunctionRuntime, InvocationResult
from tests.embedded_aws.conftest import Lab, wait_for
from tests.embedded_aws.held_function import HELD_TIMEOUT, Gate, held_function

pytestmark = pytest.mark.e2e

# A jump far past the held function's timeout: a jump taken while it runs ends it.
JUMP = 2.0 * HELD_TIMEOUT


@pytest.fixture
def gate(tmp_path: Path) -> Iterator[Gate]:
    opened = Gate(tmp_path)
    yield opened
    opened.open()  # never leave a worker waiting


def _in_background(runtime: FunctionRuntime, function: str) -> list[InvocationResult]:
    results: list[InvocationResult] = []
    threading.Thread(target=lambda: results.append(runtime.invoke(function, {})), daemon=True).start()
    return results


def test_the_clock_does_not_jump_while_an_invocation_runs_and_jumps_once_it_ended(
    lab: Lab, runtime: FunctionRuntime, clock: VirtualClock, gate: Gate
) -> None:
    # GIVEN an invocation running (its handler has started)
    fn = held_function(lab, "held", gate, reserved=None)
    running = _in_background(runtime, fn)
    wait_for(lambda: len(lab.invocations()) == 1)
    # WHEN a jump past its timeout is asked for
    # THEN it is refused, and the invocation ends on its own, not timed out
    assert runtime.advance_clock_if_idle(JUMP) is False
    assert clock.offset() == 0.0
    gate.open()
    wait_for(lambda: len(running) == 1)
    assert running[0].ok, running[0]
    # AND with nothing running the same jump is taken
    assert runtime.advance_clock_if_idle(JUMP) is True
    assert clock.offset() == JUMP


def test_waiting_for_a_job_never_jumps_over_an_invocation_that_started_after_the_busy_check(
    lab: Lab, runtime: FunctionRuntime, clock: VirtualClock, gate: Gate, tmp_path: Path
) -> None:
    # GIVEN a pipeline whose busy check sees nothing running, and an invocation that starts right after
    # the check looked (the scheduler firing an email worker in that instant)
    fn = held_function(lab, "held", gate, reserved=None)
    stack = LocalPipeline(
        endpoint=lab.endpoint,
        region="us-east-1",
        clock=clock,
        outputs={},
        runtime=runtime,
        cloud=None,  # type: ignore[arg-type]
        farm=None,  # type: ignore[arg-type]
        journal=Journal(),
        state=tmp_path,
    )
    running: list[InvocationResult] = []
    checks: list[bool] = []

    def busy() -> bool:
        if not checks:
            threading.Thread(target=lambda: running.append(runtime.invoke(fn, {})), daemon=True).start()
            wait_for(lambda: len(lab.invocations()) == 1)
        checks.append(False)
        return False

    def counts(job_id: str) -> dict[str, Any]:
        if len(checks) >= 2:  # the idle skip was tried twice while it ran: let it end
            gate.open()
        return {"Finished": 1} if running else {"Running": 1}

    stack.busy = busy  # type: ignore[method-assign]
    stack.job_counts = counts  # type: ignore[method-assign]
    # WHEN the job is followed with an idle skip far past the function's timeout, no settle time
    stack.wait_terminal("job", timeout=60.0, idle_skip=JUMP, settle=0.0, interval=0.05)
    # THEN the invocation ended on its own: the clock did not jump while it ran
    assert running[0].ok, running[0]
    assert runtime.stats_of("held").timeouts == 0
