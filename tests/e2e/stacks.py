"""Which of two e2e stacks a scenario runs on, so that the scenarios' waits are shared by two workers.

The e2e stack (tests/e2e/conftest.py, package scope) is built once in each pytest-xdist worker that
runs one of its scenarios, and every scenario of one worker group runs on one worker
(tests/support/worker_groups.py). A scenario module marked with ``SECOND_STACK`` joins the second
group, so ``make pytest`` runs the scenarios on two workers, each with a stack of its own, instead
of one after another on one: the scenarios wait mostly on virtual time and the applies' waits, so a
second stack's start (about 70 s of CPU) buys more wall time than it costs (docs/ci.md, "The e2e
stacks"). In one process (``-n 0``, or both groups sent to one worker) one stack serves both.

The second group holds the campaigns and the reconciler's scenarios; the split is by the scenarios'
measured time (docs/ci.md), not by what they test.
"""

from __future__ import annotations

import pytest

SECOND_STACK_GROUP = "tests/e2e#second-stack"
SECOND_STACK = pytest.mark.xdist_group(SECOND_STACK_GROUP)
