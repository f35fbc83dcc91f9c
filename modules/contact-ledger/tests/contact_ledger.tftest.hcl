mock_provider "aws" {
  source          = "../../tests/terraform/mocks"
  override_during = plan
}

variables {
  name = "outreach-test-contacts"
}

run "the_contact_ledger_planned_with_the_files_variables" {
  command = plan

  # the_ledger_is_an_on_demand_encrypted_table_with_pitr_and_deletion_protection
  assert {
    condition     = aws_dynamodb_table.this.name == "outreach-test-contacts" && aws_dynamodb_table.this.billing_mode == "PAY_PER_REQUEST"
    error_message = "The contact ledger bills on demand under the name it is given."
  }

  assert {
    condition     = aws_dynamodb_table.this.point_in_time_recovery[0].enabled
    error_message = "Point-in-time recovery must be on: the ledger holds the opt-outs."
  }

  assert {
    condition     = aws_dynamodb_table.this.server_side_encryption[0].enabled && var.kms_key_arn == null
    error_message = "Encryption at rest with KMS is on, with the AWS managed key unless a caller names one."
  }

  assert {
    condition     = aws_dynamodb_table.this.deletion_protection_enabled
    error_message = "Deletion protection is on unless a caller turns it off."
  }

  # one_record_per_contact_key_no_stream_and_a_ttl_only_receipts_carry
  assert {
    condition     = aws_dynamodb_table.this.hash_key == "contact_key" && aws_dynamodb_table.this.range_key == null
    error_message = "contact_key (address#<address> or domain#<domain>) is the only key."
  }

  assert {
    condition     = [for a in aws_dynamodb_table.this.attribute : "${a.name}:${a.type}"] == ["contact_key:S"]
    error_message = "contact_key is a string, and no other attribute is declared (no index)."
  }

  assert {
    condition     = length(aws_dynamodb_table.this.global_secondary_index) == 0 && !aws_dynamodb_table.this.stream_enabled
    error_message = "The contact ledger has no index and no stream."
  }

  assert {
    condition     = [for t in aws_dynamodb_table.this.ttl : "${t.attribute_name}:${t.enabled}"] == ["expires_at:true"] && output.ttl_attribute == "expires_at"
    error_message = "TTL on expires_at, the attribute the inbound receipts and the identity's daily counts carry (no contact record does)."
  }

  assert {
    condition     = output.key_patterns == { address = "address#*", domain = "domain#*", identity = "identity#*" } && output.hash_key == "contact_key"
    error_message = "The key patterns the functions' IAM conditions use name the two kinds of record."
  }
}

run "a_caller_may_name_its_own_key_and_turn_deletion_protection_off" {
  command = plan

  variables {
    kms_key_arn         = "arn:aws:kms:eu-central-1:111122223333:key/11111111-2222-3333-4444-555555555555"
    deletion_protection = false
  }

  assert {
    condition     = aws_dynamodb_table.this.server_side_encryption[0].kms_key_arn == "arn:aws:kms:eu-central-1:111122223333:key/11111111-2222-3333-4444-555555555555" && !aws_dynamodb_table.this.deletion_protection_enabled
    error_message = "The caller's key and deletion protection setting are applied."
  }
}

run "each_refused_input_fails_its_own_validation" {
  command = plan

  variables {
    # rejects_an_invalid_table_name
    name = "no spaces allowed"
    # rejects_a_key_that_is_not_a_kms_key_arn
    kms_key_arn = "alias/aws/dynamodb"
  }

  expect_failures = [
    var.name,
    var.kms_key_arn,
  ]
}
