output "receiving_region" {
  description = "The Region SES receives the replies in (the aws.receiving provider's)."
  value       = var.receiving_region
}

output "reply_domain" {
  description = "The domain replies are addressed to (reply+<token>@<reply_domain>)."
  value       = var.reply_domain
}

output "mx_record" {
  description = "The MX record to publish for the reply domain: 10 inbound-smtp.<receiving_region>.amazonaws.com (https://docs.aws.amazon.com/ses/latest/dg/receiving-email-mx-record.html)."
  value       = "10 inbound-smtp.${var.receiving_region}.amazonaws.com"
}

output "unsubscribe_address" {
  description = "The unsubscribe mailbox (List-Unsubscribe's mailto:)."
  value       = "${var.unsubscribe_local_part}@${var.reply_domain}"
}

output "forward_from" {
  description = "The address forwards are sent from (FORWARD_FROM)."
  value       = local.forward_from
}

output "unmatched_forward_to" {
  description = "The mailbox unmatched and unparseable mail is forwarded to (UNMATCHED_FORWARD_TO)."
  value       = var.unmatched_forward_to
}

output "identity_dkim_records" {
  description = "The reply domain identity's Easy DKIM CNAME records in the receiving Region (publish them to verify it; null where create_identity is false). The pipeline Region's identity, when it is another, has the same domain's own tokens: see `aws sesv2 get-email-identity`."
  # Indexed, not one(): dkim_signing_attributes holds a sensitive private key, which a function of the
  # whole block would make the result sensitive too. No tokens reported (moto) gives [].
  value = var.create_identity ? try([
    for token in aws_sesv2_email_identity.receiving[0].dkim_signing_attributes[0].tokens : {
      name  = "${token}._domainkey.${var.reply_domain}"
      type  = "CNAME"
      value = "${token}.dkim.amazonses.com"
    }
  ], []) : null
}

output "rule_set_name" {
  description = "The receipt rule set the rule is in (this module's, active, unless rule_set_name named another)."
  value       = local.rule_set_name
}

output "rule_set_created" {
  description = "Whether this module created (and activated) the rule set."
  value       = local.create_rule_set
}

output "rule_name" {
  description = "The receipt rule."
  value       = aws_ses_receipt_rule.replies.name
}

output "rule_arn" {
  description = "ARN of the receipt rule (the aws:SourceArn the bucket, topic and key policies admit SES for)."
  value       = local.rule_arn
}

output "rule" {
  description = "The rule as planned: recipients, TLS policy, scanning and its S3 action (bucket, prefix, topic)."
  value = {
    recipients   = aws_ses_receipt_rule.replies.recipients
    tls_policy   = aws_ses_receipt_rule.replies.tls_policy
    scan_enabled = aws_ses_receipt_rule.replies.scan_enabled
    enabled      = aws_ses_receipt_rule.replies.enabled
    s3_action    = one(aws_ses_receipt_rule.replies.s3_action)
  }
}

output "bucket" {
  description = "Name of the inbound bucket (INBOUND_BUCKET), in the receiving Region."
  value       = aws_s3_bucket.inbound.bucket
}

output "bucket_arn" {
  description = "ARN of the inbound bucket."
  value       = aws_s3_bucket.inbound.arn
}

output "object_key_prefix" {
  description = "The key prefix SES saves each message under: inbound/<SES message id>."
  value       = local.object_key_prefix
}

output "retention_days" {
  description = "Days a received message is kept."
  value       = one(one(aws_s3_bucket_lifecycle_configuration.inbound.rule).expiration).days
}

output "bucket_policy_json" {
  description = "The bucket's policy: TLS only; SES puts this rule's messages under inbound/."
  value       = aws_s3_bucket_policy.inbound.policy
}

output "topic_arn" {
  description = "ARN of the inbound topic (receiving Region)."
  value       = aws_sns_topic.inbound.arn
}

output "topic_policy_json" {
  description = "The topic's policy: SES publishes this rule's notifications."
  value       = aws_sns_topic_policy.inbound.policy
}

output "topic_key_arn" {
  description = "ARN of the topic's KMS key."
  value       = aws_kms_key.topic.arn
}

output "topic_key_policy_json" {
  description = "The topic key's policy: the account administers it, SES encrypts for this rule."
  value       = aws_kms_key.topic.policy
}

output "subscription" {
  description = "The queue's subscription to the topic: protocol, endpoint, raw delivery."
  value = {
    protocol             = aws_sns_topic_subscription.queue.protocol
    endpoint             = aws_sns_topic_subscription.queue.endpoint
    raw_message_delivery = aws_sns_topic_subscription.queue.raw_message_delivery
  }
}

output "queue_url" {
  description = "URL of the inbound queue."
  value       = aws_sqs_queue.inbound.url
}

output "queue_arn" {
  description = "ARN of the inbound queue."
  value       = aws_sqs_queue.inbound.arn
}

output "queue_name" {
  description = "Name of the inbound queue."
  value       = aws_sqs_queue.inbound.name
}

output "queue_policy_json" {
  description = "The queue's policy: the inbound topic only."
  value       = aws_sqs_queue_policy.inbound.policy
}

output "max_receive_count" {
  description = "Receives a notification gets before SQS moves it to the DLQ."
  value       = var.queue.max_receive_count
}

output "dlq_url" {
  description = "URL of the inbound DLQ."
  value       = module.dlq.url
}

output "dlq_arn" {
  description = "ARN of the inbound DLQ."
  value       = module.dlq.arn
}

output "dlq_name" {
  description = "Name of the inbound DLQ."
  value       = module.dlq.name
}

output "processor_function_name" {
  description = "Name of the inbound processor."
  value       = module.processor.function_name
}

output "processor_function_arn" {
  description = "ARN of the inbound processor."
  value       = module.processor.function_arn
}

output "processor_settings" {
  description = "The processor's deployed settings (see modules/lambda-function output settings)."
  value       = module.processor.settings
}

output "processor_policy_json" {
  description = "The processor role's inline policy."
  value       = module.processor.policy_json
}

output "mapping_uuid" {
  description = "UUID of the queue-to-processor event source mapping."
  value       = aws_lambda_event_source_mapping.inbound.uuid
}

output "alarm_arns" {
  description = "The DLQ's alarm and the processor's Errors and Throttles alarms."
  value       = concat([module.dlq.alarm_arn], module.processor.alarm_arns)
}
