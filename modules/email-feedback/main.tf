# What the recipients say back: SES's events about each sent email, and the one-click unsubscribe.
#
#   SES (configuration set) --every event type--> default event bus --rule (source aws.ses, this
#     configuration set's ses:configuration-set tag)--> ses-events queue --mapping, partial batch
#     failures--> SES event consumer --> task marks, contact ledger, open emails of a stopped address
#     cancelled and their schedules deleted
#   queue --max_receive_count receives--> ses-events DLQ (alarm on the first message)
#   rule target --delivery given up after its retries--> the same DLQ
#   recipient / mailbox provider --GET, POST List-Unsubscribe=One-Click--> function URL (no auth)
#     --> unsubscribe endpoint --KMS VerifyMac of the link's token--> ledger `unsubscribed`
#     --> fan-out message on the ses-events queue --> the consumer cancels the address's open emails
#
# Everything here is at least once: SES and EventBridge may deliver an event twice, SQS may deliver a
# message twice, a failed record is received again. The consumer's writes are idempotent (a mark is
# set once, a state only rises), so a repeat changes nothing.
# https://docs.aws.amazon.com/ses/latest/dg/monitoring-eventbridge.html
# https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-retry-policy.html
# https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html

data "aws_caller_identity" "current" {}
data "aws_region" "current" {}
data "aws_partition" "current" {}

locals {
  account_id = data.aws_caller_identity.current.account_id
  region     = data.aws_region.current.name
  partition  = data.aws_partition.current.partition

  rule_name              = "${var.name_prefix}-ses-events"
  queue_name             = "${var.name_prefix}-ses-events"
  dlq_name               = "${var.name_prefix}-ses-events-dlq"
  consumer_name          = "${var.name_prefix}-ses-event-consumer"
  unsubscribe_name       = "${var.name_prefix}-unsubscribe"
  unsubscribe_key_alias  = "alias/${var.name_prefix}-unsubscribe"
  account_root_principal = "arn:${local.partition}:iam::${local.account_id}:root"

  # The DLQ accepts redriven messages from the ses-events queue only; the queue's ARN is spelled out
  # because the queue's redrive policy already refers to the DLQ.
  queue_arn = "arn:${local.partition}:sqs:${local.region}:${local.account_id}:${local.queue_name}"

  # SES events of this configuration set only: SES tags every event it publishes through a
  # configuration set with ses:configuration-set (mail.tags, a list of values per tag), and its other
  # events on the bus (sending status, Virtual Deliverability Manager advice) carry no mail object.
  # https://docs.aws.amazon.com/eventbridge/latest/ref/events-ref-ses.html (source aws.ses)
  # https://docs.aws.amazon.com/ses/latest/dg/event-publishing-retrieving-sns-contents.html (mail.tags)
  # https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-event-patterns.html
  event_pattern = {
    source = ["aws.ses"]
    detail = {
      mail = {
        tags = {
          "ses:configuration-set" = [var.configuration_set_name]
        }
      }
    }
  }

  # EventBridge's own defaults, written out: a delivery to the queue is retried with backoff for up
  # to 24 hours (185 attempts), then the event goes to the DLQ rather than being dropped.
  # https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-retry-policy.html
  delivery_retry = {
    maximum_event_age_in_seconds = 86400
    maximum_retry_attempts       = 185
  }

  # Each item a function's request names, by its partition key (dynamodb:LeadingKeys): email tasks
  # email#<campaign>#<hash>, the campaigns' counter shards job#<campaign>#<0-9> (campaign ids have no
  # '#', so job#*#? is never a job's own row), and the ledger's address records. ForAllValues holds
  # for a request without the key too, so Null = false refuses such a request
  # (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/specifying-conditions.html,
  # https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_condition-single-vs-multi-valued-context-keys.html).
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
}

# ---- the rule and the queue it delivers to -----------------------------------------------------------

resource "aws_cloudwatch_event_rule" "ses_events" {
  name           = local.rule_name
  description    = "SES events of the ${var.configuration_set_name} configuration set, to the ${local.queue_name} queue."
  event_bus_name = "default"
  event_pattern  = jsonencode(local.event_pattern)
}

resource "aws_cloudwatch_event_target" "ses_events" {
  rule           = aws_cloudwatch_event_rule.ses_events.name
  event_bus_name = aws_cloudwatch_event_rule.ses_events.event_bus_name
  target_id      = "ses-events-queue"
  arn            = aws_sqs_queue.events.arn

  retry_policy {
    maximum_event_age_in_seconds = local.delivery_retry.maximum_event_age_in_seconds
    maximum_retry_attempts       = local.delivery_retry.maximum_retry_attempts
  }

  # An event EventBridge could not deliver (a queue policy or quota problem) waits here, alarmed,
  # instead of being dropped. https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-dlq.html
  dead_letter_config {
    arn = module.dlq.arn
  }
}

