variable "name" {
  description = "Table name (for example outreach-prod-contacts)."
  type        = string

  validation {
    condition     = can(regex("^[A-Za-z0-9_.-]{3,255}$", var.name))
    error_message = "Table names are 3-255 characters of letters, digits, '_', '-' and '.'."
  }
}

variable "kms_key_arn" {
  description = "Customer managed KMS key for encryption at rest; null uses the AWS managed key (alias/aws/dynamodb)."
  type        = string
  default     = null

  validation {
    condition     = var.kms_key_arn == null || can(regex("^arn:[a-z-]+:kms:[a-z0-9-]+:[0-9]{12}:key/[A-Za-z0-9-]+$", var.kms_key_arn))
    error_message = "kms_key_arn must be a KMS key ARN (arn:<partition>:kms:<region>:<account>:key/<id>), or null."
  }
}

variable "deletion_protection" {
  description = "Refuse DeleteTable while true. Keep it on wherever the ledger holds real opt-outs: losing them means mailing people who asked not to be mailed."
  type        = bool
  default     = true
  nullable    = false
}
