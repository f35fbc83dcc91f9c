"""An HMAC_256 KMS key written with Terraform's aws provider 5.x applies on the embedded AWS with its key
policy, plans clean, and makes MACs that verify.

AWS page: https://docs.aws.amazon.com/kms/latest/developerguide/hmac-create-key.html (GENERATE_VERIFY_MAC
is the only key usage of HMAC keys; an HMAC key has no automatic rotation, so the configuration leaves
``enable_key_rotation`` false: test_kms_mac shows EnableKeyRotation refused).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from embedded_aws.base import client
from embedded_aws.clock import VirtualClock
from tests.embedded_aws.tiny_terraform import TinyRoot

pytestmark = pytest.mark.timeout(600)

REGION = "eu-central-1"
KEY = """
data "aws_caller_identity" "current" {}

resource "aws_kms_key" "mac" {
  description              = "Signs one-click unsubscribe tokens."
  customer_master_key_spec = "HMAC_256"
  key_usage                = "GENERATE_VERIFY_MAC"
  deletion_window_in_days  = 7
  enable_key_rotation      = false
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Sid       = "AccountAdministersKey"
      Effect    = "Allow"
      Principal = { AWS = "arn:aws:iam::${data.aws_caller_identity.current.account_id}:root" }
      Action = [
        "kms:DescribeKey", "kms:GetKeyPolicy", "kms:PutKeyPolicy", "kms:GenerateMac", "kms:VerifyMac",
        "kms:GetKeyRotationStatus", "kms:ScheduleKeyDeletion", "kms:ListResourceTags", "kms:TagResource",
      ]
      Resource  = "*"
    }]
  })
}

output "key_arn" { value = aws_kms_key.mac.arn }
"""


def test_an_hmac_key_with_its_policy_applies_plans_clean_and_its_macs_verify(
    endpoint: str, clock: VirtualClock, tmp_path: Path
) -> None:
    root = TinyRoot(tmp_path / "tf", KEY, region=REGION)
    key_arn = root.apply(endpoint)["key_arn"]
    assert root.plan_is_empty(endpoint)
    kms = client("kms", endpoint, REGION)
    metadata = kms.describe_key(KeyId=key_arn)["KeyMetadata"]
    assert (metadata["KeySpec"], metadata["KeyUsage"]) == ("HMAC_256", "GENERATE_VERIFY_MAC")
    policy = json.loads(kms.get_key_policy(KeyId=key_arn, PolicyName="default")["Policy"])
    assert policy["Statement"][0]["Sid"] == "AccountAdministersKey"
    mac = kms.generate_mac(KeyId=key_arn, Message=b"token", MacAlgorithm="HMAC_SHA_256")["Mac"]
    assert kms.verify_mac(KeyId=key_arn, Message=b"token", Mac=mac, MacAlgorithm="HMAC_SHA_256")["MacValid"]
