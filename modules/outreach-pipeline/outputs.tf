output "tasks_table_name" {
  description = "Tasks table (TASKS_TABLE)."
  value       = module.tasks_table.name
}

output "tasks_table_arn" {
  description = "Tasks table ARN."
  value       = module.tasks_table.arn
}

output "tasks_stream_arn" {
  description = "Tasks table stream ARN."
  value       = module.tasks_table.stream_arn
}

output "open_tasks_index_name" {
  description = "Sparse index of Pending and Running tasks."
  value       = module.tasks_table.open_tasks_index_name
}

output "campaign_open_index_name" {
  description = "Sparse index of open email tasks by campaign, status and shard, sorted by send_at (campaign status and cancel)."
  value       = module.tasks_table.campaign_open_index_name
}

output "open_index_shards" {
  description = "Shards of the open-tasks index key (OPEN_INDEX_SHARDS: the command line creates and reads open tasks with it)."
  value       = module.tasks_table.open_index_shards
}

output "scrape_queue_url" {
  description = "Scrape queue URL."
  value       = module.scrape_pipeline.queue_url
}

output "scrape_dlq_url" {
  description = "Scrape DLQ URL."
  value       = module.scrape_pipeline.dlq_url
}

output "results_bucket" {
  description = "Bucket of scrape results."
  value       = module.scrape_pipeline.results_bucket_name
}

output "scraper_function_name" {
  description = "Scraper function name."
  value       = module.scrape_pipeline.scraper_function_name
}

output "dispatch_mode" {
  description = "Dispatch mode deployed (lambda or pipe)."
  value       = module.stream_dispatch.dispatch_mode
}

output "dispatcher_function_name" {
  description = "Dispatcher function name (null in pipe mode)."
  value       = module.stream_dispatch.dispatcher_function_name
}

output "dispatch_failure_bucket" {
  description = "Bucket of stream batches the dispatcher gave up on (null in pipe mode)."
  value       = module.stream_dispatch.failure_bucket_name
}

output "dispatch_pipe_name" {
  description = "Dispatch pipe name (null in lambda mode)."
  value       = module.stream_dispatch.pipe_name
}

output "dispatch_pipe_dlq_url" {
  description = "Dispatch pipe DLQ URL (null in lambda mode)."
  value       = module.stream_dispatch.pipe_dlq_url
}

output "dashboard_name" {
  description = "CloudWatch dashboard of the environment."
  value       = module.dashboard.name
}

output "alarm_arns" {
  description = "Every alarm of the environment."
  value       = concat(module.scrape_pipeline.alarm_arns, module.stream_dispatch.alarm_arns, module.email.alarm_arns, module.email_feedback.alarm_arns, flatten(module.email_inbound[*].alarm_arns))
}

output "scraper_settings" {
  description = "The scraper's deployed settings (handler, runtime, timeout, memory, reserved concurrency, tracing, environment)."
  value       = module.scrape_pipeline.scraper_settings
}

output "dispatcher_settings" {
  description = "The dispatcher's deployed settings (null in pipe mode)."
  value       = module.stream_dispatch.dispatcher_settings
}

output "scrape_reconciler_function_name" {
  description = "Scrape reconciler function name."
  value       = module.scrape_reconciler.function_name
}

output "scrape_reconciler_function_arn" {
  description = "Scrape reconciler function ARN (the only scrape-side target `outreach dlq replay reconciler` invokes)."
  value       = module.scrape_reconciler.function_arn
}

output "scrape_reconciler_schedule_arn" {
  description = "ARN of the EventBridge Scheduler schedule that runs the scrape reconciler."
  value       = module.scrape_reconciler.schedule_arn
}

output "scrape_reconciler_dlq_url" {
  description = "DLQ of failed scrape reconciler runs."
  value       = module.scrape_reconciler.dlq_url
}

output "reconciler_thresholds" {
  description = "Seconds a scrape task must stay unchanged before the reconciler acts (pending: re-send; running: re-queue or abandon)."
  value = {
    pending_after_seconds = module.stream_dispatch.dispatch_horizon_seconds
    running_after_seconds = module.scrape_pipeline.redelivery_horizon_seconds
  }
}

output "results_expiration_days" {
  description = "Days after which scrape results expire, as the results bucket's lifecycle rule has it."
  value       = module.scrape_pipeline.results_expiration_days
}

output "email_sender_identity" {
  description = "The SES identity campaigns send from."
  value       = module.email.sender_identity
}

