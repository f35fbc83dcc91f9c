# The whole pipeline of one environment. Each environment root under terraform/environments calls
# this module once with its own settings, so every environment runs the same wiring:
#
#   tasks table --stream--> stream-dispatch (lambda | pipe) --> scrape queue --> scraper
#                                                                  `--> DLQ (alarm)
#   email tasks --one-time schedules--> email worker --> SES          (modules/email)
#                                         `--> email DLQ (alarm)
#   SES events --default bus, rule--> ses-events queue --> SES event consumer   (modules/email-feedback)
#   one-click unsubscribe (function URL) --> contact ledger, ses-events queue
#   replies --SES receiving (aws.receiving), S3, SNS--> inbound queue --> inbound processor
#     --> ledger, follow-ups stopped or postponed, forwards             (modules/email-inbound, optional)
#   contact ledger: read before every send, raised by the events and unsubscribes (modules/contact-ledger)
#
# The reconcilers (EventBridge Scheduler rate() schedules, every 5 and 30 minutes) and the email
# schedules invoke Lambda asynchronously, so their functions pass `async_invocation` to
# modules/lambda-function for finite retries and an on-failure destination.

data "aws_caller_identity" "current" {}
data "aws_region" "current" {}

locals {
  name_prefix       = "outreach-${var.environment}"
  metrics_namespace = "OutreachPipeline/${var.environment}"
  alarm_actions     = [var.alarm_topic_arn]

  # Bucket names are global: the account and region make them unique without committing either.
  bucket_suffix = "${data.aws_caller_identity.current.account_id}-${data.aws_region.current.name}"

  # The functions (functions.json, which `make package` reads too): each one's handler and the zip
  # `make package` builds for it, <package_dir>/<name>.zip.
  functions = jsondecode(file("${path.module}/functions.json")).functions
  handlers  = { for name, function in local.functions : name => function.handler }
  packages  = { for name in keys(local.functions) : name => "${var.package_dir}/${name}.zip" }
}

module "tasks_table" {
  source = "../tasks-table"

  name                = "${local.name_prefix}-tasks"
  deletion_protection = var.deletion_protection
  open_index_shards   = var.open_index_shards
}

# One record per address and blocked domain: whether the pipeline may still write to it.
module "contact_ledger" {
  source = "../contact-ledger"

  name                = "${local.name_prefix}-contacts"
  deletion_protection = var.deletion_protection
}

module "scrape_pipeline" {
  source = "../scrape-pipeline"

  name_prefix                  = local.name_prefix
  tasks_table                  = { name = module.tasks_table.name, arn = module.tasks_table.arn, claim_lease_margin_seconds = module.tasks_table.claim_lease_margin_seconds }
  handler                      = local.handlers.scraper
  package_path                 = local.packages.scraper
  results_bucket_name          = "${local.name_prefix}-results-${local.bucket_suffix}"
  results_expiration_days      = var.results_expiration_days
  force_destroy_buckets        = var.force_destroy_buckets
  queue                        = var.scrape_queue
  restrict_dlq_sources         = var.restrict_dlq_sources
  scraper                      = var.scraper
  mapping                      = var.scrape_mapping
  powertools_metrics_namespace = local.metrics_namespace
  log_retention_days           = var.log_retention_days
  alarm_actions                = local.alarm_actions
}

module "stream_dispatch" {
  source = "../stream-dispatch"

  name_prefix   = local.name_prefix
  dispatch_mode = var.dispatch_mode
  tasks_table = {
    name       = module.tasks_table.name
    arn        = module.tasks_table.arn
    stream_arn = module.tasks_table.stream_arn
  }
  scrape_queue                   = { url = module.scrape_pipeline.queue_url, arn = module.scrape_pipeline.queue_arn }
  handler                        = local.handlers.dispatcher
  package_path                   = local.packages.dispatcher
  stream                         = var.stream
  dispatcher                     = var.dispatcher
  failure_bucket_name            = "${local.name_prefix}-failures-${local.bucket_suffix}"
  failure_record_expiration_days = var.failure_record_expiration_days
  failure_notification_topic_arn = var.alarm_topic_arn
  pipe_source_settle_seconds     = var.pipe_source_settle_seconds
  force_destroy_buckets          = var.force_destroy_buckets
  powertools_metrics_namespace   = local.metrics_namespace
  log_retention_days             = var.log_retention_days
  alarm_actions                  = local.alarm_actions
}

# Heals scrape tasks the retries can no longer reach. Its thresholds come from the applied
# settings of the stages it watches (modules/reconciler/README.md shows the arithmetic).
module "scrape_reconciler" {
  source = "../reconciler"

  name                = "${local.name_prefix}-scrape-reconciler"
  description         = "Re-queues, re-sends or abandons scrape tasks that no retry can reach any more."
  handler             = local.handlers.scrape_reconciler
  package_path        = local.packages.scrape_reconciler
  schedule_expression = var.scrape_reconciler.schedule_expression
  timeout_seconds     = var.scrape_reconciler.timeout_seconds
  log_retention_days  = var.log_retention_days
  alarm_actions       = local.alarm_actions

