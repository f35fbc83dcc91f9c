# What comes back to the reply addresses: SES email receiving for the reply domain, every message kept
# in S3 and announced, at least once, to the inbound processor in the pipeline's Region.
#
#   sender --MX--> SES (receiving Region) --receipt rule <prefix>-replies (recipient: the reply domain,
#     TLS required, spam and virus scan)--> S3 action: the raw message to the inbound bucket under
#     inbound/<SES message id>, then a notification (topic_arn) --> SNS topic <prefix>-inbound (KMS)
#     --> SQS queue <prefix>-inbound (pipeline's Region) --mapping, partial batch failures-->
#     inbound processor --> ledger, tasks, schedules, forwards through SES
#   queue --max_receive_count receives--> <prefix>-inbound-dlq (alarm on the first message)
#
# Why not a Lambda action on the rule: that function must be in the receiving Region, which need not
# be the pipeline's (SES receives in some Regions only), and SES invokes it asynchronously, without
# a queue to replay from; SNS to SQS crosses Regions, and SQS keeps each notification until the
# processor has handled it, then parks it in an alarmed DLQ. The notification is the SNS envelope
# (no raw delivery) whose Message is SES's notification: notificationType Received, mail, receipt
# with action {type S3, bucketName, objectKey, topicArn}; the message itself stays in the bucket.
# https://docs.aws.amazon.com/ses/latest/dg/receiving-email-action-s3.html
# https://docs.aws.amazon.com/ses/latest/dg/receiving-email-notifications-contents.html
# https://docs.aws.amazon.com/sns/latest/dg/sns-send-message-to-sqs-cross-region.html
# https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html

data "aws_caller_identity" "current" {}
data "aws_region" "current" {}
data "aws_partition" "current" {}

data "aws_region" "receiving" {
  provider = aws.receiving
}

