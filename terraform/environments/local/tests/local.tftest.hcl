# The local root with its committed terraform.tfvars, planned against a mocked provider (the
# apply against the embedded AWS is tests/terraform/test_local_apply.py).

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
  package_dir = "../../../tests/terraform/fixtures/packages"
}

run "local_planned_with_its_tfvars_and_the_files_variables" {
  command = plan

  # local_runs_the_production_function_settings
  assert {
    condition = (
      module.pipeline.scraper_settings.reserved_concurrent_executions == 140 &&
      module.pipeline.scraper_settings.timeout == 420 &&
      module.pipeline.scraper_settings.memory_size == 1536
    )
    error_message = "The local pipeline runs with the production scraper settings."
  }

  # local_scraper_may_reach_the_loopback_web_farm
  assert {
    condition     = module.pipeline.scraper_settings.environment.SCRAPER_ALLOW_LOOPBACK == "1"
    error_message = "The local scraper must be allowed to fetch the loopback web farm."
  }

  # local_sends_email_as_a_reserved_test_domain
  assert {
    condition     = output.pipeline.root_outputs.email_sender_identity == "outreach.test" && output.pipeline.root_outputs.email_schedule_group == "outreach-local-email"
    error_message = "The local root sends as outreach.test from the outreach-local-email schedule group."
  }

  # local_sizes_the_email_worker_as_prod_does
  assert {
    condition     = output.pipeline.root_outputs.email_max_send_rate == 14 && module.pipeline.email_worker_settings.reserved_concurrent_executions == 14 && output.pipeline.root_outputs.email_dkim_records != null
    error_message = "The local email worker reserves ceil(14), and the local root owns its identity, as prod does."
  }

  # local_scrape_results_expire_as_prods_do
  assert {
    condition     = module.pipeline.results_expiration_days == 90
    error_message = "The local root keeps scrape results 90 days, prod's retention."
  }

  # local_listens_to_ses_events_and_one_click_unsubscribes_as_prod_does
  assert {
    condition = (
      output.pipeline.root_outputs.contacts_table_name == "outreach-local-contacts" &&
      output.pipeline.root_outputs.ses_event_consumer_function_name == "outreach-local-ses-event-consumer" &&
      output.pipeline.root_outputs.unsubscribe_function_name == "outreach-local-unsubscribe" &&
      module.pipeline.soft_bounce_limit == 3
    )
    error_message = "The local root has the contact ledger, the SES event consumer (3 soft bounces) and the unsubscribe endpoint, named after the environment."
  }

  # local_first_contact_rule_is_prods_unless_given
  assert {
    condition = (
      module.pipeline.email_worker_settings.environment.FIRST_CONTACT_GAP_SECONDS == "604800" &&
      module.pipeline.email_worker_settings.environment.FIRST_CONTACTS_PER_30_DAYS == "2"
    )
    error_message = "Without email_first_contact the local worker keeps modules/email's first-contact rule, as prod."
  }
}

run "refuses_an_endpoint_off_loopback" {
  command = plan

  variables {
    endpoint = "https://lambda.eu-central-1.amazonaws.com"
  }

  expect_failures = [var.endpoint]
}

run "local_receives_replies_in_its_own_region_when_given_a_reply_domain" {
  command = plan

  variables {
    inbound_reply_domain         = "reply.outreach.test"
    inbound_unmatched_forward_to = "sales@outreach.test"
  }

  assert {
    condition = (
      local.receiving_region == var.region &&
      module.pipeline.inbound_processor_function_name == "outreach-local-inbound-processor" &&
      module.pipeline.inbound_receiving_region == "eu-central-1"
    )
    error_message = "On the embedded AWS the replies are received in the root's own region."
  }
}

run "local_first_contact_gap_given_by_make_local_reaches_the_worker" {
  command = plan

  variables {
    email_first_contact = { gap_seconds = 900 }
  }

  assert {
    condition = (
      module.pipeline.email_worker_settings.environment.FIRST_CONTACT_GAP_SECONDS == "900" &&
      module.pipeline.email_worker_settings.environment.FIRST_CONTACTS_PER_30_DAYS == "2"
    )
    error_message = "A gap the local root is given reaches the worker; the cap keeps its default."
  }
}
