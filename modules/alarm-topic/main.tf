# The SNS topic every alarm of an environment notifies, encrypted with its own KMS key. The AWS
# managed key (alias/aws/sns) cannot be used: its key policy does not let CloudWatch encrypt the
# messages it publishes, so alarms on such a topic never arrive.

data "aws_caller_identity" "current" {}
data "aws_partition" "current" {}

locals {
  account_root = "arn:${data.aws_partition.current.partition}:iam::${data.aws_caller_identity.current.account_id}:root"

  # The account keeps full control of the key through IAM, action by action (no "kms:*"):
  # PutKeyPolicy stays in the list so the policy can always be repaired.
  key_admin_actions = [
    "kms:CancelKeyDeletion", "kms:CreateAlias", "kms:CreateGrant", "kms:Decrypt", "kms:DeleteAlias",
    "kms:DescribeKey", "kms:DisableKey", "kms:DisableKeyRotation", "kms:EnableKey",
    "kms:EnableKeyRotation", "kms:Encrypt", "kms:GenerateDataKey", "kms:GetKeyPolicy",
    "kms:GetKeyRotationStatus", "kms:ListAliases", "kms:ListGrants", "kms:ListKeyPolicies",
    "kms:ListResourceTags", "kms:PutKeyPolicy", "kms:ReEncryptFrom", "kms:ReEncryptTo",
    "kms:RetireGrant", "kms:RevokeGrant", "kms:RotateKeyOnDemand", "kms:ScheduleKeyDeletion",
    "kms:TagResource", "kms:UntagResource", "kms:UpdateAlias", "kms:UpdateKeyDescription",
  ]
}

resource "aws_kms_key" "this" {
  description             = "Encrypts the ${var.name} alarm topic."
  enable_key_rotation     = true
  deletion_window_in_days = var.key_deletion_window_days
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [
      {
        Sid       = "AccountAdministersKey"
        Effect    = "Allow"
        Principal = { AWS = local.account_root }
        Action    = local.key_admin_actions
        Resource  = "*" # In a key policy "*" means this key.
      },
      {
        # CloudWatch alarms and S3 event notifications (the stream failure bucket) publish to the
        # encrypted topic; both need these two actions on its key.
        # https://docs.aws.amazon.com/sns/latest/dg/sns-key-management.html
        Sid       = "AlarmSourcesPublishEncrypted"
        Effect    = "Allow"
        Principal = { Service = ["cloudwatch.amazonaws.com", "s3.amazonaws.com"] }
        Action    = ["kms:Decrypt", "kms:GenerateDataKey*"]
        Resource  = "*"
        Condition = { StringEquals = { "aws:SourceAccount" = data.aws_caller_identity.current.account_id } }
      },
    ]
  })
}

resource "aws_kms_alias" "this" {
  name          = "alias/${var.name}"
  target_key_id = aws_kms_key.this.key_id
}

resource "aws_sns_topic" "this" {
  name              = var.name
  kms_master_key_id = aws_kms_key.this.arn
}

resource "aws_sns_topic_policy" "this" {
  arn = aws_sns_topic.this.arn
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      # CloudWatch alarms, and S3 event notifications of the account's failure buckets.
      # https://docs.aws.amazon.com/AmazonS3/latest/userguide/grant-destinations-permissions-to-s3.html
      Sid       = "AlarmSourcesPublish"
      Effect    = "Allow"
      Principal = { Service = ["cloudwatch.amazonaws.com", "s3.amazonaws.com"] }
      Action    = "sns:Publish"
      Resource  = aws_sns_topic.this.arn
      Condition = { StringEquals = { "aws:SourceAccount" = data.aws_caller_identity.current.account_id } }
    }]
  })
}

resource "aws_sns_topic_subscription" "email" {
  for_each = toset(var.email_endpoints)

  topic_arn = aws_sns_topic.this.arn
  protocol  = "email"
  endpoint  = each.value
}