locals {
  account_id = data.aws_caller_identity.current.account_id
  region     = data.aws_region.current.name
  partition  = data.aws_partition.current.partition

  # The Regions where SES receives email (the receiving_region validation; make preflight reads the
  # same file): https://docs.aws.amazon.com/ses/latest/dg/regions.html#region-receive-email
  receiving_regions = jsondecode(file("${path.module}/receiving_regions.json")).regions

  create_rule_set   = var.rule_set_name == null
  rule_set_name     = coalesce(var.rule_set_name, "${var.name_prefix}-inbound")
  rule_name         = "${var.name_prefix}-replies"
  topic_name        = "${var.name_prefix}-inbound"
  topic_key_alias   = "alias/${var.name_prefix}-inbound"
  queue_name        = "${var.name_prefix}-inbound"
  dlq_name          = "${var.name_prefix}-inbound-dlq"
  processor_name    = "${var.name_prefix}-inbound-processor"
  object_key_prefix = "inbound/"
  forward_from      = "${var.forward_from_local_part}@${var.reply_domain}"
  account_root      = "arn:${local.partition}:iam::${local.account_id}:root"

  # Spelled out from names, known at plan: the bucket's, topic's and key's policies name the rule that
  # uses them, and the rule needs them in place first (SES checks its permissions when it is created).
  # https://docs.aws.amazon.com/ses/latest/dg/receiving-email-permissions.html
  rule_arn  = "arn:${local.partition}:ses:${var.receiving_region}:${local.account_id}:receipt-rule-set/${local.rule_set_name}:receipt-rule/${local.rule_name}"
  queue_arn = "arn:${local.partition}:sqs:${local.region}:${local.account_id}:${local.queue_name}"
  # Forwards are sent in the pipeline's Region with the reply domain's identity there.
  reply_identity_arn = "arn:${local.partition}:ses:${local.region}:${local.account_id}:identity/${var.reply_domain}"

  # SES acts for this account's receipt rule only (confused deputy), the conditions the SES guide
  # gives for the bucket and the key: https://docs.aws.amazon.com/ses/latest/dg/receiving-email-permissions.html
  ses_for_this_rule = {
    StringEquals = {
      "aws:SourceAccount" = local.account_id
      "aws:SourceArn"     = local.rule_arn
    }
  }

  # A domain identity is per Region (https://docs.aws.amazon.com/ses/latest/dg/creating-identities.html):
  # SES receives with the receiving Region's, the processor forwards with the pipeline Region's.
  same_region = data.aws_region.receiving.name == local.region

  # The account administers the topic's key through IAM, action by action (no kms:*), as the alarm
  # topic's key (modules/alarm-topic); PutKeyPolicy stays so the policy can always be repaired.
  key_admin_actions = [
    "kms:CancelKeyDeletion", "kms:CreateAlias", "kms:CreateGrant", "kms:Decrypt", "kms:DeleteAlias",
    "kms:DescribeKey", "kms:DisableKey", "kms:DisableKeyRotation", "kms:EnableKey",
    "kms:EnableKeyRotation", "kms:Encrypt", "kms:GenerateDataKey", "kms:GetKeyPolicy",
    "kms:GetKeyRotationStatus", "kms:ListAliases", "kms:ListGrants", "kms:ListKeyPolicies",
    "kms:ListResourceTags", "kms:PutKeyPolicy", "kms:ReEncryptFrom", "kms:ReEncryptTo",
    "kms:RetireGrant", "kms:RevokeGrant", "kms:RotateKeyOnDemand", "kms:ScheduleKeyDeletion",
    "kms:TagResource", "kms:UntagResource", "kms:UpdateAlias", "kms:UpdateKeyDescription",
  ]

  # Each item a processor request names, by its partition key (dynamodb:LeadingKeys), as in
  # modules/email-feedback: email tasks email#<campaign>#<hash>, the campaigns' counter shards
  # job#<campaign>#<0-9>, the ledger's address records. Null = false refuses a request without a key.
  # https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/specifying-conditions.html
  email_task_keys = [
    { test = "ForAllValues:StringLike", variable = "dynamodb:LeadingKeys", values = ["email#*"] },
    { test = "Null", variable = "dynamodb:LeadingKeys", values = ["false"] },
  ]
  email_task_and_counter_keys = [
    { test = "ForAllValues:StringLike", variable = "dynamodb:LeadingKeys", values = ["email#*", "job#*#?"] },
    { test = "Null", variable = "dynamodb:LeadingKeys", values = ["false"] },
  ]
  address_record_keys = [
    { test = "ForAllValues:StringLike", variable = "dynamodb:LeadingKeys", values = [var.contact_ledger.key_patterns.address] },
    { test = "Null", variable = "dynamodb:LeadingKeys", values = ["false"] },
  ]
  contact_stop_keys = [
    { test = "ForAllValues:StringLike", variable = "dynamodb:LeadingKeys", values = [var.contact_ledger.key_patterns.address, var.contact_ledger.key_patterns.domain] },
    { test = "Null", variable = "dynamodb:LeadingKeys", values = ["false"] },
  ]
  # The processor's receipts share the ledger's table under their own prefix (outreach.inbound.receipts
  # PREFIX), which no ledger reader takes for a contact.
  inbound_receipt_keys = [
    { test = "ForAllValues:StringLike", variable = "dynamodb:LeadingKeys", values = ["inbound#*"] },
    { test = "Null", variable = "dynamodb:LeadingKeys", values = ["false"] },
  ]

  # EMAIL_SEND_GRACE_SECONDS: a postponed email's new schedule gives up on the worker as late as the
  # email's own did (outreach.email_schedules, its retry policy's MaximumEventAgeInSeconds).
  send_grace_environment = var.send_grace_seconds == null ? {} : {
    EMAIL_SEND_GRACE_SECONDS = tostring(var.send_grace_seconds)
  }

  # Reading a message encrypted with a customer managed key also needs kms:Decrypt on that key.
  # https://docs.aws.amazon.com/AmazonS3/latest/userguide/UsingKMSEncryption.html
  bucket_key_statements = var.bucket_kms_key_arn == null ? [] : [{
    sid        = "DecryptReceivedMessages"
    actions    = ["kms:Decrypt"]
    resources  = [var.bucket_kms_key_arn]
    conditions = []
  }]
}

# ---- the inbound queue, its DLQ and the processor (pipeline's Region) --------------------------------

module "dlq" {
  source = "../dead-letter-queue"

  name                      = local.dlq_name
  message_retention_seconds = var.queue.dlq_message_retention_seconds
  redrive_source_queue_arns = [local.queue_arn]
  alarm_description         = "A received reply was not processed: the inbound processor failed its notification ${var.queue.max_receive_count} times (its message stays in ${var.bucket_name}); it waits in ${local.dlq_name}."
  alarm_actions             = var.alarm_actions
}

