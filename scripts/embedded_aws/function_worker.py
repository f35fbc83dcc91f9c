"""One warm worker process of a function: it serves one invocation at a time over a pipe.

The process runs ``worker_bootstrap.py`` with the function's code directory and handler; requests go
to its stdin as JSON lines and answers come back, one line each, on a pipe of their own (the
function's own output goes to the log file).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from embedded_aws.runtime_records import FunctionSpec

BOOTSTRAP = Path(__file__).with_name("worker_bootstrap.py")
INIT_TIMEOUT_REAL_SECONDS = 120.0


class Worker:
    """A worker process, its request pipe (stdin) and the pipe its answers come back on."""

    def __init__(self, spec: FunctionSpec, code_dir: Path, env: dict[str, str], log: Path) -> None:
        self.spec = spec
        read_fd, write_fd = os.pipe()
        self._log = log.open("ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-I", str(BOOTSTRAP), str(code_dir), spec.handler, str(write_fd)],
            stdin=subprocess.PIPE,
            stdout=self._log,
            stderr=self._log,
            env=env,
            pass_fds=(write_fd,),
            cwd=str(code_dir),
        )
        os.close(write_fd)
        self._fd = read_fd
        self._buffer = b""
        self.killed_on_purpose = False
        self.invocations = 0

    def read_line(self, until: Callable[[], bool]) -> dict[str, Any] | None:
        """One response line; None on EOF (the process died) or when ``until()`` says stop waiting."""
        while b"\n" not in self._buffer:
            if until():
                return None
            ready, _, _ = select.select([self._fd], [], [], 0.02)
            if not ready:
                continue
            chunk = os.read(self._fd, 65536)
            if not chunk:
                return None
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        parsed: dict[str, Any] = json.loads(line)
        return parsed

    def send(self, request: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(request) + "\n").encode())
        self.proc.stdin.flush()

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)

    def close(self) -> None:
        self.kill()
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        with contextlib.suppress(OSError):
            os.close(self._fd)
        self._log.close()
