# The receiving side (receiving.tf): identities, the rule set and rule, the bucket, the topic and its
# key, the subscription; the queue and the processor are in processor.tftest.hcl.

mock_provider "aws" {
  source          = "../../tests/terraform/mocks"
  override_during = plan
}

# The receiving Region's provider: the same mocked values (eu-central-1) unless a run overrides its
# aws_region.
mock_provider "aws" {
  alias           = "receiving"
  source          = "../../tests/terraform/mocks"
  override_during = plan
}

override_resource {
  target          = aws_sqs_queue.inbound
  override_during = plan
  values = {
    arn = "arn:aws:sqs:eu-central-1:111122223333:outreach-test-inbound"
    url = "https://sqs.eu-central-1.amazonaws.com/111122223333/outreach-test-inbound"
  }
}

override_resource {
  target          = module.dlq.aws_sqs_queue.this
  override_during = plan
  values = {
    arn  = "arn:aws:sqs:eu-central-1:111122223333:outreach-test-inbound-dlq"
    url  = "https://sqs.eu-central-1.amazonaws.com/111122223333/outreach-test-inbound-dlq"
    name = "outreach-test-inbound-dlq"
  }
}

override_resource {
  target          = aws_s3_bucket.inbound
  override_during = plan
  values = {
    arn = "arn:aws:s3:::outreach-test-inbound-111122223333-eu-central-1"
  }
}

override_resource {
  target          = aws_sns_topic.inbound
  override_during = plan
  values = {
    arn = "arn:aws:sns:eu-central-1:111122223333:outreach-test-inbound"
  }
}

override_resource {
  target          = module.processor.aws_lambda_function.this
  override_during = plan
  values = {
    arn = "arn:aws:lambda:eu-central-1:111122223333:function:outreach-test-inbound-processor"
  }
}

variables {
  name_prefix          = "outreach-test"
  receiving_region     = "eu-central-1"
  reply_domain         = "reply.example.com"
  unmatched_forward_to = "sales@example.com"
  soft_bounce_limit    = 3
  bucket_name          = "outreach-test-inbound-111122223333-eu-central-1"
  tasks_table = {
    name                       = "outreach-test-tasks"
    arn                        = "arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-test-tasks"
    reply_handles_index_arn    = "arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-test-tasks/index/reply-handles"
    recipient_emails_index_arn = "arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-test-tasks/index/recipient-emails"
  }
  contact_ledger = {
    name         = "outreach-test-contacts"
    arn          = "arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-test-contacts"
    key_patterns = { address = "address#*", domain = "domain#*" }
  }
  reply_token_key_arn = "arn:aws:kms:eu-central-1:111122223333:key/11111111-2222-3333-4444-555555555555"
  email_schedules = {
    group_name         = "outreach-test-email"
    schedules_arn      = "arn:aws:scheduler:eu-central-1:111122223333:schedule/outreach-test-email/*"
    worker_arn         = "arn:aws:lambda:eu-central-1:111122223333:function:outreach-test-email-worker"
    scheduler_role_arn = "arn:aws:iam::111122223333:role/outreach-test-email-scheduler"
    dlq_arn            = "arn:aws:sqs:eu-central-1:111122223333:outreach-test-email-dlq"
  }
  handler                      = "outreach.inbound_processor.lambda_handler"
  package_path                 = "../../tests/terraform/fixtures/packages/inbound_processor.zip"
  powertools_metrics_namespace = "OutreachPipeline/test"
  alarm_actions                = ["arn:aws:sns:eu-central-1:111122223333:outreach-test-alarms"]
}

# ---- the receipt rule ------------------------------------------------------------------------------

