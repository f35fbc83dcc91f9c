variable "name_prefix" {
  description = "Prefix of every resource name (for example outreach-prod): <prefix>-inbound (rule set, topic, queue, key alias), <prefix>-replies (receipt rule), <prefix>-inbound-dlq, <prefix>-inbound-processor."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{1,30}$", var.name_prefix))
    error_message = "name_prefix must be 2-31 characters of a-z, 0-9 and '-', starting with a letter."
  }
}

variable "receiving_region" {
  description = <<-EOT
    The AWS Region SES receives the replies in: the Region of the aws.receiving provider, where the
    receipt rule, the bucket and the topic live (INBOUND_BUCKET_REGION). SES receives email only in
    some Regions: receiving_regions.json lists those the SES Developer Guide names
    (https://docs.aws.amazon.com/ses/latest/dg/regions.html#region-receive-email); the domain's MX
    record points at inbound-smtp.<receiving_region>.amazonaws.com.
  EOT
  type        = string

  # The Regions of SES's Email Receiving endpoints (receiving_regions.json, which make preflight
  # reads too): https://docs.aws.amazon.com/ses/latest/dg/regions.html#region-receive-email, which
  # defers to the table of https://docs.aws.amazon.com/general/latest/gr/ses.html. Checked 2026-12-02
  # against the guide's page (no version or date on it; the file's "checked" says how): eleven
  # Regions, unchanged.
  validation {
    condition     = contains(local.receiving_regions, var.receiving_region)
    error_message = "receiving_region must be a Region where SES receives email (modules/email-inbound/receiving_regions.json, from https://docs.aws.amazon.com/ses/latest/dg/regions.html#region-receive-email)."
  }
}

variable "reply_domain" {
  description = "The domain replies are addressed to (reply+<token>@<reply_domain>, REPLY_DOMAIN): the receipt rule's recipient, an SES domain identity in both Regions, and the domain of the unsubscribe mailbox and of the forwarder. A domain of its own (reply.example.com), whose MX record points at SES."
  type        = string

  # RFC 1035 labels (letters, digits, inner hyphens, at most 63 each), at least two, lower case
  # (SES matches recipients case-insensitively; the token's address is written in lower case).
  validation {
    condition     = length(var.reply_domain) <= 253 && can(regex("^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\\.)+[a-z]([a-z0-9-]{0,61}[a-z0-9])?$", var.reply_domain))
    error_message = "reply_domain must be a lower-case domain name such as reply.example.com."
  }
}

variable "unsubscribe_local_part" {
  description = "The local part of the unsubscribe mailbox on the reply domain (UNSUBSCRIBE_LOCAL_PART): List-Unsubscribe's mailto: <unsubscribe_local_part>@<reply_domain>. Mail to it records an opt-out."
  type        = string
  default     = "unsubscribe"
  nullable    = false

  # A dot-atom local part of letters, digits, '.', '_' and '-' (RFC 5322 3.4.1), at most 64 octets
  # (RFC 5321 4.5.3.1.1); no '+', which the reply addresses use.
  validation {
    condition     = can(regex("^[a-z0-9]([a-z0-9._-]{0,62}[a-z0-9])?$", var.unsubscribe_local_part))
    error_message = "unsubscribe_local_part must be 1-64 lower-case letters, digits, '.', '_' and '-', starting and ending with a letter or digit."
  }
}

variable "forward_from_local_part" {
  description = "The local part of the address forwards are sent from (FORWARD_FROM = <forward_from_local_part>@<reply_domain>), the only From the processor may send with."
  type        = string
  default     = "forwarder"
  nullable    = false

  validation {
    condition     = can(regex("^[a-z0-9]([a-z0-9._-]{0,62}[a-z0-9])?$", var.forward_from_local_part))
    error_message = "forward_from_local_part must be 1-64 lower-case letters, digits, '.', '_' and '-', starting and ending with a letter or digit."
  }

  validation {
    condition     = var.forward_from_local_part != var.unsubscribe_local_part
    error_message = "forward_from_local_part must differ from unsubscribe_local_part: a reply to a forward would be taken for an unsubscribe."
  }
}

variable "unmatched_forward_to" {
  description = "The mailbox unmatched and unparseable mail is forwarded to (UNMATCHED_FORWARD_TO), and the owner of replies to a campaign that names none. Not on the reply domain: a forward there would come back."
  type        = string

  validation {
    condition     = length(var.unmatched_forward_to) <= 254 && can(regex("^[^@\\s]{1,64}@[^@\\s]+\\.[^@\\s]+$", var.unmatched_forward_to))
    error_message = "unmatched_forward_to must be one email address (local@domain, at most 254 characters)."
  }

  validation {
    condition     = !endswith(lower(var.unmatched_forward_to), "@${var.reply_domain}") && !endswith(lower(var.unmatched_forward_to), ".${var.reply_domain}")
    error_message = "unmatched_forward_to must not be on the reply domain: the forward would be received again."
  }
}

variable "away_default_days" {
  description = "Days of absence assumed when an out-of-office reply names no return date (AWAY_DEFAULT_DAYS): the next step waits that long. 1-90."
  type        = number
  default     = 7
  nullable    = false

  validation {
    condition     = var.away_default_days >= 1 && var.away_default_days <= 90 && floor(var.away_default_days) == var.away_default_days
    error_message = "away_default_days must be a whole number from 1 to 90."
  }
}

variable "max_message_bytes" {
  description = "The largest received message the processor reads (INBOUND_MAX_MESSAGE_BYTES); a bigger one is kept in S3 and forwarded as unmatched without its body. SES receives at most 40 MB, headers included (https://docs.aws.amazon.com/ses/latest/APIReference/API_S3Action.html)."
  type        = number
  default     = 10485760
  nullable    = false

  validation {
    condition     = var.max_message_bytes >= 65536 && var.max_message_bytes <= 41943040 && floor(var.max_message_bytes) == var.max_message_bytes
    error_message = "max_message_bytes must be a whole number from 65536 (64 KB) to 41943040 (SES receiving's 40 MB)."
  }
}

variable "soft_bounce_limit" {
  description = "Soft bounces of distinct messages that stop an address (SOFT_BOUNCE_LIMIT): a delivery status notification the processor receives counts as SES's own bounce event does. modules/email-feedback owns the default; pass its soft_bounce_limit output."
  type        = number

  validation {
    condition     = var.soft_bounce_limit >= 1 && var.soft_bounce_limit <= 20 && floor(var.soft_bounce_limit) == var.soft_bounce_limit
    error_message = "soft_bounce_limit must be a whole number from 1 to 20."
  }
}

variable "retention_days" {
  description = <<-EOT
    Days the raw messages are kept in the inbound bucket (its lifecycle expiration), 1-3650. At least
    as long as a notification can wait in the DLQ (queue.dlq_message_retention_seconds), so a
    replayed notification still finds its message.
  EOT
  type        = number
  default     = 30
  nullable    = false

  validation {
    condition     = var.retention_days >= 1 && var.retention_days <= 3650 && floor(var.retention_days) == var.retention_days
    error_message = "retention_days must be a whole number from 1 to 3650."
  }

  validation {
    condition     = var.retention_days * 86400 >= var.queue.dlq_message_retention_seconds
    error_message = "retention_days must cover queue.dlq_message_retention_seconds: a notification replayed from the DLQ would find its message expired."
  }
}

variable "rule_set_name" {
  description = <<-EOT
    SES has one active receipt rule set per Region and account
    (https://docs.aws.amazon.com/ses/latest/APIReference/API_SetActiveReceiptRuleSet.html). null:
    this module creates <prefix>-inbound and makes it the active one. A name: the module adds its
    rule to that existing rule set, which another root (or an operator) owns and activates, e.g. dev
    beside prod in one account and receiving Region.
  EOT
  type        = string
  default     = null

  # https://docs.aws.amazon.com/ses/latest/APIReference/API_CreateReceiptRuleSet.html
  validation {
    condition     = var.rule_set_name == null || can(regex("^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$", var.rule_set_name))
    error_message = "rule_set_name must be 1-64 letters, digits, '.', '_' and '-', starting with a letter or digit, or null."
  }
}

variable "create_identity" {
  description = "Whether this module creates the SES domain identity of reply_domain (in the receiving Region, and in the pipeline's Region when it differs). false where it exists already; it must be verified in both Regions either way."
  type        = bool
  default     = true
  nullable    = false
}

variable "bucket_name" {
  description = "Name of the inbound bucket (globally unique, 3-63 characters), created in the receiving Region."
  type        = string

  validation {
    condition     = can(regex("^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$", var.bucket_name))
    error_message = "Bucket names are 3-63 characters of a-z, 0-9, '.' and '-', starting and ending with a letter or digit."
  }
}

variable "bucket_kms_key_arn" {
  description = "A customer managed KMS key (in the receiving Region) the bucket encrypts with; null: SSE-S3. A key's policy must let ses.amazonaws.com kms:GenerateDataKey* for this rule (README), and the processor gets kms:Decrypt on it."
  type        = string
  default     = null

  validation {
    condition     = var.bucket_kms_key_arn == null || can(regex("^arn:[a-z-]+:kms:[a-z0-9-]+:[0-9]{12}:key/[A-Za-z0-9-]+$", var.bucket_kms_key_arn))
    error_message = "bucket_kms_key_arn must be a KMS key ARN (arn:<partition>:kms:<region>:<account>:key/<id>), or null."
  }
}

variable "force_destroy_bucket" {
  description = "Let `terraform destroy` delete the bucket while it holds messages (local and throwaway environments only)."
  type        = bool
  default     = false
  nullable    = false
}

variable "topic_key_deletion_window_days" {
  description = "Days KMS waits before deleting the topic's key once it is scheduled for deletion (7-30)."
  type        = number
  default     = 30
  nullable    = false

  # https://docs.aws.amazon.com/kms/latest/APIReference/API_ScheduleKeyDeletion.html
  validation {
    condition     = var.topic_key_deletion_window_days >= 7 && var.topic_key_deletion_window_days <= 30 && floor(var.topic_key_deletion_window_days) == var.topic_key_deletion_window_days
    error_message = "topic_key_deletion_window_days must be a whole number from 7 to 30."
  }
}

variable "tasks_table" {
  description = "The tasks table: name, ARN and the ARNs of its reply-handles and recipient-emails indexes (modules/tasks-table)."
  type = object({
    name                       = string
    arn                        = string
    reply_handles_index_arn    = string
    recipient_emails_index_arn = string
  })
}

variable "contact_ledger" {
  description = "The contact ledger: name, ARN and the dynamodb:LeadingKeys patterns of its address and domain records (modules/contact-ledger)."
  type = object({
    name = string
    arn  = string
    key_patterns = object({
      address = string
      domain  = string
    })
  })
}

variable "reply_token_key_arn" {
  description = "The KMS HMAC key the reply tokens are made and checked with (UNSUBSCRIBE_KEY_ID; modules/email-feedback output unsubscribe_key_arn: the reply token uses it with its own payload prefix)."
  type        = string

  validation {
    condition     = can(regex("^arn:[a-z-]+:kms:[a-z0-9-]+:[0-9]{12}:key/[A-Za-z0-9-]+$", var.reply_token_key_arn))
    error_message = "reply_token_key_arn must be a KMS key ARN."
  }
}

variable "email_schedules" {
  description = "What a postponed email's new schedule needs (modules/email outputs): the group (EMAIL_SCHEDULE_GROUP) and its schedules' ARN pattern, the worker (EMAIL_WORKER_ARN), the scheduler role (EMAIL_SCHEDULER_ROLE_ARN) and the email DLQ (EMAIL_DLQ_ARN)."
  type = object({
    group_name         = string
    schedules_arn      = string
    worker_arn         = string
    scheduler_role_arn = string
    dlq_arn            = string
  })
}

variable "send_grace_seconds" {
  description = "modules/email's send_grace_seconds, as the email worker has it (EMAIL_SEND_GRACE_SECONDS): how long a postponed email's new schedule keeps retrying the worker. null: the variable is not set, and the processor's schedules take the core's default (outreach.config.email_send_grace_seconds); modules/outreach-pipeline always passes it."
  type        = number
  default     = null
}

variable "handler" {
  description = "Python entry point of the inbound processor (from modules/outreach-pipeline/functions.json)."
  type        = string
}

variable "package_path" {
  description = "Deployment zip of the inbound processor from `make package`."
  type        = string
}

variable "queue" {
  description = <<-EOT
    The inbound queue and its DLQ. The visibility timeout must be at least six times the processor's
    timeout (AWS's guidance for SQS event sources), and the DLQ must keep messages longer than the
    queue (a moved message keeps its original enqueue time). A notification the processor fails
    max_receive_count times goes to the DLQ.
  EOT
  type = object({
    visibility_timeout_seconds    = optional(number, 360)
    message_retention_seconds     = optional(number, 345600)
    max_receive_count             = optional(number, 5)
    dlq_message_retention_seconds = optional(number, 1209600)
  })
  default  = {}
  nullable = false

  # https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html (visibility timeout)
  validation {
    condition     = var.queue.visibility_timeout_seconds >= 6 * var.processor.timeout_seconds && var.queue.visibility_timeout_seconds <= 43200
    error_message = "queue.visibility_timeout_seconds must be at least 6 x processor.timeout_seconds and at most 43200 (12 hours)."
  }

  validation {
    condition = alltrue([
      for r in [var.queue.message_retention_seconds, var.queue.dlq_message_retention_seconds] : r >= 60 && r <= 1209600
    ])
    error_message = "Queue retention periods must be between 60 and 1209600 seconds (14 days)."
  }

  # https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html
  validation {
    condition     = var.queue.dlq_message_retention_seconds > var.queue.message_retention_seconds
    error_message = "queue.dlq_message_retention_seconds must be longer than queue.message_retention_seconds, or messages expire in the DLQ before anyone sees them."
  }

  validation {
    condition     = var.queue.max_receive_count >= 1 && var.queue.max_receive_count <= 1000 && floor(var.queue.max_receive_count) == var.queue.max_receive_count
    error_message = "queue.max_receive_count must be a whole number from 1 to 1000."
  }
}

variable "processor" {
  description = "The inbound processor: timeout, memory (a message of max_message_bytes is read whole and forwarded), reserved concurrency (at least the mapping's maximum concurrency) and log level."
  type = object({
    timeout_seconds      = optional(number, 60)
    memory_mb            = optional(number, 512)
    reserved_concurrency = optional(number, 5)
    log_level            = optional(string, "INFO")
  })
  default  = {}
  nullable = false

  validation {
    condition     = var.processor.reserved_concurrency >= 1 && floor(var.processor.reserved_concurrency) == var.processor.reserved_concurrency
    error_message = "processor.reserved_concurrency must be a whole number of at least 1."
  }
}

variable "mapping" {
  description = "The inbound queue's event source mapping: records per batch, batching window and maximum concurrency."
  type = object({
    batch_size                         = optional(number, 5)
    maximum_batching_window_in_seconds = optional(number, 0)
    maximum_concurrency                = optional(number, 5)
  })
  default  = {}
  nullable = false

  # https://docs.aws.amazon.com/lambda/latest/api/API_ScalingConfig.html (2-1000)
  validation {
    condition     = var.mapping.maximum_concurrency >= 2 && var.mapping.maximum_concurrency <= 1000
    error_message = "mapping.maximum_concurrency must be between 2 and 1000."
  }

  validation {
    condition     = var.mapping.maximum_concurrency <= var.processor.reserved_concurrency
    error_message = "mapping.maximum_concurrency must not exceed processor.reserved_concurrency, or the mapping's invocations are throttled."
  }

  validation {
    condition     = var.mapping.maximum_batching_window_in_seconds >= 0 && var.mapping.maximum_batching_window_in_seconds <= 300
    error_message = "mapping.maximum_batching_window_in_seconds must be between 0 and 300."
  }

  # https://docs.aws.amazon.com/lambda/latest/api/API_CreateEventSourceMapping.html (BatchSize)
  validation {
    condition = var.mapping.batch_size >= 1 && floor(var.mapping.batch_size) == var.mapping.batch_size && (
      var.mapping.maximum_batching_window_in_seconds == 0 ? var.mapping.batch_size <= 10 : var.mapping.batch_size <= 10000
    )
    error_message = "mapping.batch_size must be 1-10 without a batching window, and at most 10000 with one."
  }
}

variable "powertools_metrics_namespace" {
  description = "CloudWatch namespace of the processor's Powertools metrics."
  type        = string
}

variable "log_retention_days" {
  description = "Days CloudWatch keeps the processor's logs."
  type        = number
  default     = 30
  nullable    = false
}

variable "alarm_actions" {
  description = "ARNs notified by the DLQ and processor alarms (the environment's SNS topic)."
  type        = list(string)
}
