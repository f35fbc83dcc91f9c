# Turns "a scrape task became Pending" on the tasks table's stream into one SQS message per task.
#
# lambda mode: the dispatcher function reads the stream through an event source mapping that
#   starts at TRIM_HORIZON, bisects failed batches, retries a bounded number of times within a
#   bounded record age, lets the handler report the first failed record (ReportBatchItemFailures),
#   and writes batches it gives up on to an S3 bucket (S3 destinations receive the records
#   themselves, not only their sequence numbers).
# pipe mode: an EventBridge Pipe moves the same records straight to the queue through an input
#   template, with the same bounds, automatic bisect and its own DLQ.
#
# Both modes filter with the same patterns, so nothing else reaches the dispatcher or the queue:
# an INSERT of a Pending scrape task, or a MODIFY that makes a scrape task Pending again.

data "aws_caller_identity" "current" {}

locals {
  lambda_mode = var.dispatch_mode == "lambda"
  pipe_mode   = var.dispatch_mode == "pipe"

  # DynamoDB event source mappings filter on the `dynamodb` key only
  # (https://docs.aws.amazon.com/lambda/latest/dg/with-ddb-filtering.html), so "became Pending" is
  # told by the old image: none (an insert: the status leaf is absent) or one with another status.
  # The dispatcher checks the same rule again on every record it gets.
  becomes_pending_patterns = [
    jsonencode({
      dynamodb = {
        NewImage = { kind = { S = ["scrape"] }, status = { S = ["Pending"] } }
        OldImage = { status = { S = [{ exists = false }] } }
      }
    }),
    jsonencode({
      dynamodb = {
        NewImage = { kind = { S = ["scrape"] }, status = { S = ["Pending"] } }
        OldImage = { status = { S = [{ "anything-but" = ["Pending"] }] } }
      }
    }),
  ]

  # Pipes applies the template to each record; the result is the scrape message body. Written
  # literally: jsonencode would escape the angle brackets of the placeholder.
  pipe_input_template = "{\"task_id\": \"<$.dynamodb.Keys.task_id.S>\"}"
  # Each message's group is the task's tenant, the unit SQS fair queues share the scrape queue by: the
  # row's message_group, one of the tenants its job is spread over at creation
  # (functions/outreach/scrape_tenants.py); a dynamic path parameter, read from the record at run time
  # (eb-pipes-event-target.html). The dispatcher sends the same group. The reconciler's requeue writes
  # the attribute on a row that lacks it; a record still without it (a row written before rows named
  # their tenant, made Pending by an operator's requeue) is left unsent (what a pipe does with a path
  # the record lacks is unconfirmed; the embedded AWS fails it at the target, so it ends in the DLQ),
  # and the scrape reconciler sends its message with its job as its group.
  pipe_message_group = "$.dynamodb.NewImage.message_group.S"

  stream_read_statements = [
    {
      sid       = "ReadTaskStream"
      actions   = ["dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"]
      resources = [var.tasks_table.stream_arn]
    },
    {
      sid       = "ListTaskStreams"
      actions   = ["dynamodb:ListStreams"]
      resources = ["${var.tasks_table.arn}/stream/*"]
    },
  ]

  # The longest a scrape task can stay Pending while the stream may still dispatch it: the mapping
  # (or pipe) retries a record until it is maximum_record_age old, then writes it to the failure
  # bucket (DLQ); one more invocation may still be running. The scrape reconciler re-sends a Pending
  # task only after this (modules/reconciler).
  dispatch_horizon_seconds = var.stream.maximum_record_age_in_seconds + var.dispatcher.timeout_seconds

  dispatcher_name = "${var.name_prefix}-dispatcher"
  pipe_name       = "${var.name_prefix}-dispatch"
  pipe_dlq_name   = "${var.name_prefix}-dispatch-dlq"
}

# ---------------------------------------------------------------------------------------------
# lambda mode
# ---------------------------------------------------------------------------------------------

module "failure_bucket" {
  source = "../private-bucket"
  count  = local.lambda_mode ? 1 : 0

  name            = var.failure_bucket_name
  expiration_days = var.failure_record_expiration_days
  force_destroy   = var.force_destroy_buckets
}