# SSE-SQS: SNS sends with the queue policy alone, where a queue encrypted with a KMS key would also
# need that key's policy to admit SNS.
# https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-server-side-encryption.html
resource "aws_sqs_queue" "inbound" {
  name                       = local.queue_name
  visibility_timeout_seconds = var.queue.visibility_timeout_seconds
  message_retention_seconds  = var.queue.message_retention_seconds
  sqs_managed_sse_enabled    = true

  redrive_policy = jsonencode({
    deadLetterTargetArn = module.dlq.arn
    maxReceiveCount     = var.queue.max_receive_count
  })
}

# Only the inbound topic may send (aws:SourceArn).
# https://docs.aws.amazon.com/sns/latest/dg/subscribe-sqs-queue-to-sns-topic.html
resource "aws_sqs_queue_policy" "inbound" {
  queue_url = aws_sqs_queue.inbound.url
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Sid       = "InboundTopicSendsNotifications"
      Effect    = "Allow"
      Principal = { Service = "sns.amazonaws.com" }
      Action    = "sqs:SendMessage"
      Resource  = aws_sqs_queue.inbound.arn
      Condition = { ArnEquals = { "aws:SourceArn" = aws_sns_topic.inbound.arn } }
    }]
  })
}

module "processor" {
  source = "../lambda-function"

  name                 = local.processor_name
  description          = "Classifies each received reply (human, automatic, bounce, unsubscribe, unmatched) and acts: ledger, follow-ups, forwards."
  handler              = var.handler
  package_path         = var.package_path
  timeout_seconds      = var.processor.timeout_seconds
  memory_mb            = var.processor.memory_mb
  reserved_concurrency = var.processor.reserved_concurrency
  log_retention_days   = var.log_retention_days
  alarm_actions        = var.alarm_actions

  powertools = {
    service_name      = "inbound-processor"
    metrics_namespace = var.powertools_metrics_namespace
    log_level         = var.processor.log_level
  }

  environment = merge({
    TASKS_TABLE               = var.tasks_table.name
    CONTACTS_TABLE            = var.contact_ledger.name
    INBOUND_BUCKET            = aws_s3_bucket.inbound.bucket
    INBOUND_BUCKET_REGION     = var.receiving_region
    REPLY_DOMAIN              = var.reply_domain
    UNSUBSCRIBE_LOCAL_PART    = var.unsubscribe_local_part
    FORWARD_FROM              = local.forward_from
    UNMATCHED_FORWARD_TO      = var.unmatched_forward_to
    UNSUBSCRIBE_KEY_ID        = var.reply_token_key_arn
    EMAIL_SCHEDULE_GROUP      = var.email_schedules.group_name
    EMAIL_WORKER_ARN          = var.email_schedules.worker_arn
    EMAIL_SCHEDULER_ROLE_ARN  = var.email_schedules.scheduler_role_arn
    EMAIL_DLQ_ARN             = var.email_schedules.dlq_arn
    SOFT_BOUNCE_LIMIT         = tostring(var.soft_bounce_limit)
    AWAY_DEFAULT_DAYS         = tostring(var.away_default_days)
    INBOUND_MAX_MESSAGE_BYTES = tostring(var.max_message_bytes)
  }, local.send_grace_environment)

