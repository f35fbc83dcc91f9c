output "sender_identity" {
  description = "The SES identity campaigns send from (created here, or the existing one named by sender_identity)."
  value       = var.create_sender_identity ? aws_sesv2_email_identity.sender[0].email_identity : var.sender_identity
}

output "dkim_records" {
  description = <<-EOT
    The Easy DKIM CNAME records to publish in the sender domain's DNS so SES verifies the identity
    and signs its mail: one {name = "<token>._domainkey.<domain>", type = "CNAME", value =
    "<token>.dkim.amazonses.com"} per token SES generated (three for a domain). null when this module
    does not create the identity: its owner publishes them. Known after apply.
  EOT
  # https://docs.aws.amazon.com/ses/latest/dg/send-email-authentication-dkim-easy.html
  # https://docs.aws.amazon.com/ses/latest/APIReference/API_VerifyDomainDkim.html (name and value)
  # The identity uses Easy DKIM (no dkim_signing_attributes here); no tokens reported (moto) gives [].
  value = var.create_sender_identity ? try([
    for token in aws_sesv2_email_identity.sender[0].dkim_signing_attributes[0].tokens : {
      name  = "${token}._domainkey.${local.sender_domain}"
      type  = "CNAME"
      value = "${token}.dkim.amazonses.com"
    }
  ], []) : null
}

output "max_send_rate" {
  description = "Emails per second the stage is sized for (max_send_rate); compare it with the account's SES MaxSendRate (sesv2 GetAccount)."
  value       = var.max_send_rate
}

output "configuration_set_name" {
  description = "The SES configuration set every campaign email is sent with (EMAIL_CONFIGURATION_SET)."
  value       = aws_sesv2_configuration_set.this.configuration_set_name
}

output "schedule_group_name" {
  description = "The Scheduler group of the one-time email schedules (EMAIL_SCHEDULE_GROUP)."
  value       = aws_scheduler_schedule_group.this.name
}

output "schedules_arn" {
  description = "The ARN pattern of the email group's schedules (schedule/<group>/*), for the permissions of the functions that manage them."
  value       = local.schedules_arn
}

output "published_event_types" {
  description = "The SES event types the configuration set publishes to the default event bus."
  value       = aws_sesv2_configuration_set_event_destination.events.event_destination[0].matching_event_types
}

output "worker_function_arn" {
  description = "The email worker, the schedules' target (EMAIL_WORKER_ARN)."
  value       = module.worker.function_arn
}

output "worker_function_name" {
  description = "The email worker's function name."
  value       = module.worker.function_name
}

output "worker_settings" {
  description = "The worker's deployed settings (see modules/lambda-function output settings)."
  value       = module.worker.settings
}

output "worker_async_invocation" {
  description = "The worker's asynchronous invocation settings (retries, event age, on-failure destination)."
  value       = module.worker.async_invocation
}

output "worker_policy_json" {
  description = "The worker's least-privilege policy (without the suppression-list statement)."
  value       = module.worker.policy_json
}

output "scheduler_role_arn" {
  description = "The role the schedules assume to invoke the worker (EMAIL_SCHEDULER_ROLE_ARN)."
  value       = aws_iam_role.scheduler.arn
}

output "dlq_arn" {
  description = "The email DLQ, the schedules' dead-letter queue and the worker's on-failure destination (EMAIL_DLQ_ARN)."
  value       = module.dlq.arn
}

output "dlq_url" {
  description = "The email DLQ's URL."
  value       = module.dlq.url
}

output "dlq_name" {
  description = "The email DLQ's name."
  value       = module.dlq.name
}

output "reconciler_function_name" {
  description = "The email reconciler's function name."
  value       = module.reconciler.function_name
}

output "reconciler_function_arn" {
  description = "The email reconciler's function ARN."
  value       = module.reconciler.function_arn
}

output "reconciler_schedule_arn" {
  description = "The EventBridge Scheduler schedule that runs the email reconciler."
  value       = module.reconciler.schedule_arn
}

output "reconciler_dlq_name" {
  description = "The DLQ of failed email reconciler runs."
  value       = module.reconciler.dlq_name
}

output "reconciler_settings" {
  description = "The email reconciler's deployed settings."
  value       = module.reconciler.settings
}

output "reconciler_thresholds" {
  description = "Seconds an email task must stay unchanged before the reconciler acts (pending: check its schedule; running: delivery_unknown)."
  value = {
    pending_after_seconds = local.pending_after_seconds
    running_after_seconds = local.running_after_seconds
  }
}

output "alarm_arns" {
  description = "Every alarm of the email stage."
  value = concat(
    [module.dlq.alarm_arn],
    module.worker.alarm_arns,
    module.reconciler.alarm_arns,
    [for alarm in aws_cloudwatch_metric_alarm.reputation : alarm.arn],
    [for alarm in aws_cloudwatch_metric_alarm.reputation_stop : alarm.arn],
    [module.guard_dlq.alarm_arn],
    module.sending_guard.alarm_arns,
  )
}

output "warmup" {
  description = "The sending identity's warm-up ramp the worker enforces ({start_date, daily_caps}, defaults applied; start_date null: an established identity), for `outreach campaign schedule` to plan under."
  value = {
    start_date = var.warmup.start_date
    daily_caps = var.warmup.daily_caps
  }
}

output "reputation_stop_alarm_names" {
  description = "The reputation stop alarms (bounce, complaint): at ALARM the sending guard pauses the configuration set."
  value       = { for key, alarm in aws_cloudwatch_metric_alarm.reputation_stop : key => alarm.alarm_name }
}

output "reputation_stop_levels" {
  description = "The account's SES bounce and complaint rates at which sending pauses (reputation_stop_levels)."
  value       = var.reputation_stop_levels
}

output "reputation_stop_rule_name" {
  description = "The EventBridge rule that hands the stop alarms' ALARM events to the sending guard (DISABLED without reputation_guard_enabled)."
  value       = aws_cloudwatch_event_rule.reputation_stop.name
}

output "sending_guard_function_name" {
  description = "The sending guard's function name."
  value       = module.sending_guard.function_name
}

output "sending_guard_policy_json" {
  description = "The sending guard's least-privilege policy."
  value       = module.sending_guard.policy_json
}

output "sending_guard_dlq_name" {
  description = "The sending guard's DLQ: stop-alarm events that did not pause sending."
  value       = module.guard_dlq.name
}
