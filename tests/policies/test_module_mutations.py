"""`make checkov` rejects a module that loses its failure handling.

A copy of the repository's ``modules/`` and the ``local`` environment root is scanned once as it is
and once per mutation, each mutation removing one setting from every event source mapping (bisect,
retry limit, on-failure destination, ReportBatchItemFailures), pipe (bisect, retry limit, DLQ),
Scheduler schedule (retry policy, DLQ) or EventBridge rule target (DLQ), or giving the stream mapping
a filter on a key DynamoDB mappings do not filter on (``eventName``). All variants sit side by side
in one temporary tree, so one checkov run covers them.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from outreach_dev import checkov_run
from tests.policies.checkov_report import REPO_ROOT, CheckovReport, run_checkov

ROOT = Path("terraform") / "environments" / "local"
MAPPING = "aws_lambda_event_source_mapping"
PIPE = "aws_pipes_pipe"
SCHEDULE = "aws_scheduler_schedule"
EVENT_TARGET = "aws_cloudwatch_event_target"
FAILURE_HANDLING_CHECKS = (
    "CKV_OUT_001",
    "CKV_OUT_002",
    "CKV_OUT_005",
    "CKV_OUT_006",
    "CKV_OUT_008",
    "CKV_OUT_009",
)

Remover = Callable[[list[str]], list[str]]


def _depth(line: str) -> int:
    code = re.sub(r'"(?:[^"\\]|\\.)*"', '""', line).split("#", 1)[0]
    return (
        code.count("{")
        + code.count("[")
        + code.count("(")
        - code.count("}")
        - code.count("]")
        - code.count(")")
    )


def without_attribute(key: str) -> Remover:
    """Drop ``key = ...`` (with its continuation lines) at any depth of a resource block."""
    pattern = re.compile(rf"^\s*{re.escape(key)}\s*=")

    def remove(lines: list[str]) -> list[str]:
        kept: list[str] = []
        skipping = 0
        for line in lines:
            if skipping > 0:
                skipping += _depth(line)
                continue
            if pattern.match(line):
                skipping = _depth(line)
                continue
            kept.append(line)
        return kept

    return remove


def without_block(key: str) -> Remover:
    """Drop a nested ``key { ... }`` (or ``dynamic "key" { ... }``) block of a resource block."""
    pattern = re.compile(rf'^\s*(?:{re.escape(key)}|dynamic\s+"{re.escape(key)}")\s*\{{')

    def remove(lines: list[str]) -> list[str]:
        kept: list[str] = []
        skipping = 0
        for line in lines:
            if skipping > 0:
                skipping += _depth(line)
                continue
            if pattern.match(line):
                skipping = _depth(line)
                continue
            kept.append(line)
        return kept

    return remove


def with_only_filter(pattern: str) -> Remover:
    """Replace the filters of a ``filter_criteria`` block with one ``filter { pattern = <pattern> }``."""
    drop_filters = without_block("filter")
    opening = re.compile(r"^(\s*)filter_criteria\s*\{")

    def rewrite(lines: list[str]) -> list[str]:
        output: list[str] = []
        for line in drop_filters(lines):
            output.append(line)
            match = opening.match(line)
            if match:
                indent = match.group(1) + "  "
                output += [f"{indent}filter {{", f"{indent}  pattern = {pattern}", f"{indent}}}"]
        return output

    return rewrite


@dataclass(frozen=True)
class Mutation:
    resource_type: str
    remove: Remover


MUTATIONS = {
    "mapping_without_bisect": Mutation(MAPPING, without_attribute("bisect_batch_on_function_error")),
    "mapping_without_retry_limit": Mutation(MAPPING, without_attribute("maximum_retry_attempts")),
    "mapping_without_destination": Mutation(MAPPING, without_block("destination_config")),
    "mapping_without_report_batch_item_failures": Mutation(
        MAPPING, without_attribute("function_response_types")
    ),
    # The seed's insert filter: a top-level eventName, which DynamoDB mappings do not filter on.
    "mapping_with_event_name_filter": Mutation(
        MAPPING,
        with_only_filter(
            'jsonencode({ eventName = ["INSERT"], dynamodb = { NewImage = { kind = { S = ["scrape"] } } } })'
        ),
    ),
    "pipe_without_bisect": Mutation(PIPE, without_attribute("on_partial_batch_item_failure")),
    "pipe_without_retry_limit": Mutation(PIPE, without_attribute("maximum_retry_attempts")),
    "pipe_without_dead_letter_queue": Mutation(PIPE, without_block("dead_letter_config")),
    "reconciler_schedule_without_dead_letter_queue": Mutation(SCHEDULE, without_block("dead_letter_config")),
    "reconciler_schedule_without_retry_policy": Mutation(SCHEDULE, without_block("retry_policy")),
    "event_target_without_dead_letter_queue": Mutation(EVENT_TARGET, without_block("dead_letter_config")),
}


def mutate_file(path: Path, mutation: Mutation) -> set[str]:
    """Apply ``mutation`` to every resource of its type in ``path``; the names of those it changed."""
    lines = path.read_text(encoding="utf-8").splitlines()
    header = re.compile(rf'^resource\s+"{mutation.resource_type}"\s+"([\w-]+)"\s*\{{')
    output: list[str] = []
    changed: set[str] = set()
    index = 0
    while index < len(lines):
        match = header.match(lines[index])
        if match is None:
            output.append(lines[index])
            index += 1
            continue
        end, depth = index, 0
        while True:
            depth += _depth(lines[end])
            if (depth <= 0 and end > index) or end == len(lines) - 1:
                break
            end += 1
        block = lines[index : end + 1]
        mutated = [block[0], *mutation.remove(block[1:-1]), block[-1]]
        if mutated != block:
            changed.add(match.group(1))
        output.extend(mutated)
        index = end + 1
    if changed:
        path.write_text("\n".join(output) + "\n", encoding="utf-8")
    return changed


def copy_tree(destination: Path) -> None:
    ignore = shutil.ignore_patterns(".terraform", ".terraform.lock.hcl", "*.tfstate*")
    shutil.copytree(REPO_ROOT / "modules", destination / "modules", ignore=ignore)
    shutil.copytree(REPO_ROOT / ROOT, destination / ROOT, ignore=ignore)


@dataclass
class Mutated:
    tree: Path
    report: CheckovReport
    expected: dict[str, set[tuple[str, str]]]


@pytest.fixture(scope="module")
def mutated(tmp_path_factory: pytest.TempPathFactory) -> Mutated:
    """One checkov run over an unchanged copy and one copy per mutation."""
    if not (REPO_ROOT / "modules").is_dir() or not (REPO_ROOT / ROOT).is_dir():
        pytest.fail(f"modules/ and {ROOT} are needed for the mutation test")
    tree = tmp_path_factory.mktemp("mutations")
    copy_tree(tree / "baseline")
    expected: dict[str, set[tuple[str, str]]] = {}
    for name, mutation in MUTATIONS.items():
        copy_tree(tree / name)
        expected[name] = set()
        for tf_file in sorted((tree / name / "modules").rglob("*.tf")):
            relative = "/" + tf_file.relative_to(tree).as_posix()
            for resource in mutate_file(tf_file, mutation):
                expected[name].add((relative, f"{mutation.resource_type}.{resource}"))
    return Mutated(tree, run_checkov(tree, FAILURE_HANDLING_CHECKS), expected)


def failing(report: CheckovReport, variant: str) -> set[tuple[str, str]]:
    """(file, resource type.name) of the failure-handling failures inside one variant's tree."""
    return {
        (record.file_path, ".".join(record.resource.split(".")[-2:]))
        for record in report.records
        if record.state == "failed" and record.file_path.startswith(f"/{variant}/")
    }