  policy_statements = concat([
    {
      # The raw messages SES saved, under inbound/ only.
      sid        = "ReadReceivedMessages"
      actions    = ["s3:GetObject"]
      resources  = ["${aws_s3_bucket.inbound.arn}/${local.object_key_prefix}*"]
      conditions = []
    },
    {
      # The email task a reply answers: by its reply handle, and every email to its address (the
      # follow-ups a reply stops; keys only).
      sid        = "FindRepliedEmails"
      actions    = ["dynamodb:Query"]
      resources  = [var.tasks_table.reply_handles_index_arn, var.tasks_table.recipient_emails_index_arn]
      conditions = []
    },
    {
      # Read the tasks found: email tasks only.
      sid        = "ReadEmailTasks"
      actions    = ["dynamodb:GetItem", "dynamodb:BatchGetItem"]
      resources  = [var.tasks_table.arn]
      conditions = local.email_task_keys
    },
    {
      # Mark a reply, an absence or a forward on its task and count it on the campaign's counter
      # shard; cancel or postpone the follow-ups (transactions of Updates, each authorized as
      # UpdateItem: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis-iam.html).
      sid        = "MarkAndMoveEmailTasks"
      actions    = ["dynamodb:UpdateItem"]
      resources  = [var.tasks_table.arn]
      conditions = local.email_task_and_counter_keys
    },
    {
      # The address's record: replied campaigns, absence, stops (unsubscribe, bounce), each an
      # idempotent update.
      sid        = "RecordContactEngagement"
      actions    = ["dynamodb:UpdateItem"]
      resources  = [var.contact_ledger.arn]
      conditions = local.address_record_keys
    },
    {
      # Whether the replying address or its domain is stopped already (an unsubscribe by mail, a
      # bounce report): both ledger records in one strongly consistent BatchGetItem
      # (contacts.stop_of), those kinds of record only.
      sid        = "ReadContactStops"
      actions    = ["dynamodb:BatchGetItem"]
      resources  = [var.contact_ledger.arn]
      conditions = local.contact_stop_keys
    },
    {
      # The message's receipt, inbound#<content digest> in the ledger's table: read, opened and moved
      # forward by conditional updates (received, acted, forwarding, forwarded), so a message is acted
      # on and forwarded once (outreach.inbound.receipts).
      sid        = "KeepInboundReceipts"
      actions    = ["dynamodb:GetItem", "dynamodb:UpdateItem"]
      resources  = [var.contact_ledger.arn]
      conditions = local.inbound_receipt_keys
    },
    {
      # Check a reply address's token: the same HMAC key as the unsubscribe links, its own payload.
      sid        = "CheckReplyTokens"
      actions    = ["kms:GenerateMac"]
      resources  = [var.reply_token_key_arn]
      conditions = []
    },
    {
      # Forwards go out as raw messages (SES v2 SendEmail, Raw content) from the forwarder only,
      # without the campaign configuration set (they are no campaign sends): authorized on the reply
      # domain's identity, From = FORWARD_FROM (ses:FromAddress, case-sensitive).
      # https://docs.aws.amazon.com/ses/latest/dg/control-user-access.html
      sid       = "ForwardFromTheForwarder"
      actions   = ["ses:SendEmail"]
      resources = [local.reply_identity_arn]
      conditions = [
        { test = "StringEquals", variable = "ses:FromAddress", values = [local.forward_from] },
      ]
    },
    {
      # A postponed email's schedule: deleted and created again later, in the email group only.
      sid        = "MoveEmailSchedules"
      actions    = ["scheduler:GetSchedule", "scheduler:CreateSchedule", "scheduler:DeleteSchedule"]
      resources  = [var.email_schedules.schedules_arn]
      conditions = []
    },
    {
      # CreateSchedule hands the scheduler role to EventBridge Scheduler (iam:PassedToService).
      # https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazoneventbridgescheduler.html
      sid       = "PassSchedulerRole"
      actions   = ["iam:PassRole"]
      resources = [var.email_schedules.scheduler_role_arn]
      conditions = [
        { test = "StringEquals", variable = "iam:PassedToService", values = ["scheduler.amazonaws.com"] },
      ]
    },
    {
      # The mapping polls and deletes with the function's role.
      # https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html (execution role permissions)
      sid        = "ConsumeInboundNotifications"
      actions    = ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"]
      resources  = [aws_sqs_queue.inbound.arn]
      conditions = []
    },
  ], local.bucket_key_statements)
}

# One notification per record; a batch returns only its failed records for another receive, and at
# most maximum_concurrency batches run at once.
# https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html (ReportBatchItemFailures)
# https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html (maximum concurrency)
resource "aws_lambda_event_source_mapping" "inbound" {
  event_source_arn                   = aws_sqs_queue.inbound.arn
  function_name                      = module.processor.function_arn
  batch_size                         = var.mapping.batch_size
  maximum_batching_window_in_seconds = var.mapping.maximum_batching_window_in_seconds
  enabled                            = true

  # Without this the handler's batchItemFailures is ignored and every record of a batch whose
  # invocation returned is deleted, the failed ones too.
  function_response_types = ["ReportBatchItemFailures"]

  scaling_config {
    maximum_concurrency = var.mapping.maximum_concurrency
  }
}