module "dispatcher" {
  source = "../lambda-function"
  count  = local.lambda_mode ? 1 : 0

  name                 = local.dispatcher_name
  description          = "Sends one scrape message per task that became Pending on the tasks stream."
  handler              = var.handler
  package_path         = var.package_path
  timeout_seconds      = var.dispatcher.timeout_seconds
  memory_mb            = var.dispatcher.memory_mb
  reserved_concurrency = var.dispatcher.reserved_concurrency
  log_retention_days   = var.log_retention_days
  alarm_actions        = var.alarm_actions

  powertools = {
    service_name      = "dispatcher"
    metrics_namespace = var.powertools_metrics_namespace
    log_level         = var.dispatcher.log_level
  }

  environment = {
    TASKS_TABLE      = var.tasks_table.name
    SCRAPE_QUEUE_URL = var.scrape_queue.url
  }

  policy_statements = concat(local.stream_read_statements, [
    {
      sid       = "SendScrapeMessages"
      actions   = ["sqs:SendMessage"]
      resources = [var.scrape_queue.arn]
    },
    {
      # The mapping writes the failed batch to S3 with the function's role; AWS documents
      # s3:PutObject on the objects and s3:ListBucket on the bucket for S3 destinations.
      sid       = "WriteFailedBatches"
      actions   = ["s3:PutObject"]
      resources = ["${module.failure_bucket[0].arn}/*"]
    },
    {
      sid       = "ListFailureBucket"
      actions   = ["s3:ListBucket"]
      resources = [module.failure_bucket[0].arn]
    },
  ])
}

resource "aws_lambda_event_source_mapping" "stream" {
  count = local.lambda_mode ? 1 : 0

  event_source_arn                   = var.tasks_table.stream_arn
  function_name                      = module.dispatcher[0].function_arn
  starting_position                  = var.stream.starting_position
  batch_size                         = var.stream.batch_size
  maximum_batching_window_in_seconds = var.stream.maximum_batching_window_in_seconds
  parallelization_factor             = var.stream.parallelization_factor
  bisect_batch_on_function_error     = true
  maximum_retry_attempts             = var.stream.maximum_retry_attempts
  maximum_record_age_in_seconds      = var.stream.maximum_record_age_in_seconds
  function_response_types            = ["ReportBatchItemFailures"]
  enabled                            = true

  filter_criteria {
    dynamic "filter" {
      for_each = local.becomes_pending_patterns
      content {
        pattern = filter.value
      }
    }
  }

  destination_config {
    on_failure {
      destination_arn = module.failure_bucket[0].arn
    }
  }
}

resource "aws_cloudwatch_metric_alarm" "iterator_age" {
  count = local.lambda_mode ? 1 : 0

  alarm_name          = "${local.dispatcher_name}-iterator-age"
  alarm_description   = "The dispatcher is falling behind the tasks stream; records expire after 24 hours."
  namespace           = "AWS/Lambda"
  metric_name         = "IteratorAge"
  dimensions          = { FunctionName = module.dispatcher[0].function_name }
  statistic           = "Maximum"
  period              = 60
  evaluation_periods  = 5
  threshold           = var.iterator_age_alarm_threshold_ms
  comparison_operator = "GreaterThanThreshold"
  treat_missing_data  = "notBreaching"
  alarm_actions       = var.alarm_actions
  ok_actions          = var.alarm_actions
}

# Nothing reads the failure bucket on its own, and a reported batchItemFailures entry is not a
# function error, so the Errors alarm stays quiet when the mapping gives up on a batch. Every
# failure record therefore notifies the alarm topic the moment it is written.
# https://docs.aws.amazon.com/AmazonS3/latest/userguide/ways-to-add-notification-config-to-bucket.html
resource "aws_s3_bucket_notification" "failure_records" {
  count = local.lambda_mode ? 1 : 0

  bucket = module.failure_bucket[0].name

  topic {
    topic_arn = var.failure_notification_topic_arn
    events    = ["s3:ObjectCreated:*"]
  }
}

# ---------------------------------------------------------------------------------------------
# pipe mode
# ---------------------------------------------------------------------------------------------

module "pipe_dlq" {
  source = "../dead-letter-queue"
  count  = local.pipe_mode ? 1 : 0

