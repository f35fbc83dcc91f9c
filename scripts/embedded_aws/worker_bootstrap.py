"""Bootstrap of one function worker process: the local stand-in for a Lambda execution environment.

Started by the runtime as ``python -I worker_bootstrap.py <code_dir> <module.attr> <response_fd>``
with the function's environment variables. It puts the extracted deployment package first on
``sys.path``, installs the shared virtual clock into ``outreach.clock`` when the package has one,
imports the handler once (module state such as lazily created clients survives warm invocations)
and then serves one request per line on stdin, answering on ``response_fd`` (stdout and stderr stay
free for the function's own logs). Standard library only: it must not import the tooling.
"""

from __future__ import annotations

import importlib
import json
import mmap
import os
import struct
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

_OFFSET = struct.Struct("<d")


def _clock_from_env() -> Callable[[], float]:
    raw = os.environ.get("OUTREACH_LOCAL_CLOCK")
    if not raw:
        return time.time
    spec = json.loads(raw)
    scale = float(spec["scale"])
    origin_wall = float(spec["origin_wall"])
    origin_virtual = float(spec["origin_virtual"])
    handle = Path(spec["offset_path"]).open("rb")  # noqa: SIM115 - mapped for the process lifetime
    view = mmap.mmap(handle.fileno(), _OFFSET.size, access=mmap.ACCESS_READ)

    def now() -> float:
        offset = float(_OFFSET.unpack_from(view, 0)[0])
        return origin_virtual + (time.time() - origin_wall) * scale + offset

    return now


class LambdaContext:
    """The attributes and method of the Python runtime's context object that handlers use."""

    def __init__(self, spec: dict[str, Any], now: Callable[[], float]) -> None:
        self.function_name: str = spec["function_name"]
        self.function_version: str = spec.get("function_version", "$LATEST")
        self.invoked_function_arn: str = spec["invoked_function_arn"]
        self.memory_limit_in_mb: int = int(spec["memory_limit_in_mb"])
        self.aws_request_id: str = spec["aws_request_id"]
        self.log_group_name: str = spec["log_group_name"]
        self.log_stream_name: str = spec["log_stream_name"]
        self.identity = None
        self.client_context = None
        self._deadline = float(spec["deadline"])
        self._now = now

    def get_remaining_time_in_millis(self) -> int:
        return max(int((self._deadline - self._now()) * 1000), 0)


def main() -> int:
    code_dir, handler_spec, response_fd = sys.argv[1], sys.argv[2], int(sys.argv[3])
    sys.path.insert(0, code_dir)
    os.chdir(code_dir)
    now = _clock_from_env()
    out = os.fdopen(response_fd, "w", buffering=1, encoding="utf-8")

    def answer(message: dict[str, Any]) -> None:
        out.write(json.dumps(message) + "\n")
        out.flush()

    try:
        if now is not time.time:
            try:
                clock_module = importlib.import_module("outreach.clock")
            except ModuleNotFoundError:
                clock_module = None
            if clock_module is not None:
                clock_module.set_time_source(now)
        module_name, _, attr = handler_spec.rpartition(".")
        handler = getattr(importlib.import_module(module_name), attr)
    except BaseException as exc:  # an init error is reported on every invocation, as Lambda does
        init_error: dict[str, Any] | None = {
            "ok": False,
            "errorType": f"Runtime.ImportModuleError:{type(exc).__name__}",
            "errorMessage": str(exc),
            "stackTrace": traceback.format_exception(exc),
        }
        handler = None
    else:
        init_error = None
    answer({"ready": True, "init_error": init_error})

    for line in sys.stdin:
        request = json.loads(line)
        if init_error is not None:
            answer(init_error)
            continue
        context = LambdaContext(request["context"], now)
        try:
            result = handler(request["event"], context)
            payload = json.dumps(result)
        except Exception as exc:
            answer(
                {
                    "ok": False,
                    "errorType": type(exc).__name__,
                    "errorMessage": str(exc),
                    "stackTrace": traceback.format_exception(exc),
                }
            )
            continue
        answer({"ok": True, "payload": payload})
    return 0


if __name__ == "__main__":
    sys.exit(main())