module "dlq" {
  source = "../dead-letter-queue"

  name                      = local.dlq_name
  message_retention_seconds = var.queue.dlq_message_retention_seconds
  redrive_source_queue_arns = [local.queue_arn]
  alarm_description         = "An SES event or unsubscribe fan-out was not recorded: the consumer failed it ${var.queue.max_receive_count} times, or EventBridge could not deliver it to ${local.queue_name}; it waits in ${local.dlq_name}."
  alarm_actions             = var.alarm_actions
}

# Encrypted with SQS managed keys (SSE-SQS): EventBridge sends to it with the queue policy alone,
# where a queue encrypted with a KMS key would also need that key's policy to admit EventBridge.
# https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-server-side-encryption.html
resource "aws_sqs_queue" "events" {
  name                       = local.queue_name
  visibility_timeout_seconds = var.queue.visibility_timeout_seconds
  message_retention_seconds  = var.queue.message_retention_seconds
  sqs_managed_sse_enabled    = true

  redrive_policy = jsonencode({
    deadLetterTargetArn = module.dlq.arn
    maxReceiveCount     = var.queue.max_receive_count
  })
}

# EventBridge sends with its service principal; only this rule may (aws:SourceArn): into the queue,
# and what it gave up delivering into the DLQ. The unsubscribe endpoint sends with its own role, of
# this account, which its IAM policy allows.
# https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-use-resource-based.html#eb-sqs-permissions
# https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-dlq.html (the DLQ's permissions)
resource "aws_sqs_queue_policy" "events" {
  queue_url = aws_sqs_queue.events.url
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Sid       = "SesEventsRuleSendsEvents"
      Effect    = "Allow"
      Principal = { Service = "events.amazonaws.com" }
      Action    = "sqs:SendMessage"
      Resource  = aws_sqs_queue.events.arn
      Condition = { ArnEquals = { "aws:SourceArn" = aws_cloudwatch_event_rule.ses_events.arn } }
    }]
  })
}

resource "aws_sqs_queue_policy" "dlq" {
  queue_url = module.dlq.url
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Sid       = "SesEventsRuleSendsUndeliveredEvents"
      Effect    = "Allow"
      Principal = { Service = "events.amazonaws.com" }
      Action    = "sqs:SendMessage"
      Resource  = module.dlq.arn
      Condition = { ArnEquals = { "aws:SourceArn" = aws_cloudwatch_event_rule.ses_events.arn } }
    }]
  })
}

# ---- the SES event consumer ---------------------------------------------------------------------

module "consumer" {
  source = "../lambda-function"

  name                 = local.consumer_name
  description          = "Records each SES event and unsubscribe on its task and in the contact ledger; a stop cancels the address's open emails."
  handler              = var.handlers.consumer
  package_path         = var.packages.consumer
  timeout_seconds      = var.consumer.timeout_seconds
  memory_mb            = var.consumer.memory_mb
  reserved_concurrency = var.consumer.reserved_concurrency
  log_retention_days   = var.log_retention_days
  alarm_actions        = var.alarm_actions

  powertools = {
    service_name      = "ses-event-consumer"
    metrics_namespace = var.powertools_metrics_namespace
    log_level         = var.consumer.log_level
  }

  environment = {
    TASKS_TABLE          = var.tasks_table.name
    CONTACTS_TABLE       = var.contact_ledger.name
    EMAIL_SCHEDULE_GROUP = var.schedules.group_name
    SOFT_BOUNCE_LIMIT    = tostring(var.soft_bounce_limit)
  }

