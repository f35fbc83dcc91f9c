output "pipeline" {
  description = "Names, URLs and ARNs of the environment's pipeline."
  value       = module.pipeline
}

output "alarm_topic_arn" {
  description = "SNS topic every alarm notifies."
  value       = local.alarm_topic_arn
}
