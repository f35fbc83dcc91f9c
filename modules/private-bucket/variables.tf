variable "name" {
  description = "Bucket name (globally unique, 3-63 characters: lower-case letters, digits, dots and hyphens)."
  type        = string

  validation {
    condition     = can(regex("^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$", var.name))
    error_message = "Bucket names are 3-63 characters of a-z, 0-9, '.' and '-', starting and ending with a letter or digit."
  }
}

variable "expiration_days" {
  description = "Days after which current objects expire; null keeps them until deleted."
  type        = number
  default     = null

  validation {
    condition     = var.expiration_days == null || try(var.expiration_days >= 1 && floor(var.expiration_days) == var.expiration_days, false)
    error_message = "expiration_days must be a whole number of at least 1, or null."
  }
}

variable "versioning" {
  description = "Keep previous versions of overwritten or deleted objects (they expire after noncurrent_version_expiration_days)."
  type        = bool
  default     = true
}

variable "noncurrent_version_expiration_days" {
  description = "Days a previous object version is kept when versioning is on."
  type        = number
  default     = 30

  validation {
    condition     = var.noncurrent_version_expiration_days >= 1
    error_message = "noncurrent_version_expiration_days must be at least 1."
  }
}

variable "kms_key_arn" {
  description = "Customer managed KMS key for SSE-KMS; null uses SSE-S3 (AES-256)."
  type        = string
  default     = null
}

variable "force_destroy" {
  description = "Allow `terraform destroy` to delete a bucket that still holds objects (local and throwaway environments only)."
  type        = bool
  default     = false
}