  policy_statements = [
    {
      # Raise an address's state (a stop, a soft bounce, a send's last-contacted time) and read its
      # soft bounces: the address records only, the ones events are about.
      sid        = "RecordContactEvents"
      actions    = ["dynamodb:UpdateItem", "dynamodb:GetItem"]
      resources  = [var.contact_ledger.arn]
      conditions = local.address_record_keys
    },
    {
      # The stop now recorded for an address (its record or its domain's, the higher one), whose
      # reason its cancelled emails get: both records in one strongly consistent BatchGetItem.
      sid       = "ReadContactStops"
      actions   = ["dynamodb:BatchGetItem"]
      resources = [var.contact_ledger.arn]
      conditions = [
        { test = "ForAllValues:StringLike", variable = "dynamodb:LeadingKeys", values = [var.contact_ledger.key_patterns.address, var.contact_ledger.key_patterns.domain] },
        { test = "Null", variable = "dynamodb:LeadingKeys", values = ["false"] },
      ]
    },
    {
      # Every email task to a stopped address, in every campaign (keys only).
      sid       = "FindEmailsToAnAddress"
      actions   = ["dynamodb:Query"]
      resources = [var.tasks_table.recipient_emails_index_arn]
    },
    {
      # Read the event's task and the tasks the index found: email tasks only.
      sid        = "ReadEmailTasks"
      actions    = ["dynamodb:GetItem", "dynamodb:BatchGetItem"]
      resources  = [var.tasks_table.arn]
      conditions = local.email_task_keys
    },
    {
      # Mark an event on its task and count it on the campaign's counter shard, cancel a stopped
      # address's Pending emails: each a transaction of Updates, authorized item by item as UpdateItem
      # (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis-iam.html).
      sid        = "MarkAndCancelEmailTasks"
      actions    = ["dynamodb:UpdateItem"]
      resources  = [var.tasks_table.arn]
      conditions = local.email_task_and_counter_keys
    },
    {
      # The mapping polls and deletes with the function's role.
      # https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html (execution role permissions)
      sid       = "ConsumeSesEvents"
      actions   = ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"]
      resources = [aws_sqs_queue.events.arn]
    },
    {
      # A cancelled email's one-time schedule, in the email group only.
      sid       = "DeleteCancelledEmailSchedules"
      actions   = ["scheduler:DeleteSchedule"]
      resources = [var.schedules.arn]
    },
  ]
}

# One message per record (the body is the EventBridge event, or the unsubscribe fan-out message), a
# batch returns only its failed records for another receive, and at most maximum_concurrency
# batches run at once.
# https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html (ReportBatchItemFailures)
# https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html (maximum concurrency)
resource "aws_lambda_event_source_mapping" "events" {
  event_source_arn                   = aws_sqs_queue.events.arn
  function_name                      = module.consumer.function_arn
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

# ---- one-click unsubscribe: the HMAC key, the endpoint and its public URL ------------------------

# The key the unsubscribe links' tokens are made (GenerateMac, by the operator's CLI when it plans a
# campaign) and checked (VerifyMac, by the endpoint) with. Its material never leaves KMS, so no
# secret lives in code, variables or state. HMAC keys have no automatic rotation.
# https://docs.aws.amazon.com/kms/latest/developerguide/hmac.html
# https://docs.aws.amazon.com/kms/latest/APIReference/API_EnableKeyRotation.html (symmetric encryption keys only)
resource "aws_kms_key" "unsubscribe" {
  #checkov:skip=CKV_AWS_7:KMS rotates only symmetric encryption keys automatically; an HMAC_256 key cannot have rotation enabled (EnableKeyRotation refuses it)
  description              = "Makes and verifies the HMACs of the ${var.name_prefix} one-click unsubscribe links."
  customer_master_key_spec = "HMAC_256"
  key_usage                = "GENERATE_VERIFY_MAC"
  deletion_window_in_days  = var.unsubscribe_key_deletion_window_days

  # The account administers the key and may grant its use with IAM policies (the operator's
  # kms:GenerateMac, docs/security.md); the endpoint's role may verify, nothing else. In a key
  # policy "*" as Resource means this key.
  # https://docs.aws.amazon.com/kms/latest/developerguide/key-policy-default.html
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [
      {
        Sid       = "AccountAdministersTheKey"
        Effect    = "Allow"
        Principal = { AWS = local.account_root_principal }
        Action    = "kms:*"
        Resource  = "*"
      },
      {
        Sid       = "UnsubscribeEndpointVerifiesTokens"
        Effect    = "Allow"
        Principal = { AWS = module.unsubscribe.role_arn }
        Action    = "kms:VerifyMac"
        Resource  = "*"
      },
    ]
  })
}

resource "aws_kms_alias" "unsubscribe" {
  name          = local.unsubscribe_key_alias
  target_key_id = aws_kms_key.unsubscribe.key_id
}

module "unsubscribe" {
  source = "../lambda-function"

  name                 = local.unsubscribe_name
  description          = "One-click unsubscribe (RFC 8058): a GET shows a confirmation form, a POST of a valid token records the opt-out."
  handler              = var.handlers.unsubscribe
  package_path         = var.packages.unsubscribe
  timeout_seconds      = var.unsubscribe.timeout_seconds
  memory_mb            = var.unsubscribe.memory_mb
  reserved_concurrency = var.unsubscribe.reserved_concurrency
  log_retention_days   = var.log_retention_days
  alarm_actions        = var.alarm_actions

  powertools = {
    service_name      = "unsubscribe"
    metrics_namespace = var.powertools_metrics_namespace
    log_level         = var.unsubscribe.log_level
  }

  environment = {
    CONTACTS_TABLE           = var.contact_ledger.name
    UNSUBSCRIBE_KEY_ID       = aws_kms_key.unsubscribe.arn
    CONTACT_EVENTS_QUEUE_URL = aws_sqs_queue.events.url
  }

