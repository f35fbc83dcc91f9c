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

variable "open_index_shards" {
  description = "Shards the open-tasks index key is written over (the functions' OPEN_INDEX_SHARDS): a task goes to the shard of a hash of its id, readers query every shard. One index partition key takes at most 1,000 write units per second; one creator writes 1,737 tasks per second (docs/performance.md, rows of at most 1 KB: one write unit each), so shards = ceil(creators at once x 1,737 / 1,000): 7 for four jobs created at once, 8 with one to spare. Each reconciler run reads at least one page per shard and status."
  type        = number
  default     = 8
  nullable    = false

  validation {
    condition     = var.open_index_shards >= 1 && var.open_index_shards <= 100 && floor(var.open_index_shards) == var.open_index_shards
    error_message = "open_index_shards must be a whole number from 1 to 100 (every reader queries each shard)."
  }
}
