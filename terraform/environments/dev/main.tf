provider "aws" {
  region = var.region
  # The provider refuses credentials of any other account (null: not pinned; make preflight checks it too).
  allowed_account_ids = var.allowed_account_ids

  default_tags {
    tags = {
      Project     = "outreach-pipeline"
      Environment = "dev"
      ManagedBy   = "terraform"
    }
  }
}

locals {
  package_dir     = coalesce(var.package_dir, "${path.root}/../../../dist")
  alarm_topic_arn = coalesce(var.alarm_topic_arn, one(module.alarm_topic[*].topic_arn))
}

# The environment's alarm topic, unless an existing one is given.
module "alarm_topic" {
  source = "../../../modules/alarm-topic"
  count  = var.alarm_topic_arn == null ? 1 : 0

  name            = "outreach-dev-alarms"
  email_endpoints = var.alarm_emails
}

module "pipeline" {
  source = "../../../modules/outreach-pipeline"
  providers = {
    aws           = aws
    aws.receiving = aws.receiving
  }

  environment   = "dev"
  dispatch_mode = var.dispatch_mode
  package_dir   = local.package_dir
  email = {
    sender_identity        = var.email_sender_identity
    create_sender_identity = var.email_create_sender_identity
    max_send_rate          = var.email_max_send_rate
    warmup                 = var.email_warmup
  }
  # Replies are received once the root names its reply domain (receiving.tf); null: none.
  inbound = var.inbound_reply_domain == null ? null : {
    receiving_region     = local.receiving_region
    reply_domain         = var.inbound_reply_domain
    unmatched_forward_to = var.inbound_unmatched_forward_to
    rule_set_name        = var.inbound_rule_set_name
  }
  alarm_topic_arn    = local.alarm_topic_arn
  log_retention_days = var.log_retention_days

  # dev's results are throwaway: they expire sooner than prod's (terraform.tfvars).
  results_expiration_days = var.results_expiration_days

  scraper        = { reserved_concurrency = var.scraper_concurrency }
  scrape_mapping = { maximum_concurrency = var.scraper_concurrency }
}
