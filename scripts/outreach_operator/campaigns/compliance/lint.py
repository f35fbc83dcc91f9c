"""Running the campaign lint: every rule on one campaign, its waivers applied, one verdict per rule.

A rule the campaign falls under passes, fails (with its findings) or is waived (the campaign names it
under ``compliance_waivers``, with the reason, which the verdict carries and ``campaign schedule``
records on the campaign's job row). A waived rule is still checked: its findings are reported, they
only no longer refuse. ``LintReport.refused`` is what ``campaign schedule`` and ``campaign check``
stop on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from outreach_operator.campaigns.compliance.rules import RULES, Finding, Rule

if TYPE_CHECKING:
    from outreach_operator.campaigns.campaign_file import Campaign

Outcome = Literal["passed", "failed", "waived", "not_applicable"]


@dataclass(frozen=True)
class Verdict:
    """One rule on one campaign."""

    rule: Rule
    outcome: Outcome
    findings: tuple[Finding, ...] = ()
    reason: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule.name,
            "asks": self.rule.asks,
            "outcome": self.outcome,
            "findings": [{"field": f.field, "problem": f.problem} for f in self.findings],
            "waived_because": self.reason,
            "sources": list(self.rule.sources),
        }


@dataclass(frozen=True)
class LintReport:
    """Every rule's verdict on a campaign, in the rules' order."""

    verdicts: tuple[Verdict, ...]

    @property
    def refused(self) -> tuple[Verdict, ...]:
        return tuple(v for v in self.verdicts if v.outcome == "failed")

    def problems(self) -> str:
        """One line per finding that refuses, naming the field and the rule."""
        return "\n".join(
            f"{finding.field}: {finding.problem} (rule {verdict.rule.name})"
            for verdict in self.refused
            for finding in verdict.findings
        )

    def as_dicts(self) -> list[dict[str, Any]]:
        return [verdict.as_dict() for verdict in self.verdicts]


def lint_campaign(campaign: Campaign) -> LintReport:
    """Each rule's verdict on ``campaign``."""
    verdicts = []
    for rule in RULES:
        if not rule.applies(campaign):
            verdicts.append(Verdict(rule, "not_applicable"))
            continue
        findings = tuple(rule.check(campaign))
        reason = campaign.compliance_waivers.get(rule.name)
        if reason is not None:
            verdicts.append(Verdict(rule, "waived", findings, reason))
        else:
            verdicts.append(Verdict(rule, "failed" if findings else "passed", findings))
    return LintReport(tuple(verdicts))
