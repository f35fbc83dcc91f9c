output "name" {
  description = "Bucket name."
  value       = aws_s3_bucket.this.bucket
}

output "arn" {
  description = "Bucket ARN."
  value       = aws_s3_bucket.this.arn
}

output "expiration_days" {
  description = "Days after which the lifecycle rule expires current objects, as planned on the rule (null: kept until deleted)."
  value       = try(one(one(aws_s3_bucket_lifecycle_configuration.this.rule).expiration).days, null)
}
