# The tasks table is the pipeline's source of truth. Its stream (NEW_AND_OLD_IMAGES) lets the
# dispatcher see the transition "a scrape task became Pending"; the sparse `open-tasks` index holds
# only tasks that are Pending or Running (the item carries `open_key` only in those states), so the
# reconcilers query exactly the open work.

locals {
  open_tasks_index = "open-tasks"
  ttl_attribute    = "expires_at"
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

  global_secondary_index {
    name            = local.open_tasks_index
    hash_key        = "open_key"
    range_key       = "updated_at"
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
