"""The handler except-lint: an ``except`` must re-raise, report a failure or record an outcome."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from outreach_dev.except_lint import lint_source, main

REPO_ROOT = Path(__file__).resolve().parents[2]


def codes(source: str) -> list[tuple[int, str]]:
    return [(finding.line, finding.code) for finding in lint_source(textwrap.dedent(source), "handler.py")]


SWALLOWING = {
    "pass": """
        def handler(event, context):
            try:
                process(event)
            except Exception:
                pass
    """,
    "log_and_continue": """
        def handler(event, context):
            for record in event["Records"]:
                try:
                    process(record)
                except ValueError:
                    logger.exception("bad record")
                    continue
            return {"batchItemFailures": []}
    """,
    "bare_except_returning_success": """
        def handler(event, context):
            try:
                process(event)
            except:
                return {"statusCode": 200}
    """,
    "raise_only_in_nested_function": """
        def handler(event, context):
            try:
                process(event)
            except KeyError:
                def later():
                    raise RuntimeError("never called")
                return None
    """,
    "appending_to_unrelated_list": """
        def handler(event, context):
            seen = []
            try:
                process(event)
            except KeyError as exc:
                seen.append(str(exc))
    """,
    "comment_without_reason": """
        def handler(event, context):
            try:
                process(event)
            except KeyError:  # outcome:
                return None
    """,
    "return_of_a_non_outcome_enum": """
        def handler(event, context):
            try:
                process(event)
            except KeyError:
                return Status.OK
    """,
}

HANDLED = {
    "bare_reraise": """
        def handler(event, context):
            try:
                process(event)
            except Exception:
                logger.exception("unknown failure")
                raise
    """,
    "raise_from": """
        def handler(event, context):
            try:
                process(event)
            except KeyError as exc:
                raise UnreadableMessageError("no task id") from exc
    """,
    "conditional_raise": """
        def handler(event, context):
            try:
                process(event)
            except ClientError as exc:
                if exc.response["Error"]["Code"] != "ConditionalCheckFailedException":
                    raise
                return Outcome.DUPLICATE
    """,
    "batch_item_failure_dict": """
        def handler(event, context):
            failures = []
            for record in event["Records"]:
                try:
                    process(record)
                except Exception:
                    failures.append({"itemIdentifier": record["messageId"]})
            return {"batchItemFailures": failures}
    """,
    "append_to_failure_collection": """
        def handler(event, context):
            for record in event["Records"]:
                try:
                    process(record)
                except Exception:
                    batch_item_failures.append(item_identifier(record))
    """,
    "mark_failed_call": """
        def handler(event, context):
            try:
                scrape(task)
            except FatalScrapeError as exc:
                task_store.mark_failed(task, reason=exc.reason)
    """,
    "private_record_call": """
        def handler(event, context):
            try:
                scrape(task)
            except FatalScrapeError as exc:
                return _record_failure(task, str(exc))
    """,
    "send_to_dlq_call": """
        def handler(event, context):
            try:
                deliver(event)
            except PermanentError:
                send_to_dlq(event)
    """,
    "function_named_failure": """
        def handler(event, context):
            try:
                change = parse(record)
            except UnparseableRecordError:
                return _failure(record["dynamodb"]["SequenceNumber"])
    """,
    "outcome_enum_member": """
        def handler(event, context):
            try:
                claim(task)
            except TransitionRejectedError:
                return Outcome.BUSY
    """,
    "outcome_comment": """
        def decode(body):
            try:
                return body.decode("utf-8")
            except UnicodeDecodeError:  # outcome: undecodable bytes fall back to cp1252
                return body.decode("cp1252", errors="replace")
    """,
    "outcome_comment_on_multiline_clause": """
        def handler(event, context):
            try:
                process(event)
            except (
                KeyError,
                ValueError,
            ):  # outcome: malformed input is answered with 400
                return {"statusCode": 400}
    """,
}


@pytest.mark.parametrize("name", sorted(SWALLOWING))
def test_except_that_swallows_the_error_is_reported(name: str) -> None:
    # GIVEN a handler whose except neither re-raises, reports nor records an outcome
    # WHEN the lint reads it
    found = codes(SWALLOWING[name])
    # THEN exactly that handler is reported
    assert [code for _line, code in found] == ["EXC001"]


@pytest.mark.parametrize("name", sorted(HANDLED))
def test_except_that_reraises_reports_or_records_an_outcome_passes(name: str) -> None:
    # GIVEN a handler that re-raises, reports a batch item failure or records an outcome
    # WHEN the lint reads it
    # THEN nothing is reported
    assert codes(HANDLED[name]) == []


def test_finding_points_at_the_except_line() -> None:
    # GIVEN one good and one swallowing handler in a module
    source = """
        def good():
            try:
                work()
            except Exception:
                raise

        def bad():
            try:
                work()
            except Exception:
                pass
    """
    # WHEN the lint reads it
    # THEN the finding names the line of the swallowing except
    assert codes(source) == [(11, "EXC001")]


def test_contextlib_suppress_needs_an_outcome_comment() -> None:
    # GIVEN suppress() with and without an outcome comment
    source = """
        import contextlib

        def handler():
            with contextlib.suppress(KeyError):
                work()
            with contextlib.suppress(KeyError):  # outcome: a missing optional key is not an error
                work()
    """
    # WHEN the lint reads it
    # THEN only the unannotated suppress is reported
    assert codes(source) == [(5, "EXC002")]


def test_cli_exit_status_fails_on_findings_and_passes_on_clean_code(tmp_path: Path) -> None:
    # GIVEN a package with one clean and one swallowing module
    package = tmp_path / "functions" / "pkg"
    package.mkdir(parents=True)
    (package / "clean.py").write_text(
        "def f():\n    try:\n        g()\n    except Exception:\n        raise\n"
    )
    (package / "dirty.py").write_text(
        "def f():\n    try:\n        g()\n    except Exception:\n        pass\n"
    )
    # WHEN the lint runs over the folder and over the clean file alone
    # THEN it exits 1 and 0
    assert main([str(tmp_path / "functions")]) == 1
    assert main([str(package / "clean.py")]) == 0


def test_cli_exits_2_for_a_missing_path(tmp_path: Path) -> None:
    # GIVEN a path that does not exist / WHEN the lint runs / THEN it refuses with exit 2
    assert main([str(tmp_path / "absent")]) == 2


def test_module_entry_point_runs_as_make_calls_it(tmp_path: Path) -> None:
    # GIVEN a swallowing module
    (tmp_path / "bad.py").write_text("try:\n    x = 1\nexcept Exception:\n    x = 2\n")
    # WHEN the lint runs the way `make except-lint` runs it
    completed = subprocess.run(
        [sys.executable, "-m", "outreach_dev.except_lint", str(tmp_path)],
        cwd=REPO_ROOT,
        env={"PYTHONPATH": str(REPO_ROOT / "scripts"), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
    )
    # THEN it reports the line and fails
    assert completed.returncode == 1
    assert f"{tmp_path / 'bad.py'}:3:1: EXC001" in completed.stdout
