"""A Lambda context for handler tests: the benchmarks' in-process context under the test function's name."""

from __future__ import annotations

from dataclasses import dataclass

from outreach_dev.bench.lambda_context import BenchContext


@dataclass
class FakeContext(BenchContext):
    function_name: str = "outreach-test"
    invoked_function_arn: str = "arn:aws:lambda:eu-central-1:123456789012:function:outreach-test"
