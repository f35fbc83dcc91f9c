variable "region" {
  description = "AWS region of the environment."
  type        = string
}

variable "allowed_account_ids" {
  description = "AWS account ids this root may deploy to; plan and apply refuse any other (null: any account)."
  type        = list(string)
  default     = null
}

variable "package_dir" {
  description = "Directory holding the zips from `make package`; null means the repository's dist/."
  type        = string
  default     = null
}

variable "dispatch_mode" {
  description = "\"lambda\" (dispatcher function) or \"pipe\" (EventBridge Pipe) between the tasks stream and the scrape queue."
  type        = string
  default     = "lambda"
}

variable "alarm_emails" {
  description = "Addresses subscribed to the alarm topic this root creates (each must confirm its subscription)."
  type        = list(string)
  default     = []

  validation {
    condition     = length(var.alarm_emails) > 0 || var.alarm_topic_arn != null
    error_message = "prod needs someone to alarm: set alarm_emails (at least one address) or alarm_topic_arn (an existing topic), e.g. in a prod.auto.tfvars that is not committed."
  }
}

variable "alarm_topic_arn" {
  description = <<-EOT
    An existing SNS topic to send every alarm to instead of creating one (for example the on-call
    paging topic). Its policy must let cloudwatch.amazonaws.com and s3.amazonaws.com of this account
    publish, and its KMS key policy must grant them kms:GenerateDataKey* and kms:Decrypt
    (modules/alarm-topic shows both).
  EOT
  type        = string
  default     = null

  validation {
    condition     = var.alarm_topic_arn == null || can(regex("^arn:[a-z-]+:sns:", var.alarm_topic_arn))
    error_message = "alarm_topic_arn must be an SNS topic ARN."
  }
}

variable "scraper_concurrency" {
  description = "Reserved concurrency of the scraper and maximum concurrency of its queue mapping (2-1000)."
  type        = number
}

variable "log_retention_days" {
  description = "Days CloudWatch keeps function logs."
  type        = number
}

variable "email_sender_identity" {
  description = "SES identity (domain or address) campaign emails are sent from; verify it in SES (DNS records or the address's inbox) after the first apply. Set it in an uncommitted *.auto.tfvars."
  type        = string
}

variable "email_create_sender_identity" {
  description = "Whether this root creates (and on destroy deletes) the SES identity email_sender_identity; false where another root of the same account and region owns it, e.g. dev beside prod (docs/deploying.md). null: modules/email's default, true."
  type        = bool
  default     = null
}

variable "email_max_send_rate" {
  description = "Emails per second the email stage is sized for, at most the account's SES MaxSendRate (aws sesv2 get-account); the email worker reserves ceil of it. null: modules/email's default (14)."
  type        = number
  default     = null
}

variable "email_warmup" {
  description = "The sending identity's warm-up ramp ({start_date = \"YYYY-MM-DD\", daily_caps = [...]}): set start_date to the UTC day a new sending domain starts sending; the worker holds every UTC day under its cap and campaign schedule plans under it (docs/operator-cli.md, \"Warm-up ramp per sending identity\"). null: modules/email's default, an established identity (no ramp)."
  type = object({
    start_date = optional(string)
    daily_caps = optional(list(number))
  })
  default = null
}

variable "results_expiration_days" {
  description = "Days prod keeps scrape results (terraform.tfvars: 90; see docs/security.md, Retention); null takes the scrape-pipeline module's default."
  type        = number
  default     = null
}

variable "receiving_region" {
  description = "The Region SES receives replies in (the aws.receiving provider's; modules/email-inbound refuses one where SES does not receive email). null: the root's region."
  type        = string
  default     = null
}

variable "inbound_reply_domain" {
  description = "The domain of the reply addresses (reply+<token>@<domain>), a domain of its own such as reply.example.com whose MX record points at SES (docs/deploying.md, Receiving replies). null: no replies are received. Set it in an uncommitted *.auto.tfvars."
  type        = string
  default     = null
}

variable "inbound_unmatched_forward_to" {
  description = "The mailbox unmatched and unparseable replies are forwarded to (and the owner of campaigns that name none); required with inbound_reply_domain."
  type        = string
  default     = null

  validation {
    condition     = var.inbound_reply_domain == null || var.inbound_unmatched_forward_to != null
    error_message = "inbound_unmatched_forward_to is required with inbound_reply_domain: a reply that matches no email must reach someone."
  }
}

variable "inbound_rule_set_name" {
  description = "An existing, active SES receipt rule set (another root's, e.g. prod's beside dev in one account and receiving Region) to add the replies' rule to; null: the pipeline creates and activates its own (one rule set is active per Region and account)."
  type        = string
  default     = null
}
