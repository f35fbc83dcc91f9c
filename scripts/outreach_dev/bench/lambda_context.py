"""A Lambda context for calling handlers in-process: the memory Terraform gives them, a deadline far off."""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass
class BenchContext:
    function_name: str = "outreach-bench"
    memory_limit_in_mb: int = 1536
    invoked_function_arn: str = "arn:aws:lambda:eu-central-1:123456789012:function:outreach-bench"
    aws_request_id: str = "00000000-0000-0000-0000-000000000000"
    timeout_seconds: float = 420.0
    started: float = field(default_factory=time.monotonic)

    def get_remaining_time_in_millis(self) -> int:
        return int(max(0.0, self.timeout_seconds - (time.monotonic() - self.started)) * 1000)
