variable "name" {
  description = "Topic name; also names the topic's KMS key alias."
  type        = string

  validation {
    condition     = can(regex("^[A-Za-z0-9_-]{1,256}$", var.name))
    error_message = "Topic names are letters, digits, '-' and '_'."
  }
}

variable "email_endpoints" {
  description = "Addresses subscribed to the topic (each must confirm its subscription)."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for e in var.email_endpoints : can(regex("^[^@\\s]+@[^@\\s]+$", e))])
    error_message = "email_endpoints must be e-mail addresses."
  }
}

variable "key_deletion_window_days" {
  description = "Days a deleted KMS key can still be recovered (7-30)."
  type        = number
  default     = 30

  validation {
    condition     = var.key_deletion_window_days >= 7 && var.key_deletion_window_days <= 30
    error_message = "key_deletion_window_days must be between 7 and 30."
  }
}