run "the_receiving_side_planned_with_the_files_variables" {
  command = plan

  # the_rule_saves_every_message_to_the_reply_domain_under_inbound_and_announces_it_on_the_topic
  assert {
    condition = (
      aws_ses_receipt_rule.replies.name == "outreach-test-replies" &&
      aws_ses_receipt_rule.replies.rule_set_name == "outreach-test-inbound" &&
      aws_ses_receipt_rule.replies.recipients == toset(["reply.example.com"]) &&
      aws_ses_receipt_rule.replies.enabled
    )
    error_message = "One enabled rule, <prefix>-replies in <prefix>-inbound, for every address of the reply domain."
  }

  assert {
    condition     = aws_ses_receipt_rule.replies.tls_policy == "Require" && aws_ses_receipt_rule.replies.scan_enabled
    error_message = "Mail is accepted over TLS only and scanned for spam and viruses."
  }

  assert {
    condition = (
      output.rule.s3_action.bucket_name == "outreach-test-inbound-111122223333-eu-central-1" &&
      output.rule.s3_action.object_key_prefix == "inbound/" &&
      output.rule.s3_action.topic_arn == "arn:aws:sns:eu-central-1:111122223333:outreach-test-inbound" &&
      output.rule.s3_action.position == 1 &&
      length(aws_ses_receipt_rule.replies.lambda_action) == 0 && length(aws_ses_receipt_rule.replies.sns_action) == 0
    )
    error_message = "The rule's one action saves the raw message under inbound/ and notifies the inbound topic; no Lambda or SNS action."
  }

  assert {
    condition     = output.rule_arn == "arn:aws:ses:eu-central-1:111122223333:receipt-rule-set/outreach-test-inbound:receipt-rule/outreach-test-replies"
    error_message = "The rule's ARN (the aws:SourceArn the policies admit) is spelled out from its names."
  }

  # the_module_creates_its_rule_set_and_makes_it_the_active_one
  assert {
    condition = (
      aws_ses_receipt_rule_set.this[0].rule_set_name == "outreach-test-inbound" &&
      aws_ses_active_receipt_rule_set.this[0].rule_set_name == "outreach-test-inbound" &&
      output.rule_set_created
    )
    error_message = "Without rule_set_name the module creates <prefix>-inbound and activates it."
  }

  # ---- the bucket --------------------------------------------------------------------------------------
  # the_bucket_is_private_encrypted_tls_only_and_expires_messages_after_30_days
  assert {
    condition = (
      aws_s3_bucket_public_access_block.inbound.block_public_acls && aws_s3_bucket_public_access_block.inbound.block_public_policy &&
      aws_s3_bucket_public_access_block.inbound.ignore_public_acls && aws_s3_bucket_public_access_block.inbound.restrict_public_buckets &&
      one(aws_s3_bucket_ownership_controls.inbound.rule).object_ownership == "BucketOwnerEnforced"
    )
    error_message = "Public access is blocked and the bucket owner owns every object."
  }

  assert {
    condition     = one(one(aws_s3_bucket_server_side_encryption_configuration.inbound.rule).apply_server_side_encryption_by_default).sse_algorithm == "AES256"
    error_message = "Without a key the messages are encrypted with SSE-S3."
  }

  assert {
    condition     = output.retention_days == 30 && one(aws_s3_bucket_lifecycle_configuration.inbound.rule).status == "Enabled"
    error_message = "Received messages expire after 30 days by default."
  }

  # only_ses_may_put_messages_and_only_for_this_accounts_rule
  assert {
    condition = anytrue([
      for s in jsondecode(output.bucket_policy_json).Statement :
      s.Effect == "Allow" && s.Principal == { Service = "ses.amazonaws.com" } && s.Action == "s3:PutObject" &&
      s.Resource == "arn:aws:s3:::outreach-test-inbound-111122223333-eu-central-1/inbound/*" &&
      try(s.Condition, null) == { StringEquals = {
        "aws:SourceAccount" = "111122223333"
        "aws:SourceArn"     = "arn:aws:ses:eu-central-1:111122223333:receipt-rule-set/outreach-test-inbound:receipt-rule/outreach-test-replies"
      } }
    ])
    error_message = "SES may PutObject under inbound/ only, for this account (aws:SourceAccount) and this rule (aws:SourceArn)."
  }

  assert {
    condition = anytrue([
      for s in jsondecode(output.bucket_policy_json).Statement :
      s.Effect == "Deny" && s.Action == "s3:*" && try(s.Condition, null) == { Bool = { "aws:SecureTransport" = "false" } }
    ])
    error_message = "Every request over plain HTTP is refused."
  }

  assert {
    condition     = length([for s in jsondecode(output.bucket_policy_json).Statement : s if s.Effect == "Allow"]) == 1
    error_message = "SES's put is the bucket policy's only Allow."
  }

  # ---- the topic, its key, the subscription --------------------------------------------------------------
  # the_topic_is_encrypted_with_its_own_key_which_ses_may_use_for_this_rule_only
  assert {
    condition     = aws_sns_topic.inbound.name == "outreach-test-inbound" && aws_sns_topic.inbound.kms_master_key_id == "arn:aws:kms:eu-central-1:111122223333:key/00000000-0000-0000-0000-000000000000"
    error_message = "The topic is encrypted with the module's key."
  }

  assert {
    condition = anytrue([
      for s in jsondecode(output.topic_key_policy_json).Statement :
      s.Principal == { Service = "ses.amazonaws.com" } && toset(s.Action) == toset(["kms:GenerateDataKey*", "kms:Decrypt"]) &&
      try(s.Condition, null) == { StringEquals = { "aws:SourceAccount" = "111122223333", "aws:SourceArn" = output.rule_arn } }
    ])
    error_message = "SES may encrypt notifications with the key, for this rule only."
  }

  assert {
    condition     = aws_kms_key.topic.enable_key_rotation && aws_kms_alias.topic.name == "alias/outreach-test-inbound"
    error_message = "The key rotates and is named alias/<prefix>-inbound."
  }

  assert {
    condition = alltrue([
      for s in jsondecode(output.topic_key_policy_json).Statement : !contains(flatten([s.Action]), "kms:*")
    ])
    error_message = "The key policy names its actions; no kms:*."
  }

  # only_ses_may_publish_to_the_topic_for_this_rule
  assert {
    condition = jsondecode(output.topic_policy_json).Statement == [{
      Sid       = "SesPublishesThisRulesNotifications"
      Effect    = "Allow"
      Principal = { Service = "ses.amazonaws.com" }
      Action    = "sns:Publish"
      Resource  = "arn:aws:sns:eu-central-1:111122223333:outreach-test-inbound"
      Condition = { StringEquals = {
        "aws:SourceAccount" = "111122223333"
        "aws:SourceArn"     = "arn:aws:ses:eu-central-1:111122223333:receipt-rule-set/outreach-test-inbound:receipt-rule/outreach-test-replies"
      } }
    }]
    error_message = "The topic admits SES's publish for this account's rule, nothing else."
  }

  # the_queue_is_subscribed_with_the_sns_envelope_and_admits_the_topic_alone
  assert {
    condition = (
      output.subscription.protocol == "sqs" &&
      output.subscription.endpoint == "arn:aws:sqs:eu-central-1:111122223333:outreach-test-inbound" &&
      output.subscription.raw_message_delivery == false
    )
    error_message = "The inbound queue is subscribed without raw delivery: its body is SNS's envelope around SES's notification."
  }

  assert {
    condition = jsondecode(output.queue_policy_json).Statement == [{
      Sid       = "InboundTopicSendsNotifications"
      Effect    = "Allow"
      Principal = { Service = "sns.amazonaws.com" }
      Action    = "sqs:SendMessage"
      Resource  = "arn:aws:sqs:eu-central-1:111122223333:outreach-test-inbound"
      Condition = { ArnEquals = { "aws:SourceArn" = "arn:aws:sns:eu-central-1:111122223333:outreach-test-inbound" } }
    }]
    error_message = "Only the inbound topic may send to the queue."
  }

  # ---- identities and Regions ------------------------------------------------------------------------------
  # in_one_region_one_identity_serves_receiving_and_forwarding
  assert {
    condition     = length(aws_sesv2_email_identity.receiving) == 1 && aws_sesv2_email_identity.receiving[0].email_identity == "reply.example.com" && length(aws_sesv2_email_identity.forwarding) == 0
    error_message = "Receiving and forwarding in one Region share the reply domain's one identity."
  }

  assert {
    condition     = output.mx_record == "10 inbound-smtp.eu-central-1.amazonaws.com"
    error_message = "The MX record to publish points at the receiving Region's inbound endpoint."
  }
}

