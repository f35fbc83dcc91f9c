"""``campaign check``: the campaign lint on one file, each rule's verdict, and the view of a verdict.

Exit 0 when no rule refuses (passed, waived with its reason, or not applicable), 2 when one does: the
same refusal ``campaign schedule`` stops on before it plans anything.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from outreach_operator.campaigns.campaign_file import Campaign, CampaignFileError, load_campaign
from outreach_operator.campaigns.compliance.lint import LintReport, lint_campaign
from outreach_operator.cli.output import BadInput, Session, table


def load_checked(path: Path) -> tuple[Campaign, LintReport]:
    """The campaign of ``path`` and its lint report; ``BadInput`` for a file that is not a campaign."""
    try:
        campaign = load_campaign(path)
    except CampaignFileError as exc:
        raise BadInput(str(exc)) from exc
    return campaign, lint_campaign(campaign)


def refusal(path: Path, lint: LintReport) -> BadInput:
    """The error for a campaign the lint refuses: every finding with its field and rule."""
    return BadInput(
        f"{path}: refused by the campaign lint (turn a rule off only under compliance_waivers, "
        f"with the reason)\n{lint.problems()}"
    )


def render_lint(console: Console, lint: list[dict[str, Any]]) -> None:
    rows = []
    for verdict in lint:
        found = "; ".join(f"{f['field']}: {f['problem']}" for f in verdict["findings"])
        why = f"waived: {verdict['waived_because']}" if verdict["waived_because"] else found
        rows.append([verdict["rule"], verdict["outcome"], why, verdict["sources"][0]])
    console.print(table("campaign lint", ["rule", "outcome", "findings", "source"], rows))


def check_campaign(s: Session, path: Path) -> None:
    """Print every rule's verdict on the campaign file; ``BadInput`` (exit 2) when one refuses it."""
    campaign, lint = load_checked(path)
    report: dict[str, Any] = {
        "campaign_id": campaign.campaign_id,
        "campaign": str(path),
        "lint": lint.as_dicts(),
        "refused": [verdict.rule.name for verdict in lint.refused],
    }
    s.emit(report, lambda console: render_lint(console, report["lint"]))
    if lint.refused:
        raise refusal(path, lint)
