"""The dev and prod roots themselves apply to the embedded AWS, and read back as they intend.

Each root is copied (``terraform_cli.copy_configuration``: the modules, the root, its lock file) to a
temporary directory and given one more file, ``embedded_aws_override.tf``. Terraform merges a
``*_override.tf`` file into the configuration
(https://developer.hashicorp.com/terraform/language/files/override); this one holds only a local
backend and the local root's provider settings (endpoints, fake credentials, skip flags), so nothing
the root says about the pipeline changes. Its committed terraform.tfvars apply as they are; what it
requires and does not commit is given as -var: the package directory and, for prod, an alarm address.

Both roots apply at once against one emulator (their names differ: ``outreach-dev-*``,
``outreach-prod-*``), as dev and prod may share one account (docs/deploying.md). They share its SES
identity too: prod creates ``example.com`` and dev, given ``email_create_sender_identity = false``,
sends with it. dev's worker names the identity by an ARN built from its name, so dev's apply does not
wait for prod's. Everything asserted is read back through the AWS APIs (or the roots' state and
outputs) and compared with the values the root gives its variables.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import botocore.exceptions
import pytest

from embedded_aws.server import embedded_aws, reset_backends
from outreach_dev import terraform_cli
from outreach_dev.terraform_cli_aliases import provider_aliases
from tests.support.packages import code_only_packages
from tests.support.terraform_roots import load_hcl, variable_values

# Two root applies share the first test's budget (about 110 s on a quiet machine, most of it the
# provider's own propagation waits); leave room for a loaded one.
pytestmark = pytest.mark.timeout(600)

ROOTS = ("dev", "prod")
LOCAL_ROOT = terraform_cli.ENVIRONMENTS_DIR / "local"
OVERRIDE_FILE = "embedded_aws_override.tf"
SENDER_IDENTITY = "example.com"
IDENTITY_RESOURCE = "module.pipeline.module.email.aws_sesv2_email_identity.sender"
# prod refuses to apply without someone to alarm (variables.tf); dev may run without. Both need the SES
# identity campaigns send from: the same one, which prod owns and dev only sends with (one account).
REQUIRED = {
    "prod": {"alarm_emails": '["oncall@example.com"]', "email_sender_identity": SENDER_IDENTITY},
    "dev": {"email_sender_identity": SENDER_IDENTITY, "email_create_sender_identity": "false"},
}


@dataclass(frozen=True)
class AppliedRoot:
    name: str
    directory: Path
    endpoint: str
    region: str
    values: dict[str, Any]
    outputs: dict[str, Any]

    @property
    def pipeline(self) -> dict[str, Any]:
        value: dict[str, Any] = self.outputs["pipeline"]
        return value

    def client(self, service: str) -> Any:
        make_client: Callable[..., Any] = boto3.client
        return make_client(
            service,
            endpoint_url=self.endpoint,
            region_name=self.region,
            aws_access_key_id="test",
            aws_secret_access_key="test",
        )


def _hcl_value(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else json.dumps(value)


def override(endpoint: str, aliases: Sequence[str]) -> str:
    """A local backend and the local root's provider settings, all but those each root sets alike
    (region, tags, the accounts it may deploy to): in the default AWS provider and in one
    ``provider "aws" { alias = ... }`` for each of ``aliases``, the aliased configurations the root
    defines (receiving.tf's ``receiving``). Terraform merges an override block only into the block of
    the same alias, and refuses one for an alias the root does not define."""
    [provider] = [block["aws"] for block in load_hcl(LOCAL_ROOT / "main.tf")["provider"] if "aws" in block]
    connection: list[str] = []
    for key, value in provider.items():
        if key in ("region", "default_tags", "allowed_account_ids"):
            continue
        if key == "endpoints":
            [services] = value
            connection.append("  endpoints {")
            connection.extend(f"    {service} = {json.dumps(endpoint)}" for service in services)
            connection.append("  }")
            continue
        assert not str(value).startswith("${"), f"provider.aws.{key} refers to the local root: {value}"
        connection.append(f"  {key} = {_hcl_value(value)}")
    lines = ["terraform {", '  backend "local" {}', "}", "", 'provider "aws" {', *connection, "}"]
    for alias in aliases:
        lines.extend(["", 'provider "aws" {', f"  alias = {json.dumps(alias)}", *connection, "}"])
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def applied(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, AppliedRoot]]:
    packages = code_only_packages(tmp_path_factory.mktemp("packages"))
    with embedded_aws() as endpoint:
        reset_backends(endpoint)

        def apply(name: str) -> AppliedRoot:
            source = terraform_cli.ENVIRONMENTS_DIR / name
            root = terraform_cli.copy_configuration(source, tmp_path_factory.mktemp(name))
            (root / OVERRIDE_FILE).write_text(override(endpoint, provider_aliases(root)), encoding="utf-8")
            variables = {"package_dir": str(packages), **REQUIRED[name]}
            outputs = terraform_cli.apply_root(root, variables=variables)
            values = variable_values(source)
            return AppliedRoot(name, root, endpoint, str(values["region"]), values, outputs)

        try:
            with ThreadPoolExecutor(max_workers=len(ROOTS)) as pool:
                runs = {name: pool.submit(apply, name) for name in ROOTS}
                yield {name: run.result() for name, run in runs.items()}
        finally:
            reset_backends(endpoint)


@pytest.fixture(params=ROOTS)
def root(request: pytest.FixtureRequest, applied: dict[str, AppliedRoot]) -> AppliedRoot:
    return applied[str(request.param)]


def test_the_override_changes_only_the_backend_and_the_provider_connection() -> None:
    text = override("http://127.0.0.1:1", ["receiving"])
    assert re.findall(r"^(\w+) ", text, flags=re.MULTILINE) == ["terraform", "provider", "provider"]
    assert re.findall(r"^\s*(region|default_tags|allowed_account_ids)\b", text, flags=re.MULTILINE) == []
    assert text.count('dynamodb = "http://127.0.0.1:1"') == 2


@pytest.mark.parametrize("name", ROOTS)
def test_the_override_connects_every_provider_configuration_the_root_defines_and_no_other(
    name: str, tmp_path: Path
) -> None:
    # GIVEN a root with its default AWS provider and receiving.tf's aliased one
    root = terraform_cli.ENVIRONMENTS_DIR / name
    assert provider_aliases(root) == ["receiving"]

    def providers(aliases: Sequence[str]) -> list[dict[str, Any]]:
        written = tmp_path / f"{len(aliases)}_override.tf"
        written.write_text(override("http://127.0.0.1:1", aliases), encoding="utf-8")
        return [block["aws"] for block in load_hcl(written)["provider"]]

    # WHEN its override is written / THEN each configuration gets the same connection, and an aliased
    # block only for an alias the root defines (an override of an undefined alias is a Terraform error)
    [default, receiving] = providers(provider_aliases(root))
    assert "alias" not in default
    assert receiving == {"alias": "receiving", **default}
    assert providers([]) == [default]


def test_the_scraper_reserves_and_its_queue_mapping_allows_the_roots_scraper_concurrency(
    root: AppliedRoot,
) -> None:
    lam = root.client("lambda")
    name = root.pipeline["scraper_function_name"]
    reserved = lam.get_function_concurrency(FunctionName=name)["ReservedConcurrentExecutions"]
    queue_arn = root.client("sqs").get_queue_attributes(
        QueueUrl=root.pipeline["scrape_queue_url"], AttributeNames=["QueueArn"]
    )["Attributes"]["QueueArn"]
    [mapping] = lam.list_event_source_mappings(EventSourceArn=queue_arn)["EventSourceMappings"]

    assert name == f"outreach-{root.name}-scraper"
    assert reserved == root.values["scraper_concurrency"]
    assert mapping["ScalingConfig"] == {"MaximumConcurrency": root.values["scraper_concurrency"]}
    assert mapping["BatchSize"] == 1
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]


def test_the_scrape_queue_redrives_after_3_receives_to_a_dlq_that_accepts_it_alone(root: AppliedRoot) -> None:
    sqs = root.client("sqs")
    queue = sqs.get_queue_attributes(QueueUrl=root.pipeline["scrape_queue_url"], AttributeNames=["All"])
    dlq = sqs.get_queue_attributes(QueueUrl=root.pipeline["scrape_dlq_url"], AttributeNames=["All"])
    queue, dlq = queue["Attributes"], dlq["Attributes"]

    assert queue["VisibilityTimeout"] == "5400"
    assert json.loads(queue["RedrivePolicy"]) == {
        "deadLetterTargetArn": dlq["QueueArn"],
        "maxReceiveCount": 3,
    }
    assert json.loads(dlq["RedriveAllowPolicy"]) == {
        "redrivePermission": "byQueue",
        "sourceQueueArns": [queue["QueueArn"]],
    }


def test_the_tasks_table_streams_both_images_and_refuses_to_be_deleted(root: AppliedRoot) -> None:
    dynamodb = root.client("dynamodb")
    name = root.pipeline["tasks_table_name"]
    table = dynamodb.describe_table(TableName=name)["Table"]

    assert table["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
    assert table["DeletionProtectionEnabled"] is True
    with pytest.raises(botocore.exceptions.ClientError) as refused:
        dynamodb.delete_table(TableName=name)
    assert refused.value.response["Error"]["Code"] == "ValidationException"
    assert dynamodb.describe_table(TableName=name)["Table"]["TableName"] == name


def test_resources_carry_the_roots_environment_tag(root: AppliedRoot) -> None:
    dynamodb = root.client("dynamodb")
    arn = dynamodb.describe_table(TableName=root.pipeline["tasks_table_name"])["Table"]["TableArn"]
    tags = {t["Key"]: t["Value"] for t in dynamodb.list_tags_of_resource(ResourceArn=arn)["Tags"]}

    assert tags == {"Project": "outreach-pipeline", "Environment": root.name, "ManagedBy": "terraform"}


def test_function_logs_are_kept_for_the_roots_retention(root: AppliedRoot) -> None:
    name = f"/aws/lambda/{root.pipeline['scraper_function_name']}"
    groups = root.client("logs").describe_log_groups(logGroupNamePrefix=name)["logGroups"]

    assert [(g["logGroupName"], g["retentionInDays"]) for g in groups] == [
        (name, root.values["log_retention_days"])
    ]


def test_scrape_results_expire_after_the_roots_retention(root: AppliedRoot) -> None:
    rules = root.client("s3").get_bucket_lifecycle_configuration(Bucket=root.pipeline["results_bucket"])[
        "Rules"
    ]
    expiry = [rule["Expiration"]["Days"] for rule in rules if "Expiration" in rule]

    # A root that leaves it null gets the module's default; every root's results expire.
    wanted = root.values.get("results_expiration_days") or root.pipeline["results_expiration_days"]
    assert expiry == [wanted] == [root.pipeline["results_expiration_days"]]


def test_alarms_reach_the_addresses_the_root_is_given(root: AppliedRoot) -> None:
    topic = root.outputs["alarm_topic_arn"]
    subscriptions = root.client("sns").list_subscriptions_by_topic(TopicArn=topic)["Subscriptions"]

    given = json.loads(REQUIRED[root.name].get("alarm_emails", "[]"))
    assert sorted((s["Protocol"], s["Endpoint"]) for s in subscriptions) == [("email", e) for e in given]
    assert topic.endswith(f":outreach-{root.name}-alarms")


def _state_addresses(root: AppliedRoot) -> list[str]:
    listed = terraform_cli.run(root.directory, "state", "list")
    return listed.stdout.split()


def test_prod_owns_the_accounts_ses_identity_and_dev_sends_with_it_without_creating_one(
    applied: dict[str, AppliedRoot],
) -> None:
    prod, dev = applied["prod"], applied["dev"]
    ses = prod.client("sesv2")
    identities = ses.list_email_identities()["EmailIdentities"]
    identity = ses.get_email_identity(EmailIdentity=SENDER_IDENTITY)

    assert [i["IdentityName"] for i in identities] == [SENDER_IDENTITY]
    assert identity["ConfigurationSetName"] == prod.outputs["email_configuration_set"]
    assert prod.outputs["email_configuration_set"] == "outreach-prod-email"
    assert f"{IDENTITY_RESOURCE}[0]" in _state_addresses(prod)
    assert not [a for a in _state_addresses(dev) if a.startswith(IDENTITY_RESOURCE)]
    assert dev.outputs["email_sender_identity"] == prod.outputs["email_sender_identity"] == SENDER_IDENTITY
    # Each stage still sends with its own configuration set (EMAIL_CONFIGURATION_SET in every SendEmail).
    assert dev.outputs["email_configuration_set"] == "outreach-dev-email"


def test_the_identitys_owner_reports_its_dkim_records_and_dev_none(applied: dict[str, AppliedRoot]) -> None:
    prod, dev = applied["prod"], applied["dev"]
    dkim = prod.client("sesv2").get_email_identity(EmailIdentity=SENDER_IDENTITY)["DkimAttributes"]
    # SES returns three Easy DKIM tokens for a domain; moto (5.2.5) returns none, so prod's list is
    # empty here: what is asserted is that it holds exactly the records of the tokens SES reports.
    expected = [
        {
            "name": f"{token}._domainkey.{SENDER_IDENTITY}",
            "type": "CNAME",
            "value": f"{token}.dkim.amazonses.com",
        }
        for token in dkim.get("Tokens", [])
    ]

    assert prod.outputs["email_dkim_records"] == expected
    assert prod.pipeline["email_dkim_records"] == expected
    # A null output is not in `terraform output -json` at all; inside the pipeline object it is null.
    assert "email_dkim_records" not in dev.outputs
    assert dev.pipeline["email_dkim_records"] is None


def test_the_email_worker_reserves_the_send_rate_the_stage_is_sized_for(root: AppliedRoot) -> None:
    worker = root.pipeline["email_worker_function_name"]
    concurrency = root.client("lambda").get_function_concurrency(FunctionName=worker)
    reserved = concurrency["ReservedConcurrentExecutions"]

    # Neither root sets email_max_send_rate: modules/email's default, 14 per second.
    assert root.values.get("email_max_send_rate") is None
    assert root.outputs["email_max_send_rate"] == root.pipeline["email_max_send_rate"] == 14
    assert worker == f"outreach-{root.name}-email-worker"
    assert reserved == 14