output "email_dkim_records" {
  description = "The Easy DKIM CNAME records ({name, type, value}) to publish for the sender identity; null when this environment does not own the identity."
  value       = module.email.dkim_records
}

output "email_max_send_rate" {
  description = "Emails per second the email stage is sized for (the worker reserves ceil of it unless set)."
  value       = module.email.max_send_rate
}

output "email_worker_settings" {
  description = "The email worker's deployed settings (reserved concurrency: ceil(email.max_send_rate) unless email.worker sets it)."
  value       = module.email.worker_settings
}

output "email_configuration_set" {
  description = "The SES configuration set campaign emails are sent with."
  value       = module.email.configuration_set_name
}

output "email_schedule_group" {
  description = "The Scheduler group of the one-time email schedules."
  value       = module.email.schedule_group_name
}

output "email_worker_arn" {
  description = "The email worker, the target of every email schedule."
  value       = module.email.worker_function_arn
}

output "email_scheduler_role_arn" {
  description = "The role email schedules invoke the worker with."
  value       = module.email.scheduler_role_arn
}

output "email_dlq_arn" {
  description = "The email DLQ: deliveries and invocations given up on."
  value       = module.email.dlq_arn
}

output "email_dlq_url" {
  description = "The email DLQ's URL."
  value       = module.email.dlq_url
}

output "email_worker_function_name" {
  description = "The email worker's function name."
  value       = module.email.worker_function_name
}

output "email_reconciler_function_name" {
  description = "The email reconciler's function name."
  value       = module.email.reconciler_function_name
}

output "email_reconciler_function_arn" {
  description = "The email reconciler's function ARN (a target `outreach dlq replay reconciler` may invoke)."
  value       = module.email.reconciler_function_arn
}

output "email_reconciler_thresholds" {
  description = "Seconds an email task must stay unchanged before the email reconciler acts."
  value       = module.email.reconciler_thresholds
}

output "contacts_table_name" {
  description = "The contact ledger (CONTACTS_TABLE): one record per address and blocked domain."
  value       = module.contact_ledger.name
}

output "contacts_table_arn" {
  description = "The contact ledger's ARN."
  value       = module.contact_ledger.arn
}

output "recipient_emails_index_name" {
  description = "The tasks table's index of email tasks by normalised recipient."
  value       = module.tasks_table.recipient_emails_index_name
}

output "ses_events_rule_name" {
  description = "The EventBridge rule that takes the configuration set's SES events to the ses-events queue."
  value       = module.email_feedback.rule_name
}

output "ses_events_queue_url" {
  description = "The ses-events queue: SES events and unsubscribe fan-outs, read by the SES event consumer."
  value       = module.email_feedback.queue_url
}

output "ses_events_dlq_url" {
  description = "The ses-events DLQ: records the consumer failed, events EventBridge could not deliver."
  value       = module.email_feedback.dlq_url
}

output "ses_event_consumer_function_name" {
  description = "The SES event consumer's function name."
  value       = module.email_feedback.consumer_function_name
}

output "ses_event_consumer_settings" {
  description = "The SES event consumer's deployed settings (SOFT_BOUNCE_LIMIT among them)."
  value       = module.email_feedback.consumer_settings
}

output "soft_bounce_limit" {
  description = "Soft bounces of distinct messages that stop an address."
  value       = module.email_feedback.soft_bounce_limit
}

output "unsubscribe_url" {
  description = "The one-click unsubscribe endpoint (a function URL); a link is <url>?t=<token>."
  value       = module.email_feedback.unsubscribe_url
}

output "unsubscribe_key_arn" {
  description = "The KMS HMAC key the unsubscribe tokens are made (kms:GenerateMac, by the operator's CLI) and verified with."
  value       = module.email_feedback.unsubscribe_key_arn
}

output "unsubscribe_function_name" {
  description = "The unsubscribe endpoint's function name."
  value       = module.email_feedback.unsubscribe_function_name
}

output "unsubscribe_settings" {
  description = "The unsubscribe endpoint's deployed settings."
  value       = module.email_feedback.unsubscribe_settings
}

output "inbound_receiving_region" {
  description = "The Region SES receives replies in (null without inbound)."
  value       = one(module.email_inbound[*].receiving_region)
}

output "inbound_reply_domain" {
  description = "The domain of the reply addresses, reply+<token>@<domain> (null without inbound)."
  value       = one(module.email_inbound[*].reply_domain)
}

output "inbound_mx_record" {
  description = "The MX record to publish for the reply domain, 10 inbound-smtp.<receiving Region>.amazonaws.com (null without inbound)."
  value       = one(module.email_inbound[*].mx_record)
}