  name                      = local.pipe_dlq_name
  message_retention_seconds = var.pipe_dlq_message_retention_seconds
  alarm_description         = "The dispatch pipe gave up on stream records; they wait in ${local.pipe_dlq_name}."
  alarm_actions             = var.alarm_actions
}

# Environments applied before the DLQ came from modules/dead-letter-queue keep their queue and alarm.
moved {
  from = aws_sqs_queue.pipe_dlq[0]
  to   = module.pipe_dlq[0].aws_sqs_queue.this
}

moved {
  from = aws_cloudwatch_metric_alarm.pipe_dlq_not_empty[0]
  to   = module.pipe_dlq[0].aws_cloudwatch_metric_alarm.this
}

resource "aws_iam_role" "pipe" {
  count = local.pipe_mode ? 1 : 0

  name        = "${local.pipe_name}-pipe-role"
  description = "Role of the ${local.pipe_name} pipe."
  assume_role_policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Effect    = "Allow"
      Principal = { Service = "pipes.amazonaws.com" }
      Action    = "sts:AssumeRole"
      Condition = { StringEquals = { "aws:SourceAccount" = data.aws_caller_identity.current.account_id } }
    }]
  })
}

resource "aws_iam_role_policy" "pipe" {
  count = local.pipe_mode ? 1 : 0

  name = "least-privilege"
  role = aws_iam_role.pipe[0].id
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [for s in concat(local.stream_read_statements, [
      {
        sid       = "SendScrapeMessages"
        actions   = ["sqs:SendMessage"]
        resources = [var.scrape_queue.arn]
      },
      {
        sid       = "SendUndeliveredToDlq"
        actions   = ["sqs:SendMessage"]
        resources = [module.pipe_dlq[0].arn]
      },
      ]) : {
      Sid      = s.sid
      Effect   = "Allow"
      Action   = s.actions
      Resource = s.resources
    }]
  })
}

# A pipe whose DynamoDB stream source and role are created in the same apply is refused ("Cannot
# access stream ... ensure the customer role can perform actions on source stream") until IAM and the
# new stream have settled; the provider does not retry it (terraform-provider-aws issue 40572, where
# waits above 90 s were needed). With the aws provider and Terraform built-ins alone, the wait is a
# terraform_data whose local-exec sleeps once, whenever the stream or the role's policy changes.
resource "terraform_data" "pipe_source_settle" {
  count = local.pipe_mode && var.pipe_source_settle_seconds > 0 ? 1 : 0

  triggers_replace = [var.tasks_table.stream_arn, aws_iam_role_policy.pipe[0].policy]

  provisioner "local-exec" {
    command = "sleep ${var.pipe_source_settle_seconds}"
  }
}

resource "aws_pipes_pipe" "dispatch" {
  count = local.pipe_mode ? 1 : 0

  name          = local.pipe_name
  description   = "Sends one scrape message per task that became Pending on the tasks stream."
  role_arn      = aws_iam_role.pipe[0].arn
  source        = var.tasks_table.stream_arn
  target        = var.scrape_queue.arn
  desired_state = "RUNNING"

  source_parameters {
    dynamodb_stream_parameters {
      starting_position                  = var.stream.starting_position
      batch_size                         = var.stream.batch_size
      maximum_batching_window_in_seconds = var.stream.maximum_batching_window_in_seconds
      parallelization_factor             = var.stream.parallelization_factor
      maximum_retry_attempts             = var.stream.maximum_retry_attempts
      maximum_record_age_in_seconds      = var.stream.maximum_record_age_in_seconds
      on_partial_batch_item_failure      = "AUTOMATIC_BISECT"

      dead_letter_config {
        arn = module.pipe_dlq[0].arn
      }
    }

    filter_criteria {
      dynamic "filter" {
        for_each = local.becomes_pending_patterns
        content {
          pattern = filter.value
        }
      }
    }
  }

  target_parameters {
    input_template = local.pipe_input_template

    sqs_queue_parameters {
      message_group_id = local.pipe_message_group
    }
  }

  # The pipe validates its role and source when it is created.
  depends_on = [aws_iam_role_policy.pipe, terraform_data.pipe_source_settle]
}
