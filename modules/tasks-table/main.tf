# The tasks table is the pipeline's source of truth. Its stream (NEW_AND_OLD_IMAGES) lets the
# dispatcher see the transition "a scrape task became Pending"; the sparse `open-tasks` index holds
# only tasks that are Pending or Running (the item carries `open_key` only in those states), so the
# reconcilers query exactly the open work. The sparse `recipient-emails` index holds only email tasks
# (only they carry `recipient_key`, the normalised recipient), so a stop event finds every email to
# an address in every campaign; it projects the keys only, and the reader gets the rows by key after.
# The sparse `reply-handles` index holds only the email tasks that carry `reply_handle` (the handle of
# the per-email reply address `reply+<handle>.<mac>@<reply domain>`, written at creation when the
# campaign has a reply domain), so an inbound reply finds its task by the handle; keys only as well.
# The sparse `jobs` index holds only the jobs' own rows (only they carry `job_kind`), newest last by
# `created_at`, so `outreach job list` reads the jobs rather than the whole table; a job is recorded
# once per creation, so its two keys (`scrape`, `email`) take a few writes an hour.
# The sparse `campaign-open` index holds only the open email tasks (only they carry
# `campaign_open_key` = `<campaign id>#<status>#<shard>`, set at creation, moved with `open_key`,
# removed with it), sorted by `send_at`: one campaign's next send time is a Query of one row a shard and
# `outreach campaign cancel` reads its own campaign's open emails, never another campaign's
# (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-indexes-general-sparse-indexes.html).
# Its shard is the task's `open-tasks` shard, so creating a campaign spreads its writes as there. It
# projects ALL: the cancel builds each task from its entry.
# A global secondary index is eventually consistent and only the projected attributes can be read
# from it (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html), which the
# reader's conditional writes on the rows themselves make safe.

locals {
  open_tasks_index       = "open-tasks"
  recipient_emails_index = "recipient-emails"
  reply_handles_index    = "reply-handles"
  jobs_index             = "jobs"
  campaign_open_index    = "campaign-open"
  ttl_attribute          = "expires_at"
}

resource "aws_dynamodb_table" "this" {
  name                        = var.name
  billing_mode                = "PAY_PER_REQUEST"
  hash_key                    = "task_id"
  stream_enabled              = true
  stream_view_type            = "NEW_AND_OLD_IMAGES"
  deletion_protection_enabled = var.deletion_protection

  attribute {
    name = "task_id"
    type = "S"
  }

  attribute {
    name = "open_key"
    type = "S"
  }

  attribute {
    name = "updated_at"
    type = "S"
  }

  attribute {
    name = "recipient_key"
    type = "S"
  }

  attribute {
    name = "reply_handle"
    type = "S"
  }

  attribute {
    name = "job_kind"
    type = "S"
  }

  attribute {
    name = "created_at"
    type = "S"
  }

  attribute {
    name = "campaign_open_key"
    type = "S"
  }

  attribute {
    name = "send_at"
    type = "S"
  }

  global_secondary_index {
    name            = local.open_tasks_index
    hash_key        = "open_key"
    range_key       = "updated_at"
    projection_type = "ALL"
  }

  global_secondary_index {
    name            = local.recipient_emails_index
    hash_key        = "recipient_key"
    projection_type = "KEYS_ONLY"
  }

  global_secondary_index {
    name            = local.reply_handles_index
    hash_key        = "reply_handle"
    projection_type = "KEYS_ONLY"
  }

  global_secondary_index {
    name            = local.jobs_index
    hash_key        = "job_kind"
    range_key       = "created_at"
    projection_type = "ALL"
  }

  global_secondary_index {
    name            = local.campaign_open_index
    hash_key        = "campaign_open_key"
    range_key       = "send_at"
    projection_type = "ALL"
  }

  ttl {
    attribute_name = local.ttl_attribute
    enabled        = true
  }

  point_in_time_recovery {
    enabled = true
  }

  server_side_encryption {
    enabled     = true
    kms_key_arn = var.kms_key_arn
  }
}
