"""`make upgrade-check REV=<rev>`: whether the working tree's Terraform destroys what a revision applied.

    python -m outreach_dev.upgrade_check --rev f0d0155                 # dev, prod and local
    python -m outreach_dev.upgrade_check --rev v1.2 --root prod --json

For each root, the revision's own tree (``git archive``, its own ``make package``) is applied to one
embedded AWS with its state in a scratch directory; then the same root of the working tree (its
uncommitted changes included, its own zips) is planned against that state and emulator, with the same
variables, and ``terraform show -json`` of the plan is read (outreach_dev.plan_changes). Every
address the plan deletes or replaces is listed, beside the moves, updates and creates.

Exit codes follow the ``outreach`` command's (outreach_operator/cli/output.py): 0 no root plans to
destroy anything; 1 a root does (or the working tree's root does not plan); 2 the check could not be
set up (an unknown revision or root, a tree that does not package, a revision's root that does not
apply). Tables go to stdout, progress to stderr; ``--json`` prints one document to stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from python_terraform import IsFlagged
from rich.console import Console

from embedded_aws.server import embedded_aws
from outreach_dev import terraform_cli, upgrade_trees
from outreach_dev.plan_changes import KINDS, PlanChanges, ResourceChange, read_plan
from outreach_dev.planned_root import first_error
from outreach_dev.upgrade_trees import Tree, UpgradeCheckError
from outreach_operator.cli.output import EXIT_BAD_INPUT, EXIT_DONE, EXIT_FAILED, table

DEFAULT_ROOTS = ("dev", "prod", "local")
PLAN_FILE = "upgrade.tfplan"
# Two roots at a time: each terraform process loads the ~700 MB provider binary.
PARALLEL_ROOTS = 2


@dataclass(frozen=True)
class RootResult:
    """What the working tree's plan of one root does to the revision's state of it."""

    name: str
    changes: PlanChanges | None = None
    # Why the working tree's root did not plan (None: it planned).
    error: str | None = None

    @property
    def destroys(self) -> bool:
        return self.error is not None or bool(self.changes and self.changes.destroyed)

    def as_json(self) -> dict[str, Any]:
        changes = self.changes or PlanChanges()
        return {
            "error": self.error,
            "counts": changes.counts(),
            "destroyed": [c.address for c in changes.destroyed],
            "moved": [{"from": c.previous_address, "to": c.address} for c in changes.moved],
            "changes": [c.as_json() for c in changes.changes],
        }


class Progress:
    """Lines on stderr as the check goes, each with the seconds since it started."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.console = Console(stderr=True, soft_wrap=True, highlight=False, markup=False)

    def __call__(self, text: str) -> None:
        self.console.print(f"[{time.monotonic() - self.started:6.1f}s] {text}")


def _each(action: Callable[[str], Any], names: Sequence[str]) -> dict[str, Any]:
    with ThreadPoolExecutor(max_workers=PARALLEL_ROOTS) as pool:
        runs = {name: pool.submit(action, name) for name in names}
        return {name: run.result() for name, run in runs.items()}


def _apply_revision(tree: Tree, names: Sequence[str], endpoint: str, work: Path, note: Progress) -> None:
    packages = upgrade_trees.stage_packages(sorted(tree.dist.glob("*.zip")), work / "packages")

    def apply(name: str) -> None:
        root, variables = upgrade_trees.prepare_root(tree, name, endpoint, packages)
        try:
            terraform_cli.apply_root(root, variables=variables, state=work / "state" / f"{name}.tfstate")
        except terraform_cli.TerraformError as exc:
            raise UpgradeCheckError(
                f"{tree.label}'s {name} root did not apply: {first_error(str(exc))}"
            ) from exc
        note(f"{name}: applied {tree.label}")

    _each(apply, names)


def _plan_working_tree(
    tree: Tree, names: Sequence[str], endpoint: str, work: Path, note: Progress
) -> dict[str, RootResult]:
    packages = upgrade_trees.stage_packages(sorted(tree.dist.glob("*.zip")), work / "packages")

    def plan(name: str) -> RootResult:
        root, variables = upgrade_trees.prepare_root(tree, name, endpoint, packages)
        state = str(work / "state" / f"{name}.tfstate")
        var_args = [f"-var={key}={value}" for key, value in sorted(variables.items())]
        try:
            terraform_cli.init(root, lockfile_readonly=True)
            terraform_cli.run(
                root,
                "plan",
                *var_args,
                input=False,
                no_color=IsFlagged,
                parallelism=20,
                out=PLAN_FILE,
                state=state,
            )
            shown = terraform_cli.run(root, "show", PLAN_FILE, json=IsFlagged, no_color=IsFlagged)
        except terraform_cli.TerraformError as exc:
            note(f"{name}: the {tree.label} did not plan")
            return RootResult(name, error=first_error(str(exc)))
        changes = read_plan(json.loads(shown.stdout))
        counts = ", ".join(f"{n} {kind}" for kind, n in changes.counts().items() if n)
        note(f"{name}: planned the {tree.label}: {counts or 'no changes'}")
        return RootResult(name, changes=changes)

    results: dict[str, RootResult] = _each(plan, names)
    return results


