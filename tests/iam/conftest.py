"""The evidence the IAM tests share: the planned prod roles and the handlers' recorded operations.

Both are produced once per session. The operations come from this run's own run of the handlers'
unit tests when it held them all (tests/iam/session_recording.py); otherwise a child pytest run
records them, started first so that Terraform plans the roles while it runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from tests.iam import planned_roles, session_recording
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
def evidence(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Evidence:
    workdir = tmp_path_factory.mktemp("least-privilege")
    in_session = request.config.pluginmanager.get_plugin(session_recording.NAME)
    if isinstance(in_session, session_recording.SessionRecording) and in_session.why_not_complete() is None:
        records = in_session.records()
        return Evidence(planned_roles.plan_prod(workdir / "plan"), records)
    recording = Recording(FUNCTIONS, workdir / "operations.json")
    try:
        plan = planned_roles.plan_prod(workdir / "plan")
    except BaseException:
        recording.process.kill()
        recording.process.wait()
        raise
    return Evidence(plan, recording.records())