run "with_a_rule_set_name_the_rule_joins_that_set_and_nothing_is_activated" {
  command = plan

  variables {
    rule_set_name = "outreach-prod-inbound"
  }

  assert {
    condition = (
      length(aws_ses_receipt_rule_set.this) == 0 && length(aws_ses_active_receipt_rule_set.this) == 0 &&
      aws_ses_receipt_rule.replies.rule_set_name == "outreach-prod-inbound" &&
      output.rule_arn == "arn:aws:ses:eu-central-1:111122223333:receipt-rule-set/outreach-prod-inbound:receipt-rule/outreach-test-replies"
    )
    error_message = "Another root's rule set takes this rule; the active set is left as its owner made it."
  }
}

run "the_provider_and_the_receiving_region_must_agree" {
  command = plan

  variables {
    receiving_region = "eu-west-1"
  }

  expect_failures = [aws_ses_receipt_rule.replies]
}

run "a_bucket_key_encrypts_with_kms_and_lets_the_processor_decrypt" {
  command = plan

  variables {
    bucket_kms_key_arn = "arn:aws:kms:eu-central-1:111122223333:key/99999999-8888-7777-6666-555555555555"
  }

  assert {
    condition     = one(one(aws_s3_bucket_server_side_encryption_configuration.inbound.rule).apply_server_side_encryption_by_default).sse_algorithm == "aws:kms"
    error_message = "With bucket_kms_key_arn the bucket encrypts with that key."
  }

  assert {
    condition = anytrue([
      for s in jsondecode(output.processor_policy_json).Statement :
      s.Sid == "DecryptReceivedMessages" && s.Action == ["kms:Decrypt"] && s.Resource == ["arn:aws:kms:eu-central-1:111122223333:key/99999999-8888-7777-6666-555555555555"]
    ])
    error_message = "The processor may decrypt with the bucket's key."
  }
}

