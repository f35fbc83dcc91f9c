"""The evidence the IAM tests share: the planned prod roles and the handlers' recorded operations.

Both are produced once per session and side by side: the child pytest run that records the
operations starts first, and Terraform plans the roles while it runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from tests.iam import planned_roles
from tests.iam.planned_roles import Plan
from tests.iam.recording import TIMEOUT_SECONDS, Recording
from tests.iam.scenarios import FUNCTIONS

# The first test that asks for the evidence waits for the recording and the plan: its timeout is
# theirs (the recording's deadline plus the plan's few minutes), not pytest's default.
EVIDENCE_TIMEOUT = TIMEOUT_SECONDS + 300


@dataclass(frozen=True)
class Evidence:
    plan: Plan
    records: list[dict[str, Any]]


@pytest.fixture(scope="session")
def evidence(tmp_path_factory: pytest.TempPathFactory) -> Evidence:
    workdir = tmp_path_factory.mktemp("least-privilege")
    recording = Recording(FUNCTIONS, workdir / "operations.json")
    try:
        plan = planned_roles.plan_prod(workdir / "plan")
    except BaseException:
        recording.process.kill()
        recording.process.wait()
        raise
    return Evidence(plan, recording.records())
