"""functions.json: one entry per Lambda function, read the same way by Terraform and the tooling."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from outreach_dev import function_manifest
from outreach_dev.function_manifest import FunctionManifestError

PIPELINE_MAIN = function_manifest.REPO / "modules" / "outreach-pipeline" / "main.tf"


def _write(tmp_path: Path, functions: dict[str, Any]) -> Path:
    path = tmp_path / "functions.json"
    path.write_text(json.dumps({"description": "test", "functions": functions}))
    return path


def _entry(**changes: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "handler": "outreach.scraper.lambda_handler",
        "zip": {"package": "outreach", "runtime_dependencies": True},
        "module_path": ["scrape_pipeline", "scraper"],
    }
    return {**entry, **changes}


def test_the_manifest_lists_the_nine_functions_with_their_handlers() -> None:
    functions = function_manifest.FUNCTIONS
    assert {name: f.handler for name, f in functions.items()} == {
        "dispatcher": "outreach.dispatcher.lambda_handler",
        "scraper": "outreach.scraper.lambda_handler",
        "scrape_reconciler": "outreach.reconcilers.scrape.lambda_handler",
        "email_worker": "outreach.email_worker.lambda_handler",
        "email_reconciler": "outreach.reconcilers.email.lambda_handler",
        "ses_event_consumer": "outreach.ses_event_consumer.lambda_handler",
        "unsubscribe": "outreach.unsubscribe.endpoint.lambda_handler",
        "inbound_processor": "outreach.inbound_processor.lambda_handler",
        "sending_guard": "outreach.sending_guard.lambda_handler",
    }
    assert functions["scrape_reconciler"].handler_module == "outreach.reconcilers.scrape"
    assert functions["scrape_reconciler"].deployed_name("prod") == "outreach-prod-scrape-reconciler"
    assert functions["unsubscribe"].handler_module == "outreach.unsubscribe.endpoint"
    assert functions["ses_event_consumer"].address == "module.email_feedback.module.consumer"
    assert functions["ses_event_consumer"].deployed_name("prod") == "outreach-prod-ses-event-consumer"
    assert functions["inbound_processor"].address == "module.email_inbound.module.processor"
    assert functions["inbound_processor"].deployed_name("prod") == "outreach-prod-inbound-processor"


def test_the_pipeline_module_hands_every_manifest_function_its_handler_and_zip() -> None:
    # GIVEN the module that reads the manifest
    main = PIPELINE_MAIN.read_text()
    # THEN every function's handler and package path are passed to the module that deploys it
    for name in function_manifest.FUNCTIONS:
        assert re.search(rf"=\s*local\.handlers\.{name}\b", main), f"{name}: no handler passed"
        assert re.search(rf"=\s*local\.packages\.{name}\b", main), f"{name}: no package path passed"


def _called_module(directory: Path, call: str) -> Path:
    """The directory of ``module "<call>"`` in ``directory``'s main.tf, from its source."""
    found = re.search(rf'module "{call}" {{\s*source\s*=\s*"([^"]+)"', (directory / "main.tf").read_text())
    assert found, f'{directory.name}/main.tf has no module "{call}"'
    return (directory / found.group(1)).resolve()


def test_each_module_path_leads_to_the_lambda_function_that_creates_the_function() -> None:
    for function in function_manifest.FUNCTIONS.values():
        directory = PIPELINE_MAIN.parent
        for call in function.module_path:
            directory = _called_module(directory, call)
        assert directory.name == "lambda-function", function.address
    email_reconciler = function_manifest.FUNCTIONS["email_reconciler"]
    assert email_reconciler.address == "module.email.module.reconciler.module.function"


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (_entry(handler="lambda_handler"), "no module.function handler"),
        (_entry(handler="tooling.scraper.lambda_handler"), "outside package"),
        (_entry(zip={"package": "outreach", "runtime_dependencies": "yes"}), "true or false"),
        (_entry(module_path=[]), "module call names"),
        (_entry(module_path="scrape_pipeline.scraper"), "module call names"),
        ({"handler": "outreach.scraper.lambda_handler"}, "lacks"),
    ],
)
def test_a_malformed_entry_is_refused_naming_the_function(
    tmp_path: Path, entry: dict[str, Any], message: str
) -> None:
    with pytest.raises(FunctionManifestError, match=message) as raised:
        function_manifest.load(_write(tmp_path, {"scraper": entry}))
    assert "scraper" in str(raised.value)


def test_a_name_that_is_not_snake_case_and_an_empty_list_are_refused(tmp_path: Path) -> None:
    with pytest.raises(FunctionManifestError, match="snake_case"):
        function_manifest.load(_write(tmp_path, {"Email-Worker": _entry()}))
    with pytest.raises(FunctionManifestError, match="non-empty"):
        function_manifest.load(_write(tmp_path, {}))
    with pytest.raises(FunctionManifestError, match="cannot read"):
        function_manifest.load(tmp_path / "missing.json")
