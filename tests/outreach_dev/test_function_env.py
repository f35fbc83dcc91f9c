"""Each function's settings come from the Terraform modules, and the functions need every one of them."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from outreach import config
from outreach.email_schedules import ScheduleTarget
from outreach.errors import ConfigurationError
from outreach.task_store import (
    CAMPAIGN_OPEN_INDEX,
    JOBS_INDEX,
    OPEN_TASKS_INDEX,
    RECIPIENT_EMAILS_INDEX,
    REPLY_HANDLES_INDEX,
)
from outreach_dev import function_env, tasks_table_shape, terraform_hcl


def _email_reconciler() -> None:
    config.for_email_reconciler()
    ScheduleTarget.from_env()


def _email_worker() -> None:
    config.for_email_worker()
    ScheduleTarget.from_env()


# What each handler reads before it does any work.
COLD_START: dict[str, Callable[[], object]] = {
    "dispatcher": config.for_dispatcher,
    "scraper": config.for_scraper,
    "scrape_reconciler": config.for_scrape_reconciler,
    "email_worker": _email_worker,
    "email_reconciler": _email_reconciler,
    "ses_event_consumer": config.for_ses_event_consumer,
    "unsubscribe": config.for_unsubscribe,
}


def _terraform_environment(function: str) -> dict[str, str]:
    """The function's environment as Terraform sets it: its settings, and a name for each resource."""
    settings = function_env.settings(function)
    return {name: settings.get(name, f"resource-{name.lower()}") for name in function_env.variables(function)}


def test_the_indexes_the_core_queries_are_the_ones_the_module_declares() -> None:
    indexes = [OPEN_TASKS_INDEX, RECIPIENT_EMAILS_INDEX, REPLY_HANDLES_INDEX, JOBS_INDEX, CAMPAIGN_OPEN_INDEX]
    assert tasks_table_shape.index_names() == indexes
    module = terraform_hcl.load_module(terraform_hcl.module_dir("tasks-table"))
    outputs, declared = terraform_hcl.named(module, "output"), terraform_hcl.named(module, "locals")
    for output, index in (
        ("open_tasks_index_name", OPEN_TASKS_INDEX),
        ("recipient_emails_index_name", RECIPIENT_EMAILS_INDEX),
        ("reply_handles_index_name", REPLY_HANDLES_INDEX),
        ("jobs_index_name", JOBS_INDEX),
        ("campaign_open_index_name", CAMPAIGN_OPEN_INDEX),
    ):
        assert declared[terraform_hcl.strip(outputs[output]["value"]).removeprefix("local.")] == index


@pytest.mark.parametrize("function", sorted(COLD_START))
def test_terraform_sets_every_variable_a_function_reads(
    function: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in {n for f in function_env.FUNCTIONS for n in function_env.variables(f)}:
        monkeypatch.delenv(name, raising=False)
    for name, value in _terraform_environment(function).items():
        monkeypatch.setenv(name, value)
    COLD_START[function]()


@pytest.mark.parametrize(
    ("function", "variable"),
    sorted((f, v) for f in COLD_START for v in function_env.variables(f)),
)
def test_a_missing_variable_fails_the_function_at_its_start_naming_it(
    function: str, variable: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in _terraform_environment(function).items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv(variable)
    with pytest.raises(ConfigurationError, match=variable):
        COLD_START[function]()


def test_the_settings_are_the_modules_defaults() -> None:
    scraper = function_env.settings("scraper")
    queue = terraform_hcl.variable_defaults(terraform_hcl.module_dir("scrape-pipeline"))
    assert scraper["RETRY_SCHEDULE_SECONDS"] == ",".join(
        str(d) for d in queue["scraper"]["retry_schedule_seconds"]
    )
    lease = terraform_hcl.variable_defaults(terraform_hcl.module_dir("tasks-table"))[
        "claim_lease_margin_seconds"
    ]
    assert (
        scraper["CLAIM_LEASE_MARGIN_SECONDS"]
        == function_env.settings("email_worker")["CLAIM_LEASE_MARGIN_SECONDS"]
        == str(lease)
    )
    # The SES event consumer's soft-bounce limit is modules/email-feedback's default.
    feedback = terraform_hcl.variable_defaults(terraform_hcl.module_dir("email-feedback"))
    assert function_env.settings("ses_event_consumer")["SOFT_BOUNCE_LIMIT"] == str(
        feedback["soft_bounce_limit"]
    )
    # The scrape reconciler's thresholds are Terraform's arithmetic over those defaults.
    reconciler = function_env.settings("scrape_reconciler")
    assert int(reconciler["RECONCILE_RUNNING_AFTER_SECONDS"]) == (
        max(queue["queue"]["visibility_timeout_seconds"], *queue["scraper"]["retry_schedule_seconds"])
        + queue["scraper"]["timeout_seconds"]
        + lease
    )


def test_a_null_setting_reaches_the_worker_as_its_coalesce_fallback() -> None:
    def resolve(kind: str, dotted: str) -> object:
        if dotted == "warmup.start_date":
            raise LookupError("var.warmup.start_date is null")
        return "2027-03-01"

    assert terraform_hcl.evaluate('coalesce(var.warmup.start_date, "none")', resolve) == "none"
    assert terraform_hcl.evaluate('coalesce(var.other, "none")', resolve) == "2027-03-01"
    settings = function_env.settings("email_worker")
    defaults = terraform_hcl.variable_defaults(terraform_hcl.module_dir("email"))["warmup"]
    assert settings["WARMUP_START_DATE"] == "none"
    assert settings["WARMUP_DAILY_CAPS"] == ",".join(str(cap) for cap in defaults["daily_caps"])
