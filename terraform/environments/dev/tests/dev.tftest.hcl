# The dev root with its committed terraform.tfvars, planned against a mocked provider.

mock_provider "aws" {
  source          = "../../../tests/terraform/mocks"
  override_during = plan
}

# The receiving Region's provider (modules/email-inbound), mocked alike.
mock_provider "aws" {
  alias           = "receiving"
  source          = "../../../tests/terraform/mocks"
  override_during = plan
}

variables {
  email_sender_identity = "example.com"
  package_dir           = "../../../tests/terraform/fixtures/packages"
}

run "dev_planned_with_its_tfvars_and_the_files_variables" {
  command = plan

  # dev_runs_20_scrapers_with_the_production_function_settings
  assert {
    condition = (
      module.pipeline.scraper_settings.reserved_concurrent_executions == 20 &&
      module.pipeline.scraper_settings.timeout == 420 &&
      module.pipeline.scraper_settings.memory_size == 1536
    )
    error_message = "dev reserves 20 scrapers of 420 s and 1536 MB."
  }

  assert {
    condition     = module.pipeline.scraper_function_name == "outreach-dev-scraper" && module.pipeline.dispatch_mode == "lambda"
    error_message = "dev deploys the outreach-dev pipeline with the dispatcher function."
  }

  # dev_scraper_never_reaches_loopback
  assert {
    condition     = !contains(keys(module.pipeline.scraper_settings.environment), "SCRAPER_ALLOW_LOOPBACK")
    error_message = "Only the local environment may let the scraper fetch loopback addresses."
  }

  # dev_alarms_go_to_the_root_topic
  assert {
    condition     = local.alarm_topic_arn == "arn:aws:sns:eu-central-1:111122223333:mock-topic"
    error_message = "dev's pipeline alarms notify the root's topic."
  }

  # dev_results_expire_after_30_days
  assert {
    condition     = var.results_expiration_days == 30 && module.pipeline.results_expiration_days == 30
    error_message = "dev keeps scrape results for 30 days, not forever."
  }

  # dev_exposes_what_an_email_schedule_needs
  assert {
    condition = (
      output.pipeline.root_outputs.email_sender_identity == "example.com" &&
      output.pipeline.root_outputs.email_configuration_set == "outreach-dev-email" &&
      output.pipeline.root_outputs.email_schedule_group == "outreach-dev-email"
    )
    error_message = "The root outputs name the email stage the CLI schedules campaigns on."
  }

  # dev_sizes_email_for_the_modules_default_send_rate_and_owns_its_identity_by_default
  assert {
    condition = (
      output.pipeline.root_outputs.email_max_send_rate == 14 &&
      module.pipeline.email_worker_settings.reserved_concurrent_executions == 14 &&
      output.pipeline.root_outputs.email_dkim_records != null
    )
    error_message = "Unset, email_max_send_rate and email_create_sender_identity take modules/email's defaults (14, true)."
  }
}

run "dev_can_send_with_an_identity_prod_owns" {
  command = plan

  variables {
    email_create_sender_identity = false
    email_max_send_rate          = 2
  }

  assert {
    condition     = output.pipeline.root_outputs.email_dkim_records == null
    error_message = "With email_create_sender_identity = false dev creates no identity and has no DKIM records to publish."
  }

  assert {
    condition     = output.pipeline.root_outputs.email_sender_identity == "example.com" && output.pipeline.root_outputs.email_max_send_rate == 2
    error_message = "dev still sends as the identity it is given, at the rate it is given."
  }

  assert {
    condition     = module.pipeline.email_worker_settings.reserved_concurrent_executions == 2
    error_message = "The email worker reserves ceil(email_max_send_rate)."
  }
}

run "dev_beside_prod_adds_its_rule_to_prods_active_rule_set" {
  command = plan

  variables {
    inbound_reply_domain         = "reply-dev.example.com"
    inbound_unmatched_forward_to = "sales@example.com"
    inbound_rule_set_name        = "outreach-prod-inbound"
  }

  assert {
    condition = (
      module.pipeline.inbound_rule_set_name == "outreach-prod-inbound" &&
      module.pipeline.inbound_rule_name == "outreach-dev-replies" &&
      module.pipeline.inbound_processor_function_name == "outreach-dev-inbound-processor"
    )
    error_message = "dev's rule joins prod's active rule set (one is active per Region and account) and feeds dev's processor."
  }
}
