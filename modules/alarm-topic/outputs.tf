output "topic_arn" {
  description = "ARN of the alarm topic."
  value       = aws_sns_topic.this.arn
}

output "kms_key_arn" {
  description = "ARN of the key encrypting the topic."
  value       = aws_kms_key.this.arn
}
