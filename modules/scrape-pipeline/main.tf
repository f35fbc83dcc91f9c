# The scrape stage: one SQS message per task, one scraper invocation per message (batch 1), a
# bounded pool of scrapers (maximum concurrency = reserved concurrency), partial batch responses so
# a retryable failure returns only its own message, and a DLQ after max_receive_count receives with
# an alarm on its first message. Results land in a private bucket.

data "aws_caller_identity" "current" {}
data "aws_partition" "current" {}
data "aws_region" "current" {}

locals {
  # A claim outlives the invocation that took it by this much (modules/tasks-table).
  claim_lease_margin_seconds = var.tasks_table.claim_lease_margin_seconds

  # The longest a task can stay unchanged while SQS may still deliver its message: after each claim
  # or release the message is hidden for at most the visibility timeout (a crashed worker) or the
  # longest retry delay (a released claim), and a claim lives at most the function timeout plus the
  # lease margin. The scrape reconciler re-queues a Running task only after this (modules/reconciler).
  redelivery_horizon_seconds = (
    max(var.queue.visibility_timeout_seconds, max(var.scraper.retry_schedule_seconds...)) +
    var.scraper.timeout_seconds + local.claim_lease_margin_seconds
  )

  queue_name    = "${var.name_prefix}-scrape"
  dlq_name      = "${var.name_prefix}-scrape-dlq"
  function_name = "${var.name_prefix}-scraper"

  # The DLQ only accepts messages redriven from the scrape queue. Its ARN is spelled out here
  # because the queue's redrive policy already refers to the DLQ.
  queue_arn = join(":", [
    "arn", data.aws_partition.current.partition, "sqs", data.aws_region.current.name,
    data.aws_caller_identity.current.account_id, local.queue_name,
  ])
}

module "dlq" {
  source = "../dead-letter-queue"

  name                      = local.dlq_name
  message_retention_seconds = var.queue.dlq_message_retention_seconds
  redrive_source_queue_arns = var.restrict_dlq_sources ? [local.queue_arn] : []
  alarm_description         = "A scrape message exhausted its receives and is waiting in ${local.dlq_name}."
  alarm_actions             = var.alarm_actions
}

# Environments applied before the DLQ came from modules/dead-letter-queue keep their queue and alarm.
moved {
  from = aws_sqs_queue.dlq
  to   = module.dlq.aws_sqs_queue.this
}

moved {
  from = aws_cloudwatch_metric_alarm.dlq_not_empty
  to   = module.dlq.aws_cloudwatch_metric_alarm.this
}

resource "aws_sqs_queue" "queue" {
  name                       = local.queue_name
  visibility_timeout_seconds = var.queue.visibility_timeout_seconds
  message_retention_seconds  = var.queue.message_retention_seconds
  sqs_managed_sse_enabled    = true

  redrive_policy = jsonencode({
    deadLetterTargetArn = module.dlq.arn
    maxReceiveCount     = var.queue.max_receive_count
  })
}

module "results_bucket" {
  source = "../private-bucket"

  name            = var.results_bucket_name
  expiration_days = var.results_expiration_days
  force_destroy   = var.force_destroy_buckets
}

module "scraper" {
  source = "../lambda-function"

  name                 = local.function_name
  description          = "Scrapes one company website per SQS message and records the result on its task."
  handler              = var.handler
  package_path         = var.package_path
  timeout_seconds      = var.scraper.timeout_seconds
  memory_mb            = var.scraper.memory_mb
  reserved_concurrency = var.scraper.reserved_concurrency
  log_retention_days   = var.log_retention_days
  alarm_actions        = var.alarm_actions

  powertools = {
    service_name      = "scraper"
    metrics_namespace = var.powertools_metrics_namespace
    log_level         = var.scraper.log_level
  }