def test_unchanged_modules_pass_every_failure_handling_rule(mutated: Mutated) -> None:
    # GIVEN an unchanged copy of modules/ and the local root
    report = mutated.report
    # WHEN checkov scans it / THEN no mapping or pipe fails, and there are mappings to judge
    assert failing(report, "baseline") == set()
    judged = {r.resource for r in report.records if r.file_path.startswith("/baseline/")}
    assert any(f".{MAPPING}." in resource for resource in judged)


@pytest.mark.parametrize("variant", sorted(MUTATIONS))
def test_removing_failure_handling_from_a_module_fails_checkov(mutated: Mutated, variant: str) -> None:
    # GIVEN a copy of the modules with one failure-handling setting removed
    expected = mutated.expected[variant]
    # THEN the mutation hit at least one resource, and every resource it hit now fails its rule
    assert expected, f"{variant} found nothing to remove in modules/"
    assert expected <= failing(mutated.report, variant)


def test_make_checkov_runner_exits_non_zero_on_a_mutated_root(
    mutated: Mutated, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the local root over modules whose stream mapping lost its retry limit
    root = mutated.tree / "mapping_without_retry_limit" / ROOT
    # WHEN the runner behind `make checkov` scans it with every built-in and custom check
    status = checkov_run.main([str(root)])
    # THEN it fails and names the rule and the mapping
    output = capsys.readouterr().out
    assert status == 1
    assert (
        "FAILED CKV_OUT_001 module.pipeline.module.stream_dispatch.aws_lambda_event_source_mapping.stream"
        in output
    )
