mock_provider "aws" {
  source          = "../../tests/terraform/mocks"
  override_during = plan
}

variables {
  name = "outreach-test-tasks"
}

run "the_tasks_table_planned_with_the_files_variables" {
  command = plan

  # table_is_an_on_demand_encrypted_source_of_truth_with_pitr
  assert {
    condition     = aws_dynamodb_table.this.billing_mode == "PAY_PER_REQUEST"
    error_message = "The tasks table must bill on demand."
  }

  assert {
    condition     = aws_dynamodb_table.this.hash_key == "task_id"
    error_message = "task_id is the table's hash key."
  }

  assert {
    condition     = aws_dynamodb_table.this.point_in_time_recovery[0].enabled
    error_message = "Point-in-time recovery must be on."
  }

  assert {
    condition     = aws_dynamodb_table.this.server_side_encryption[0].enabled
    error_message = "Encryption at rest with a KMS key must be on."
  }

  assert {
    condition     = aws_dynamodb_table.this.deletion_protection_enabled
    error_message = "Deletion protection is on unless a caller turns it off."
  }

  # stream_carries_old_and_new_images
  assert {
    condition     = aws_dynamodb_table.this.stream_enabled && aws_dynamodb_table.this.stream_view_type == "NEW_AND_OLD_IMAGES"
    error_message = "The dispatcher needs NEW_AND_OLD_IMAGES to see a task become Pending."
  }

  # ttl_expires_items_on_expires_at
  assert {
    condition     = aws_dynamodb_table.this.ttl[0].enabled && aws_dynamodb_table.this.ttl[0].attribute_name == "expires_at"
    error_message = "TTL must be enabled on expires_at."
  }

  # sparse_open_tasks_index_on_open_key_and_updated_at
  assert {
    condition = anytrue([
      for index in aws_dynamodb_table.this.global_secondary_index :
      index.name == "open-tasks" && index.hash_key == "open_key" && index.range_key == "updated_at" && index.projection_type == "ALL"
    ])
    error_message = "The open-tasks index must be keyed by open_key and updated_at with projection ALL."
  }

  assert {
    condition = (
      contains([for a in aws_dynamodb_table.this.attribute : "${a.name}:${a.type}"], "open_key:S") &&
      contains([for a in aws_dynamodb_table.this.attribute : "${a.name}:${a.type}"], "updated_at:S")
    )
    error_message = "open_key and updated_at are string attributes."
  }

  assert {
    condition     = output.open_tasks_index_arn == "arn:aws:dynamodb:eu-central-1:111122223333:table/mock/index/open-tasks"
    error_message = "The index ARN output must point at the open-tasks index of this table."
  }

  # sparse_recipient_emails_index_on_recipient_key_keys_only
  assert {
    condition = anytrue([
      for index in aws_dynamodb_table.this.global_secondary_index :
      index.name == "recipient-emails" && index.hash_key == "recipient_key" && index.range_key == null && index.projection_type == "KEYS_ONLY"
    ])
    error_message = "The recipient-emails index must be keyed by recipient_key alone and project the keys only."
  }

  assert {
    condition     = contains([for a in aws_dynamodb_table.this.attribute : "${a.name}:${a.type}"], "recipient_key:S")
    error_message = "recipient_key is a string attribute."
  }

  assert {
    condition     = output.recipient_emails_index_name == "recipient-emails" && output.recipient_emails_index_arn == "arn:aws:dynamodb:eu-central-1:111122223333:table/mock/index/recipient-emails"
    error_message = "The index ARN output must point at the recipient-emails index of this table."
  }

  # sparse_reply_handles_index_on_reply_handle_keys_only
  assert {
    condition = anytrue([
      for index in aws_dynamodb_table.this.global_secondary_index :
      index.name == "reply-handles" && index.hash_key == "reply_handle" && index.range_key == null && index.projection_type == "KEYS_ONLY"
    ])
    error_message = "The reply-handles index must be keyed by reply_handle alone and project the keys only."
  }

  assert {
    condition     = contains([for a in aws_dynamodb_table.this.attribute : "${a.name}:${a.type}"], "reply_handle:S")
    error_message = "reply_handle is a string attribute."
  }

  assert {
    condition     = output.reply_handles_index_name == "reply-handles" && output.reply_handles_index_arn == "arn:aws:dynamodb:eu-central-1:111122223333:table/mock/index/reply-handles"
    error_message = "The index ARN output must point at the reply-handles index of this table."
  }

  # sparse_jobs_index_on_job_kind_and_created_at
  assert {
    condition = anytrue([
      for index in aws_dynamodb_table.this.global_secondary_index :
      index.name == "jobs" && index.hash_key == "job_kind" && index.range_key == "created_at" && index.projection_type == "ALL"
    ])
    error_message = "The jobs index must be keyed by job_kind and created_at with projection ALL."
  }

  assert {
    condition     = output.jobs_index_name == "jobs" && output.jobs_index_arn == "arn:aws:dynamodb:eu-central-1:111122223333:table/mock/index/jobs"
    error_message = "The index ARN output must point at the jobs index of this table."
  }

  # open_index_shards_default_is_passed_on
  assert {
    condition     = output.open_index_shards == 8
    error_message = "The shard count of the open-tasks key defaults to 8 (four creators at 1,737 tasks/s, one to spare)."
  }

  # sparse_campaign_open_index_on_campaign_open_key_and_send_at
  assert {
    condition = anytrue([
      for index in aws_dynamodb_table.this.global_secondary_index :
      index.name == "campaign-open" && index.hash_key == "campaign_open_key" && index.range_key == "send_at" && index.projection_type == "ALL"
    ])
    error_message = "The campaign-open index must be keyed by campaign_open_key and send_at with projection ALL."
  }

  assert {
    condition = (
      contains([for a in aws_dynamodb_table.this.attribute : "${a.name}:${a.type}"], "campaign_open_key:S") &&
      contains([for a in aws_dynamodb_table.this.attribute : "${a.name}:${a.type}"], "send_at:S")
    )
    error_message = "campaign_open_key and send_at are string attributes."
  }

  assert {
    condition     = output.campaign_open_index_name == "campaign-open" && output.campaign_open_index_arn == "arn:aws:dynamodb:eu-central-1:111122223333:table/mock/index/campaign-open"
    error_message = "The index ARN output must point at the campaign-open index of this table."
  }
}

run "each_refused_input_fails_its_own_validation_1" {
  command = plan

  variables {
    # rejects_an_invalid_table_name
    name = "no spaces allowed"
    # rejects_an_open_index_shard_count_of_zero
    open_index_shards = 0
  }

  expect_failures = [
    var.name,
    var.open_index_shards,
  ]
}

run "each_refused_input_fails_its_own_validation_2" {
  command = plan

  variables {
    # rejects_more_open_index_shards_than_readers_query
    open_index_shards = 101
  }

  expect_failures = [
    var.open_index_shards,
  ]
}
