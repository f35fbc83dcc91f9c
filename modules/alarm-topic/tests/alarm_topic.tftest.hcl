mock_provider "aws" {
  source          = "../../tests/terraform/mocks"
  override_during = plan
}

variables {
  name            = "outreach-test-alarms"
  email_endpoints = ["oncall@example.com"]
}

run "the_alarm_topic_planned_with_the_files_variables" {
  command = plan

  # topic_is_encrypted_with_its_own_rotating_key
  assert {
    condition     = aws_sns_topic.this.kms_master_key_id == aws_kms_key.this.arn
    error_message = "The topic is encrypted with the module's key, not the AWS managed key."
  }

  assert {
    condition     = aws_kms_key.this.enable_key_rotation
    error_message = "The topic's key must rotate (key rotation on)."
  }

  # cloudwatch_and_s3_may_publish_and_encrypt
  assert {
    condition = anytrue([
      for s in jsondecode(aws_kms_key.this.policy).Statement :
      try(toset(s.Principal.Service), null) == toset(["cloudwatch.amazonaws.com", "s3.amazonaws.com"]) && toset(s.Action) == toset(["kms:Decrypt", "kms:GenerateDataKey*"])
    ])
    error_message = "CloudWatch and S3 need kms:Decrypt and kms:GenerateDataKey* to publish to the encrypted topic."
  }

  assert {
    condition = (
      toset(jsondecode(aws_sns_topic_policy.this.policy).Statement[0].Principal.Service) == toset(["cloudwatch.amazonaws.com", "s3.amazonaws.com"]) &&
      jsondecode(aws_sns_topic_policy.this.policy).Statement[0].Action == "sns:Publish" &&
      jsondecode(aws_sns_topic_policy.this.policy).Statement[0].Condition.StringEquals["aws:SourceAccount"] == "111122223333"
    )
    error_message = "CloudWatch alarms and S3 notifications of this account may publish to the topic."
  }

  # key_policy_names_every_action
  assert {
    condition = alltrue(flatten([
      for s in jsondecode(aws_kms_key.this.policy).Statement : [
        for a in s.Action : !strcontains(a, "*") || a == "kms:GenerateDataKey*"
      ]
    ]))
    error_message = "The key policy names its actions; the only pattern is the documented kms:GenerateDataKey* for publishers."
  }

  assert {
    condition = anytrue([
      for s in jsondecode(aws_kms_key.this.policy).Statement :
      s.Principal == { AWS = "arn:aws:iam::111122223333:root" } && contains(s.Action, "kms:PutKeyPolicy")
    ])
    error_message = "The account keeps PutKeyPolicy, so the key policy can always be repaired."
  }

  # subscribes_the_given_addresses
  assert {
    condition     = aws_sns_topic_subscription.email["oncall@example.com"].protocol == "email"
    error_message = "Each address gets an email subscription."
  }
}

run "each_refused_input_fails_its_own_validation" {
  command = plan

  variables {
    # rejects_a_malformed_address
    email_endpoints = ["not-an-address"]
    # rejects_a_deletion_window_below_7_days
    key_deletion_window_days = 6
  }

  expect_failures = [
    var.email_endpoints,
    var.key_deletion_window_days,
  ]
}
