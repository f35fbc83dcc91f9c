# The prod root with its committed terraform.tfvars, planned against a mocked provider.

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
  alarm_emails          = ["oncall@example.com"]
}

run "prod_planned_with_its_tfvars_and_the_files_variables" {
  command = plan

  # prod_runs_140_scrapers_of_420_seconds_and_1536_mb
  assert {
    condition = (
      module.pipeline.scraper_settings.reserved_concurrent_executions == 140 &&
      module.pipeline.scraper_settings.timeout == 420 &&
      module.pipeline.scraper_settings.memory_size == 1536
    )
    error_message = "prod reserves 140 scrapers of 420 s and 1536 MB."
  }

  assert {
    condition     = module.pipeline.scraper_function_name == "outreach-prod-scraper" && module.pipeline.dispatch_mode == "lambda"
    error_message = "prod deploys the outreach-prod pipeline with the dispatcher function."
  }

  # prod_scraper_never_reaches_loopback
  assert {
    condition     = !contains(keys(module.pipeline.scraper_settings.environment), "SCRAPER_ALLOW_LOOPBACK")
    error_message = "Only the local environment may let the scraper fetch loopback addresses."
  }

  # prod_alarms_go_to_the_root_topic
  assert {
    condition     = module.alarm_topic[0].topic_arn == "arn:aws:sns:eu-central-1:111122223333:mock-topic" && local.alarm_topic_arn == module.alarm_topic[0].topic_arn
    error_message = "prod's pipeline alarms notify the root's topic."
  }

  # prod_reconciles_scrape_tasks_every_5_minutes_after_the_derived_thresholds
  assert {
    condition = (
      module.pipeline.reconciler_thresholds.pending_after_seconds == 3600 + 60 &&
      module.pipeline.reconciler_thresholds.running_after_seconds == 5400 + 420 + 60
    )
    error_message = "prod's scrape reconciler settles a Pending task after the maximum record age + dispatcher timeout and a Running one after visibility + scraper timeout + lease margin."
  }

  # prod_owns_its_ses_identity_and_sizes_email_for_the_modules_default_send_rate
  assert {
    condition = (
      output.pipeline.root_outputs.email_dkim_records != null &&
      output.pipeline.root_outputs.email_max_send_rate == 14 &&
      module.pipeline.email_worker_settings.reserved_concurrent_executions == 14
    )
    error_message = "prod creates the identity (and reports its DKIM records) and sizes the email worker for 14 emails per second."
  }

  # prod_scrape_results_expire_after_90_days
  assert {
    condition     = var.results_expiration_days == 90 && module.pipeline.results_expiration_days == 90
    error_message = "prod keeps scrape results (contact data) 90 days, set in its terraform.tfvars, not forever."
  }

  # prod_has_its_contact_ledger_and_stops_an_address_at_three_soft_bounces
  assert {
    condition     = output.pipeline.root_outputs.contacts_table_name == "outreach-prod-contacts" && module.pipeline.soft_bounce_limit == 3
    error_message = "prod has its contact ledger and stops an address at 3 soft bounces."
  }

  # prod_receives_no_replies_until_it_names_a_reply_domain
  assert {
    condition     = module.pipeline.inbound_processor_function_name == null && output.pipeline.root_outputs.inbound_reply_domain == null && local.receiving_region == "eu-central-1"
    error_message = "Without inbound_reply_domain prod plans no inbound resources; the receiving provider is in prod's region."
  }
}

run "each_refused_input_fails_its_own_validation" {
  command = plan

  variables {
    # prod_refuses_to_plan_without_an_alarm_subscriber
    alarm_emails = []
    # prod_refuses_a_reply_domain_without_a_mailbox_for_unmatched_replies
    inbound_reply_domain = "reply.example.com"
  }

  expect_failures = [
    var.alarm_emails,
    var.inbound_unmatched_forward_to,
  ]
}

run "prod_can_alarm_an_existing_topic_instead" {
  command = plan

  variables {
    alarm_emails    = []
    alarm_topic_arn = "arn:aws:sns:eu-central-1:111122223333:oncall-paging"
  }

  assert {
    condition     = length(module.alarm_topic) == 0 && local.alarm_topic_arn == "arn:aws:sns:eu-central-1:111122223333:oncall-paging"
    error_message = "With an existing topic no topic is created and every alarm goes there."
  }
}

run "prod_without_a_results_retention_takes_the_modules_default" {
  command = plan

  variables {
    results_expiration_days = null
  }

  assert {
    condition     = module.pipeline.results_expiration_days == 90
    error_message = "A root that leaves the retention unset gets scrape-pipeline's 90 days, not keep forever."
  }
}

run "prod_receives_replies_in_its_region_once_it_names_a_reply_domain" {
  command = plan

  variables {
    inbound_reply_domain         = "reply.example.com"
    inbound_unmatched_forward_to = "sales@example.com"
  }

  assert {
    condition = (
      module.pipeline.inbound_processor_function_name == "outreach-prod-inbound-processor" &&
      module.pipeline.inbound_receiving_region == "eu-central-1" &&
      output.pipeline.root_outputs.inbound_mx_record == "10 inbound-smtp.eu-central-1.amazonaws.com" &&
      module.pipeline.inbound_rule_set_name == "outreach-prod-inbound"
    )
    error_message = "prod's replies arrive at inbound-smtp.eu-central-1 into its own rule set and reach outreach-prod-inbound-processor."
  }
}

run "prod_may_receive_in_another_region" {
  command = plan

  variables {
    inbound_reply_domain         = "reply.example.com"
    inbound_unmatched_forward_to = "sales@example.com"
    receiving_region             = "eu-west-1"
  }

  override_data {
    target = module.pipeline.module.email_inbound[0].data.aws_region.receiving
    values = { name = "eu-west-1" }
  }

  assert {
    condition = (
      local.receiving_region == "eu-west-1" &&
      module.pipeline.inbound_processor_settings.environment.INBOUND_BUCKET_REGION == "eu-west-1" &&
      output.pipeline.root_outputs.inbound_mx_record == "10 inbound-smtp.eu-west-1.amazonaws.com"
    )
    error_message = "receiving_region moves the receiving side (the aws.receiving provider) to its Region."
  }
}
