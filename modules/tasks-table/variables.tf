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
