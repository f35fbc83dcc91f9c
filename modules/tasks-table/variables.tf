variable "name" {
  description = "Table name."
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
}

variable "deletion_protection" {
  description = "Refuse DeleteTable while true. Keep it on in every environment that holds real tasks."
  type        = bool
  default     = true
}

variable "claim_lease_margin_seconds" {
  description = "Seconds a claim on a task outlives the invocation that took it (the functions' CLAIM_LEASE_MARGIN_SECONDS), so no live worker loses its task; the reconcilers' thresholds include it."
  type        = number
  default     = 60
  nullable    = false

  validation {
    condition     = var.claim_lease_margin_seconds >= 1 && floor(var.claim_lease_margin_seconds) == var.claim_lease_margin_seconds
    error_message = "claim_lease_margin_seconds must be a whole number of seconds, at least 1."
  }
}