def check(rev: str, names: Sequence[str], work: Path, note: Progress) -> tuple[str, dict[str, RootResult]]:
    """Apply ``rev``'s roots, plan the working tree's against them; the commit and each root's result."""
    commit = upgrade_trees.resolve(rev)
    old = upgrade_trees.export_revision(commit, work / "revision")
    current = upgrade_trees.copy_working_tree(work / "working-tree")
    for tree in (old, current):
        for name in names:
            tree.root(name)
    note(f"exported {commit[:12]} and copied the working tree to {work}")
    for tree in (old, current):
        zips = upgrade_trees.package(tree)
        note(f"packaged {tree.label}: {', '.join(z.name for z in zips)}")
    (work / "state").mkdir()
    with embedded_aws() as endpoint:
        note(f"embedded AWS on {endpoint}; applying {', '.join(names)} of {old.label}")
        _apply_revision(old, names, endpoint, work, note)
        results = _plan_working_tree(current, names, endpoint, work, note)
    return commit, results


def _row(change: ResourceChange) -> list[str]:
    paths = ", ".join(".".join(str(step) for step in path) for path in change.replace_paths)
    parts = (
        change.reason,
        f"forced by {paths}" if paths else "",
        f"changes {', '.join(change.updated)}" if change.updated else "",
    )
    detail = "; ".join(part for part in parts if part)
    return [change.kind, change.address, change.previous_address or "", detail]


def render(commit: str, results: dict[str, RootResult], console: Console) -> None:
    for name, result in results.items():
        if result.error is not None:
            console.print(f"[bold red]{name}[/]: the working tree's root does not plan: {result.error}")
            continue
        changes = result.changes or PlanChanges()
        ordered = [c for kind in KINDS for c in changes.of_kind(kind)]
        title = f"{name}: working tree planned against {commit[:12]}'s state"
        if ordered:
            console.print(
                table(title, ["change", "address", "moved from", "why"], [_row(c) for c in ordered])
            )
        else:
            console.print(f"{title}: no changes")
    destroying = [name for name, result in results.items() if result.destroys]
    if destroying:
        console.print(
            f"[bold red]DESTROYS[/] in {', '.join(destroying)}: read the rows marked replace or delete"
        )
    else:
        console.print(f"[bold green]OK[/]: no root destroys anything {commit[:12]} applied")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rev", required=True, help="git revision whose applied state is planned against")
    parser.add_argument(
        "--root",
        action="append",
        dest="roots",
        metavar="NAME",
        help=f"a root under terraform/environments; repeat for more (default: {' '.join(DEFAULT_ROOTS)})",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of tables")
    parser.add_argument(
        "--keep", action="store_true", help="keep the scratch directory (trees, states, plans)"
    )
    args = parser.parse_args(argv)
    names = list(dict.fromkeys(args.roots or DEFAULT_ROOTS))
    os.environ.setdefault("TF_IN_AUTOMATION", "1")
    note = Progress()
    work = Path(tempfile.mkdtemp(prefix="outreach-upgrade-check-"))
    try:
        commit, results = check(args.rev, names, work, note)
    except UpgradeCheckError as exc:
        print(f"upgrade-check: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    finally:
        if args.keep:
            note(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    if args.json:
        document = {
            "rev": args.rev,
            "commit": commit,
            "destroys": any(r.destroys for r in results.values()),
            "roots": {name: result.as_json() for name, result in results.items()},
        }
        print(json.dumps(document, indent=2, sort_keys=True))
    else:
        # Addresses are long: a table piped to a file or a CI log gets room for them.
        render(commit, results, Console(soft_wrap=True, width=None if sys.stdout.isatty() else 200))
    return EXIT_FAILED if any(r.destroys for r in results.values()) else EXIT_DONE


if __name__ == "__main__":
    sys.exit(main())