  powertools = {
    service_name      = "scrape-reconciler"
    metrics_namespace = local.metrics_namespace
    log_level         = var.scrape_reconciler.log_level
  }

  environment = {
    TASKS_TABLE                     = module.tasks_table.name
    OPEN_INDEX_SHARDS               = tostring(module.tasks_table.open_index_shards)
    SCRAPE_QUEUE_URL                = module.scrape_pipeline.queue_url
    RECONCILE_PENDING_AFTER_SECONDS = tostring(module.stream_dispatch.dispatch_horizon_seconds)
    RECONCILE_RUNNING_AFTER_SECONDS = tostring(module.scrape_pipeline.redelivery_horizon_seconds)
    # Two messages' worth of receives: one re-queue after the first message is used up.
    MAX_TASK_ATTEMPTS = tostring(var.scrape_reconciler.message_lifetimes * module.scrape_pipeline.max_receive_count)
  }

  policy_statements = [
    {
      sid       = "ReadOpenTasks"
      actions   = ["dynamodb:Query"]
      resources = [module.tasks_table.open_tasks_index_arn]
    },
    {
      # Conditional requeue, abandon and re-send marks; the counters change in the same transaction.
      # Only scrape tasks and counter shards (job#<job>#<0-9>; job ids have no '#'): dynamodb:LeadingKeys
      # is each item's partition key, Null = false refuses a request without one
      # (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/specifying-conditions.html).
      sid       = "MoveStrandedTasks"
      actions   = ["dynamodb:UpdateItem"]
      resources = [module.tasks_table.arn]
      conditions = [
        { test = "ForAllValues:StringLike", variable = "dynamodb:LeadingKeys", values = ["scrape#*", "job#*#?"] },
        { test = "Null", variable = "dynamodb:LeadingKeys", values = ["false"] },
      ]
    },
    {
      sid       = "ResendScrapeMessages"
      actions   = ["sqs:SendMessage"]
      resources = [module.scrape_pipeline.queue_arn]
    },
  ]
}

# Timed campaign email: schedules, worker, email DLQ, SES configuration set, email reconciler.
module "email" {
  source = "../email"

  name_prefix = local.name_prefix
  tasks_table = {
    name                 = module.tasks_table.name
    arn                  = module.tasks_table.arn
    open_tasks_index_arn = module.tasks_table.open_tasks_index_arn
    # The worker's claims and the reconciler's running threshold use the table's lease margin.
    claim_lease_margin_seconds = module.tasks_table.claim_lease_margin_seconds
    # The reconciler queries every shard of the open-tasks key.
    open_index_shards = module.tasks_table.open_index_shards
  }
  contact_ledger = {
    name         = module.contact_ledger.name
    arn          = module.contact_ledger.arn
    key_patterns = module.contact_ledger.key_patterns
  }
  handlers = {
    worker        = local.handlers.email_worker
    reconciler    = local.handlers.email_reconciler
    sending_guard = local.handlers.sending_guard
  }
  packages = {
    worker        = local.packages.email_worker
    reconciler    = local.packages.email_reconciler
    sending_guard = local.packages.sending_guard
  }
  sender_identity                 = var.email.sender_identity
  create_sender_identity          = var.email.create_sender_identity
  max_send_rate                   = var.email.max_send_rate
  send_grace_seconds              = var.email.send_grace_seconds
  first_contact                   = var.email.first_contact
  warmup                          = var.email.warmup
  paused_recheck_seconds          = var.email.paused_recheck_seconds
  reputation_alarm_levels         = var.email.reputation_alarm_levels
  reputation_stop_levels          = var.email.reputation_stop_levels
  reputation_alarm_period_seconds = var.email.reputation_alarm_period_seconds
  reputation_guard_enabled        = var.email.reputation_guard_enabled
  sending_guard                   = var.email.sending_guard
  worker                          = var.email.worker
  reconciler                      = var.email.reconciler
  powertools_metrics_namespace    = local.metrics_namespace
  log_retention_days              = var.log_retention_days
  alarm_actions                   = local.alarm_actions
}

# What recipients say back: SES's events and the one-click unsubscribe, into the ledger and the tasks.
module "email_feedback" {
  source = "../email-feedback"

  name_prefix            = local.name_prefix
  configuration_set_name = module.email.configuration_set_name
  schedules = {
    group_name = module.email.schedule_group_name
    arn        = module.email.schedules_arn
  }
  tasks_table = {
    name                       = module.tasks_table.name
    arn                        = module.tasks_table.arn
    recipient_emails_index_arn = module.tasks_table.recipient_emails_index_arn
  }
  contact_ledger = {
    name         = module.contact_ledger.name
    arn          = module.contact_ledger.arn
    key_patterns = module.contact_ledger.key_patterns
  }
  handlers = {
    consumer    = local.handlers.ses_event_consumer
    unsubscribe = local.handlers.unsubscribe
  }
  packages = {
    consumer    = local.packages.ses_event_consumer
    unsubscribe = local.packages.unsubscribe
  }
  soft_bounce_limit                    = var.email_feedback.soft_bounce_limit
  queue                                = var.email_feedback.queue
  consumer                             = var.email_feedback.consumer
  mapping                              = var.email_feedback.mapping
  unsubscribe                          = var.email_feedback.unsubscribe
  unsubscribe_key_deletion_window_days = var.email_feedback.unsubscribe_key_deletion_window_days
  powertools_metrics_namespace         = local.metrics_namespace
  log_retention_days                   = var.log_retention_days
  alarm_actions                        = local.alarm_actions
}