run "in_another_receiving_region_the_pipeline_region_gets_its_own_identity" {
  command = plan

  variables {
    receiving_region = "eu-west-1"
  }

  override_data {
    target = data.aws_region.receiving
    values = { name = "eu-west-1" }
  }

  assert {
    condition     = length(aws_sesv2_email_identity.forwarding) == 1 && length(aws_sesv2_email_identity.receiving) == 1
    error_message = "An identity is per Region: the pipeline's Region gets its own for the forwards."
  }

  assert {
    condition = (
      output.rule_arn == "arn:aws:ses:eu-west-1:111122223333:receipt-rule-set/outreach-test-inbound:receipt-rule/outreach-test-replies" &&
      output.processor_settings.environment.INBOUND_BUCKET_REGION == "eu-west-1" &&
      output.mx_record == "10 inbound-smtp.eu-west-1.amazonaws.com"
    )
    error_message = "The rule, the bucket's Region and the MX record follow the receiving Region."
  }
}

run "without_create_identity_no_identity_is_created" {
  command = plan

  variables {
    create_identity = false
  }

  assert {
    condition     = length(aws_sesv2_email_identity.receiving) == 0 && length(aws_sesv2_email_identity.forwarding) == 0 && output.identity_dkim_records == null
    error_message = "create_identity = false leaves the identities to their owner."
  }
}
