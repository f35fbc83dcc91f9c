output "pipeline" {
  description = "Names, URLs and ARNs of the environment's pipeline."
  value       = module.pipeline
}

output "alarm_topic_arn" {
  description = "SNS topic every alarm notifies."
  value       = local.alarm_topic_arn
}

output "email_sender_identity" {
  description = "SES identity campaign emails are sent from."
  value       = module.pipeline.email_sender_identity
}

output "email_dkim_records" {
  description = "Easy DKIM CNAME records to publish for the SES identity ({name, type, value}); null when this root does not own the identity."
  value       = module.pipeline.email_dkim_records
}

output "email_max_send_rate" {
  description = "Emails per second the email stage is sized for (make preflight compares it with SES's MaxSendRate)."
  value       = module.pipeline.email_max_send_rate
}

output "email_configuration_set" {
  description = "SES configuration set campaign emails are sent with."
  value       = module.pipeline.email_configuration_set
}

output "email_schedule_group" {
  description = "EventBridge Scheduler group of the one-time email schedules."
  value       = module.pipeline.email_schedule_group
}

output "email_worker_arn" {
  description = "Email worker, the target of every email schedule."
  value       = module.pipeline.email_worker_arn
}

output "email_scheduler_role_arn" {
  description = "Role the email schedules invoke the worker with."
  value       = module.pipeline.email_scheduler_role_arn
}

output "email_dlq_arn" {
  description = "Email DLQ of the schedules and the worker."
  value       = module.pipeline.email_dlq_arn
}