# Replies to the campaigns' reply addresses (var.inbound; null: none): SES receives them in the
# receiving Region (aws.receiving), the processor runs here.
module "email_inbound" {
  source = "../email-inbound"
  count  = var.inbound == null ? 0 : 1

  providers = {
    aws           = aws
    aws.receiving = aws.receiving
  }

  name_prefix             = local.name_prefix
  receiving_region        = var.inbound.receiving_region
  reply_domain            = var.inbound.reply_domain
  unmatched_forward_to    = var.inbound.unmatched_forward_to
  unsubscribe_local_part  = var.inbound.unsubscribe_local_part
  forward_from_local_part = var.inbound.forward_from_local_part
  away_default_days       = var.inbound.away_default_days
  max_message_bytes       = var.inbound.max_message_bytes
  retention_days          = var.inbound.retention_days
  rule_set_name           = var.inbound.rule_set_name
  create_identity         = var.inbound.create_identity
  soft_bounce_limit       = module.email_feedback.soft_bounce_limit
  # Global names: the account and the receiving Region make it unique.
  bucket_name                    = "${local.name_prefix}-inbound-${data.aws_caller_identity.current.account_id}-${var.inbound.receiving_region}"
  force_destroy_bucket           = var.force_destroy_buckets
  topic_key_deletion_window_days = var.inbound.topic_key_deletion_window_days
  tasks_table = {
    name                       = module.tasks_table.name
    arn                        = module.tasks_table.arn
    reply_handles_index_arn    = module.tasks_table.reply_handles_index_arn
    recipient_emails_index_arn = module.tasks_table.recipient_emails_index_arn
  }
  contact_ledger = {
    name         = module.contact_ledger.name
    arn          = module.contact_ledger.arn
    key_patterns = module.contact_ledger.key_patterns
  }
  reply_token_key_arn = module.email_feedback.unsubscribe_key_arn
  email_schedules = {
    group_name         = module.email.schedule_group_name
    schedules_arn      = module.email.schedules_arn
    worker_arn         = module.email.worker_function_arn
    scheduler_role_arn = module.email.scheduler_role_arn
    dlq_arn            = module.email.dlq_arn
  }
  handler      = local.handlers.inbound_processor
  package_path = local.packages.inbound_processor

  # The worker's asynchronous event age is modules/email's send_grace_seconds: the schedules a
  # postponement writes keep to it as the worker's own do.
  send_grace_seconds = module.email.worker_async_invocation.maximum_event_age_in_seconds

  # Spelled as conditionals for checkov, which scans this module with inbound = null too (Terraform
  # creates no instance then): its settings are then the module's defaults, which it checks.
  queue                        = var.inbound == null ? {} : var.inbound.queue
  processor                    = var.inbound == null ? {} : var.inbound.processor
  mapping                      = var.inbound == null ? {} : var.inbound.mapping
  powertools_metrics_namespace = local.metrics_namespace
  log_retention_days           = var.log_retention_days
  alarm_actions                = local.alarm_actions
}

module "dashboard" {
  source = "../dashboard"

  name              = local.name_prefix
  region            = data.aws_region.current.name
  scrape_queue_name = module.scrape_pipeline.queue_name
  dlq_names = compact([
    module.scrape_pipeline.dlq_name,
    module.stream_dispatch.pipe_dlq_name,
    module.scrape_reconciler.dlq_name,
    module.email.dlq_name,
    module.email.reconciler_dlq_name,
    module.email.sending_guard_dlq_name,
    module.email_feedback.dlq_name,
    one(module.email_inbound[*].dlq_name),
  ])
  function_names = compact([
    module.stream_dispatch.dispatcher_function_name,
    module.scrape_pipeline.scraper_function_name,
    module.scrape_reconciler.function_name,
    module.email.worker_function_name,
    module.email.reconciler_function_name,
    module.email.sending_guard_function_name,
    module.email_feedback.consumer_function_name,
    module.email_feedback.unsubscribe_function_name,
    one(module.email_inbound[*].processor_function_name),
  ])
  scraper = {
    function_name       = module.scrape_pipeline.scraper_function_name
    maximum_concurrency = module.scrape_pipeline.mapping_maximum_concurrency
  }
  dispatcher_function_name = module.stream_dispatch.dispatcher_function_name
  pipe_name                = module.stream_dispatch.pipe_name
}
