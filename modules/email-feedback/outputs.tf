output "rule_name" {
  description = "The EventBridge rule taking the configuration set's SES events from the default bus."
  value       = aws_cloudwatch_event_rule.ses_events.name
}

output "rule_arn" {
  description = "ARN of the rule (the aws:SourceArn the queue policies admit)."
  value       = aws_cloudwatch_event_rule.ses_events.arn
}

output "event_pattern" {
  description = "The rule's event pattern (JSON)."
  value       = aws_cloudwatch_event_rule.ses_events.event_pattern
}

output "queue_url" {
  description = "URL of the ses-events queue (the unsubscribe endpoint's CONTACT_EVENTS_QUEUE_URL)."
  value       = aws_sqs_queue.events.url
}

output "queue_arn" {
  description = "ARN of the ses-events queue."
  value       = aws_sqs_queue.events.arn
}

output "queue_name" {
  description = "Name of the ses-events queue."
  value       = aws_sqs_queue.events.name
}

output "queue_policy_json" {
  description = "The ses-events queue's policy (EventBridge, for this rule only)."
  value       = aws_sqs_queue_policy.events.policy
}

output "dlq_url" {
  description = "URL of the ses-events DLQ."
  value       = module.dlq.url
}

output "dlq_arn" {
  description = "ARN of the ses-events DLQ (the queue's redrive target and the rule target's dead-letter queue)."
  value       = module.dlq.arn
}

output "dlq_name" {
  description = "Name of the ses-events DLQ."
  value       = module.dlq.name
}

output "max_receive_count" {
  description = "Receives a record gets before SQS moves it to the DLQ."
  value       = var.queue.max_receive_count
}

output "soft_bounce_limit" {
  description = "Soft bounces of distinct messages that stop an address (SOFT_BOUNCE_LIMIT)."
  value       = var.soft_bounce_limit
}

output "consumer_function_name" {
  description = "Name of the SES event consumer."
  value       = module.consumer.function_name
}

output "consumer_function_arn" {
  description = "ARN of the SES event consumer."
  value       = module.consumer.function_arn
}

output "consumer_settings" {
  description = "The consumer's deployed settings (see modules/lambda-function output settings)."
  value       = module.consumer.settings
}

output "consumer_policy_json" {
  description = "The consumer role's inline policy."
  value       = module.consumer.policy_json
}

output "mapping_uuid" {
  description = "UUID of the queue-to-consumer event source mapping."
  value       = aws_lambda_event_source_mapping.events.uuid
}

output "unsubscribe_url" {
  description = "The one-click unsubscribe endpoint's URL (https://<id>.lambda-url.<region>.on.aws/); a link is <url>?t=<token>."
  value       = aws_lambda_function_url.unsubscribe.function_url
}

output "unsubscribe_key_arn" {
  description = "ARN of the KMS HMAC_256 key the links' tokens are made (GenerateMac, HMAC_SHA_256) and verified with (UNSUBSCRIBE_KEY_ID)."
  value       = aws_kms_key.unsubscribe.arn
}

output "unsubscribe_key_alias" {
  description = "The key's alias (alias/<prefix>-unsubscribe)."
  value       = aws_kms_alias.unsubscribe.name
}

output "unsubscribe_key_policy_json" {
  description = "The key's policy: the account administers it, the endpoint's role may verify."
  value       = aws_kms_key.unsubscribe.policy
}

output "unsubscribe_function_name" {
  description = "Name of the unsubscribe endpoint's function."
  value       = module.unsubscribe.function_name
}

output "unsubscribe_function_arn" {
  description = "ARN of the unsubscribe endpoint's function."
  value       = module.unsubscribe.function_arn
}

output "unsubscribe_settings" {
  description = "The endpoint's deployed settings."
  value       = module.unsubscribe.settings
}

output "unsubscribe_policy_json" {
  description = "The endpoint role's inline policy."
  value       = module.unsubscribe.policy_json
}

output "alarm_arns" {
  description = "The DLQ's alarm and both functions' Errors and Throttles alarms."
  value       = concat([module.dlq.alarm_arn], module.consumer.alarm_arns, module.unsubscribe.alarm_arns)
}
