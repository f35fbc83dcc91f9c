"""Run the scenario rows' unit tests in a child pytest with the AWS operation recorder loaded.

A child process, so the recorder wraps the core's client factory before any test imports a handler
and the unit tests run with their own fixtures exactly as ``make test`` runs them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from outreach_dev import terraform_cli
from tests.iam.scenarios import FunctionScenarios
from tests.support import aws_operation_recorder

RECORDER_PLUGIN = aws_operation_recorder.__name__
# The handlers' unit tests take about four minutes on a quiet two-core machine; the deadline leaves a
# loaded one room (the first test that needs the evidence waits as long: conftest.EVIDENCE_TIMEOUT).
TIMEOUT_SECONDS = 900


class RecordingFailed(RuntimeError):
    """The unit tests behind the recording did not all pass, so the recording is incomplete."""


class Recording:
    def __init__(self, rows: Sequence[FunctionScenarios], output: Path) -> None:
        self.output = output
        tests = sorted({test for row in rows for test in row.tests})
        repo = terraform_cli.REPO
        environment = dict(os.environ)
        environment.update(
            {
                aws_operation_recorder.FILE_VARIABLE: str(output),
                aws_operation_recorder.HANDLERS_VARIABLE: ",".join(row.handler_module for row in rows),
                "PYTHONPATH": os.pathsep.join(str(repo / p) for p in ("functions", "scripts", ".")),
            }
        )
        command = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            RECORDER_PLUGIN,
            *tests,
        ]
        self.process = subprocess.Popen(
            command, cwd=repo, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )

    def records(self) -> list[dict[str, Any]]:
        """Wait for the child run; its records, once every one of its tests passed."""
        output, _ = self.process.communicate(timeout=TIMEOUT_SECONDS)
        if self.process.returncode != 0:
            raise RecordingFailed(f"unit tests failed (exit {self.process.returncode}):\n{output[-4000:]}")
        return list(json.loads(self.output.read_text()))