  policy_statements = [
    {
      # Check a link's token. The key is HMAC_256, whose only algorithm is HMAC_SHA_256.
      sid       = "VerifyUnsubscribeTokens"
      actions   = ["kms:VerifyMac"]
      resources = [aws_kms_key.unsubscribe.arn]
    },
    {
      # Record the opt-out on the address's own record, nothing else of the ledger.
      sid        = "RecordUnsubscribes"
      actions    = ["dynamodb:UpdateItem"]
      resources  = [var.contact_ledger.arn]
      conditions = local.address_record_keys
    },
    {
      # Hand the cancelling of the address's open emails to the consumer, through its queue.
      sid       = "FanOutUnsubscribes"
      actions   = ["sqs:SendMessage"]
      resources = [aws_sqs_queue.events.arn]
    },
  ]
}

# The endpoint answers a failure to record an opt-out with a 503 page, which is no Lambda error: its
# own metric (Powertools EMF, dimension service) calls a person on the first one.
# https://docs.powertools.aws.dev/lambda/python/latest/core/metrics/
resource "aws_cloudwatch_metric_alarm" "unsubscribe_failures" {
  alarm_name          = "${local.unsubscribe_name}-failures"
  alarm_description   = "The unsubscribe endpoint could not record an opt-out (KMS, DynamoDB or SQS failed) and answered 503."
  namespace           = var.powertools_metrics_namespace
  metric_name         = "UnsubscribeFailures"
  dimensions          = { service = "unsubscribe" }
  statistic           = "Sum"
  period              = 60
  evaluation_periods  = 1
  threshold           = 1
  comparison_operator = "GreaterThanOrEqualToThreshold"
  treat_missing_data  = "notBreaching"
  alarm_actions       = var.alarm_actions
  ok_actions          = var.alarm_actions
}

# A public HTTPS endpoint with no authentication: RFC 8058's one-click POST carries no credentials
# and the mailbox provider sends it. What authorizes a request is the link's token, whose MAC only
# this account's key makes. Payload format 2.0; the handler's response sets status, headers, body.
# https://docs.aws.amazon.com/lambda/latest/dg/urls-configuration.html
# https://docs.aws.amazon.com/lambda/latest/dg/urls-invocation.html (payload format)
resource "aws_lambda_function_url" "unsubscribe" {
  #checkov:skip=CKV_AWS_258:RFC 8058 one-click unsubscribe must work without credentials or cookies; each request is authorized by the HMAC token in its link, verified with KMS
  function_name      = module.unsubscribe.function_name
  authorization_type = "NONE"
  invoke_mode        = "BUFFERED"

  # With authorization_type NONE the provider itself adds the statement FunctionURLAllowPublicAccess
  # when it creates the URL, and takes "already exists" as done; created first, the permission below
  # is that statement, in this configuration's state, and the URL is usable the moment it exists.
  depends_on = [aws_lambda_permission.unsubscribe_url, aws_lambda_permission.unsubscribe_invoke]
}

# With AuthType NONE the function's resource policy must admit the public, and since October 2025 a
# new function URL needs both lambda:InvokeFunctionUrl and lambda:InvokeFunction.
# https://docs.aws.amazon.com/lambda/latest/dg/urls-auth.html
resource "aws_lambda_permission" "unsubscribe_url" {
  #checkov:skip=CKV_AWS_301:The unsubscribe URL is public by design (RFC 8058); this statement applies only to requests through a URL with AuthType NONE (lambda:FunctionUrlAuthType)
  statement_id           = "FunctionURLAllowPublicAccess"
  action                 = "lambda:InvokeFunctionUrl"
  function_name          = module.unsubscribe.function_name
  principal              = "*"
  function_url_auth_type = "NONE"
}

# AWS's statement for it carries the condition lambda:InvokedViaFunctionUrl = true, which AWS
# provider 5.x cannot express (aws_lambda_permission has no invoked_via_function_url before 6.28):
# until this configuration moves to provider 6, anyone may also Invoke the function directly. That
# reaches the same handler with the same kind of event a URL request makes, which it treats as a
# request from anyone: only a token whose MAC verifies changes anything.
resource "aws_lambda_permission" "unsubscribe_invoke" {
  #checkov:skip=CKV_AWS_301:Function URLs made since October 2025 need lambda:InvokeFunction for the public beside lambda:InvokeFunctionUrl; provider 5.x cannot add its lambda:InvokedViaFunctionUrl condition, and the handler trusts nothing in an event but a token that verifies
  statement_id  = "FunctionURLInvokeAllowPublicAccess"
  action        = "lambda:InvokeFunction"
  function_name = module.unsubscribe.function_name
  principal     = "*"
}