  environment = merge(var.scraper.environment, {
    TASKS_TABLE                = var.tasks_table.name
    SCRAPE_QUEUE_URL           = aws_sqs_queue.queue.url
    SCRAPE_DLQ_URL             = module.dlq.url
    RESULTS_BUCKET             = module.results_bucket.name
    RETRY_SCHEDULE_SECONDS     = join(",", [for d in var.scraper.retry_schedule_seconds : tostring(d)])
    CLAIM_LEASE_MARGIN_SECONDS = tostring(local.claim_lease_margin_seconds)

    SCRAPER_USER_AGENT              = var.scraper.fetch.user_agent
    SCRAPER_CONNECT_TIMEOUT_SECONDS = tostring(var.scraper.fetch.connect_timeout_seconds)
    SCRAPER_READ_TIMEOUT_SECONDS    = tostring(var.scraper.fetch.read_timeout_seconds)
    SCRAPER_MAX_BODY_BYTES          = tostring(var.scraper.fetch.max_body_bytes)
    SCRAPER_MAX_REDIRECTS           = tostring(var.scraper.fetch.max_redirects)
    SCRAPER_ATTEMPTS_PER_URL        = tostring(var.scraper.fetch.attempts_per_url)
    SCRAPER_MAX_EXTRA_PAGES         = tostring(var.scraper.fetch.max_extra_pages)
    SCRAPER_MAX_TEXT_CHARS          = tostring(var.scraper.fetch.max_text_chars)
    SCRAPER_RESPECT_ROBOTS_TXT      = var.scraper.fetch.respect_robots_txt ? "1" : "0"
    SCRAPER_CONNECTIONS_PER_SITE    = tostring(var.scraper.fetch.connections_per_site)
  })

  policy_statements = [
    {
      # Read the scrape task a message names, and only scrape tasks: the scraper parses hostile pages,
      # so it never reads an email row (recipient, message). dynamodb:LeadingKeys is the partition key
      # (task_id) of each item a request names; ForAllValues holds for a request without the key too,
      # so Null = false refuses such a request
      # (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/specifying-conditions.html,
      # https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_condition-single-vs-multi-valued-context-keys.html).
      sid       = "ReadScrapeTasks"
      actions   = ["dynamodb:GetItem"]
      resources = [var.tasks_table.arn]
      conditions = [
        { test = "ForAllValues:StringLike", variable = "dynamodb:LeadingKeys", values = ["scrape#*"] },
        { test = "Null", variable = "dynamodb:LeadingKeys", values = ["false"] },
      ]
    },
    {
      # Claim, release, complete and fail scrape tasks. Every write is an Update, alone or in a
      # TransactWriteItems with the job's counter shards (job#<job>#<0-9>); a transaction is
      # authorized item by item, each as its underlying UpdateItem with its own key
      # (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis-iam.html).
      # Job ids have no '#' (task_ids.validate_job_id), so job#*#? is only ever a counter shard,
      # never a job's own row job#<job>, and scrape#* never an email task.
      sid       = "ClaimAndCompleteTasks"
      actions   = ["dynamodb:UpdateItem"]
      resources = [var.tasks_table.arn]
      conditions = [
        { test = "ForAllValues:StringLike", variable = "dynamodb:LeadingKeys", values = ["scrape#*", "job#*#?"] },
        { test = "Null", variable = "dynamodb:LeadingKeys", values = ["false"] },
      ]
    },
    {
      # The mapping polls with the function's role; the handler changes visibility for backoff.
      sid       = "ConsumeScrapeQueue"
      actions   = ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ChangeMessageVisibility"]
      resources = [aws_sqs_queue.queue.arn]
    },
    {
      # Unreadable messages go straight to the DLQ instead of being retried.
      sid       = "SendUnreadableToDlq"
      actions   = ["sqs:SendMessage"]
      resources = [module.dlq.arn]
    },
    {
      sid       = "WriteResults"
      actions   = ["s3:PutObject"]
      resources = ["${module.results_bucket.arn}/results/*"]
    },
  ]
}

resource "aws_lambda_event_source_mapping" "scrape_queue" {
  event_source_arn                   = aws_sqs_queue.queue.arn
  function_name                      = module.scraper.function_arn
  batch_size                         = var.mapping.batch_size
  maximum_batching_window_in_seconds = var.mapping.maximum_batching_window_in_seconds
  enabled                            = true

  # Without this the handler's batchItemFailures is ignored and every message of a "successful"
  # batch is deleted, including the ones it meant to retry.
  function_response_types = ["ReportBatchItemFailures"]

  scaling_config {
    maximum_concurrency = var.mapping.maximum_concurrency
  }
}
