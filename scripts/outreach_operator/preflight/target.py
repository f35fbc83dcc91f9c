"""What every preflight check is given and gives back: the target root and account, and one result."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

import boto3

from outreach_dev.planned_root import RootPlan

# The local root's provider credentials (the embedded AWS takes any).
LOCAL_CREDENTIALS = ("test", "test")


class Status(StrEnum):
    PASS = "PASS"
    FAIL = "FAIL"
    SKIP = "SKIP"


@dataclass(frozen=True)
class Result:
    check: str
    status: Status
    detail: str
    fix: str | None = None

    def lines(self) -> list[str]:
        shown = [f"{self.status.value}  {self.check:<12} {self.detail}"]
        if self.fix:
            shown.append(f"      {'':<12} what to do: {self.fix}")
        return shown


@dataclass
class Preflight:
    """What the checks look at: one environment root and the account it would deploy to."""

    env: str
    root: Path
    endpoint_url: str | None = None
    region: str | None = None
    plan: RootPlan | None = None
    plan_error: str | None = None
    credentials_ok: bool = False
    clients: dict[str, Any] = field(default_factory=dict)

    @property
    def local(self) -> bool:
        return self.env == "local"

    def session_region(self) -> str | None:
        """The region the operator's tools use: --region, else what boto3 finds (env, profile)."""
        if self.region:
            return self.region
        if self.local and self.plan is not None:
            return self.plan.region
        return boto3.Session().region_name

    def client(self, service: str) -> Any:
        """A client in the root's region (the target), built once per service."""
        if service not in self.clients:
            region = (self.plan.region if self.plan else None) or self.session_region()
            key, secret = LOCAL_CREDENTIALS if self.local else (None, None)
            session = boto3.Session(region_name=region, aws_access_key_id=key, aws_secret_access_key=secret)
            make_client: Callable[..., Any] = session.client
            self.clients[service] = make_client(service, endpoint_url=self.endpoint_url)
        return self.clients[service]


Check = Callable[[Preflight], Result]
