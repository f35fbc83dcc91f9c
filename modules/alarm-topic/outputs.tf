output "topic_arn" {
  description = "ARN of the alarm topic (available once its policy lets CloudWatch and S3 publish)."
  value       = aws_sns_topic_policy.this.arn
}

output "kms_key_arn" {
  description = "ARN of the key encrypting the topic."
  value       = aws_kms_key.this.arn
}