output "inbound_dkim_records" {
  description = "The reply domain identity's Easy DKIM records in the receiving Region (null without inbound or when the identity is not created here)."
  value       = one(module.email_inbound[*].identity_dkim_records)
}

output "inbound_unsubscribe_address" {
  description = "The unsubscribe mailbox on the reply domain, List-Unsubscribe's mailto: (null without inbound)."
  value       = one(module.email_inbound[*].unsubscribe_address)
}

output "inbound_forward_from" {
  description = "The address forwards are sent from (null without inbound)."
  value       = one(module.email_inbound[*].forward_from)
}

output "inbound_rule_set_name" {
  description = "The receipt rule set the replies' rule is in (null without inbound)."
  value       = one(module.email_inbound[*].rule_set_name)
}

output "inbound_rule_name" {
  description = "The receipt rule of the reply domain (null without inbound)."
  value       = one(module.email_inbound[*].rule_name)
}

output "inbound_bucket" {
  description = "The bucket every received message is kept in, inbound/<SES message id>, in the receiving Region (null without inbound)."
  value       = one(module.email_inbound[*].bucket)
}

output "inbound_topic_arn" {
  description = "The topic SES announces each received message on (null without inbound)."
  value       = one(module.email_inbound[*].topic_arn)
}

output "inbound_queue_url" {
  description = "The inbound queue the processor reads (null without inbound)."
  value       = one(module.email_inbound[*].queue_url)
}

output "inbound_dlq_url" {
  description = "The inbound DLQ: notifications the processor failed (null without inbound)."
  value       = one(module.email_inbound[*].dlq_url)
}

output "inbound_processor_function_name" {
  description = "The inbound processor's function name (null without inbound)."
  value       = one(module.email_inbound[*].processor_function_name)
}

output "inbound_processor_settings" {
  description = "The inbound processor's deployed settings (null without inbound)."
  value       = one(module.email_inbound[*].processor_settings)
}

output "inbound_processor_policy_json" {
  description = "The inbound processor role's inline policy (null without inbound)."
  value       = one(module.email_inbound[*].processor_policy_json)
}

output "root_outputs" {
  description = "What an environment root shows under its own top-level names besides this module (its `pipeline` output): the alarm topic, what the email stage is scheduled and verified through, what the contact ledger, the SES events and the unsubscribe endpoint are reached by, and the replies' (null without inbound). scripts/outreach_dev/terraform_outputs.py lifts each non-null one to the root's top level."
  value = {
    alarm_topic_arn          = var.alarm_topic_arn
    email_sender_identity    = module.email.sender_identity
    email_dkim_records       = module.email.dkim_records
    email_max_send_rate      = module.email.max_send_rate
    email_configuration_set  = module.email.configuration_set_name
    email_schedule_group     = module.email.schedule_group_name
    email_worker_arn         = module.email.worker_function_arn
    email_scheduler_role_arn = module.email.scheduler_role_arn
    email_dlq_arn            = module.email.dlq_arn
    email_warmup             = module.email.warmup
    # The reputation stop alarms, comma-separated: `outreach sending status` shows which is in ALARM.
    email_reputation_stop_alarms = join(",", values(module.email.reputation_stop_alarm_names))
    email_reputation_stop_rule   = module.email.reputation_stop_rule_name

    contacts_table_name              = module.contact_ledger.name
    unsubscribe_url                  = module.email_feedback.unsubscribe_url
    unsubscribe_key_arn              = module.email_feedback.unsubscribe_key_arn
    ses_events_queue_url             = module.email_feedback.queue_url
    ses_events_dlq_url               = module.email_feedback.dlq_url
    ses_event_consumer_function_name = module.email_feedback.consumer_function_name
    unsubscribe_function_name        = module.email_feedback.unsubscribe_function_name

    # Replies (null without inbound).
    inbound_reply_domain            = one(module.email_inbound[*].reply_domain)
    inbound_receiving_region        = one(module.email_inbound[*].receiving_region)
    inbound_mx_record               = one(module.email_inbound[*].mx_record)
    inbound_dkim_records            = one(module.email_inbound[*].identity_dkim_records)
    inbound_unsubscribe_address     = one(module.email_inbound[*].unsubscribe_address)
    inbound_bucket                  = one(module.email_inbound[*].bucket)
    inbound_queue_url               = one(module.email_inbound[*].queue_url)
    inbound_dlq_url                 = one(module.email_inbound[*].dlq_url)
    inbound_processor_function_name = one(module.email_inbound[*].processor_function_name)
  }
}
