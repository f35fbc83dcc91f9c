mock_provider "aws" {
  source          = "../../tests/terraform/mocks"
  override_during = plan
}

variables {
  name            = "outreach-test-bucket"
  expiration_days = 14
}

run "the_bucket_planned_with_the_files_variables" {
  command = plan

  # blocks_every_kind_of_public_access
  assert {
    condition = alltrue([
      aws_s3_bucket_public_access_block.this.block_public_acls,
      aws_s3_bucket_public_access_block.this.block_public_policy,
      aws_s3_bucket_public_access_block.this.ignore_public_acls,
      aws_s3_bucket_public_access_block.this.restrict_public_buckets,
    ])
    error_message = "All four public access blocks must be on."
  }

  assert {
    condition     = one(aws_s3_bucket_ownership_controls.this.rule).object_ownership == "BucketOwnerEnforced"
    error_message = "ACLs must be disabled (BucketOwnerEnforced)."
  }

  # encrypts_with_sse_s3_without_a_key
  assert {
    condition     = one(one(aws_s3_bucket_server_side_encryption_configuration.this.rule).apply_server_side_encryption_by_default).sse_algorithm == "AES256"
    error_message = "Without a key the bucket uses SSE-S3."
  }

  # denies_every_request_without_tls
  assert {
    condition = anytrue([
      for s in jsondecode(aws_s3_bucket_policy.this.policy).Statement :
      s.Effect == "Deny" && s.Condition.Bool["aws:SecureTransport"] == "false" &&
      toset(s.Resource) == toset(["arn:aws:s3:::mock-bucket", "arn:aws:s3:::mock-bucket/*"])
    ])
    error_message = "The bucket policy must deny requests that do not use TLS, on the bucket and its objects."
  }

  assert {
    condition     = alltrue([for s in jsondecode(aws_s3_bucket_policy.this.policy).Statement : s.Effect == "Deny"])
    error_message = "The bucket policy only denies; access is granted by the callers' roles."
  }

  # lifecycle_expires_objects_versions_and_uploads
  assert {
    condition     = one(one(aws_s3_bucket_lifecycle_configuration.this.rule).expiration).days == 14
    error_message = "Objects must expire after expiration_days."
  }

  assert {
    condition     = output.expiration_days == 14
    error_message = "The module reports the expiry its lifecycle rule was given."
  }

  assert {
    condition     = one(one(aws_s3_bucket_lifecycle_configuration.this.rule).noncurrent_version_expiration).noncurrent_days == 30
    error_message = "Previous versions must expire."
  }

  assert {
    condition     = one(one(aws_s3_bucket_lifecycle_configuration.this.rule).abort_incomplete_multipart_upload).days_after_initiation == 7
    error_message = "Incomplete multipart uploads must be cleaned up."
  }

  assert {
    condition     = one(aws_s3_bucket_versioning.this[0].versioning_configuration).status == "Enabled"
    error_message = "Versioning is on by default."
  }
}

run "encrypts_with_the_given_kms_key" {
  command = plan

  variables {
    kms_key_arn = "arn:aws:kms:eu-central-1:111122223333:key/11111111-1111-1111-1111-111111111111"
  }

  assert {
    condition = (
      one(one(aws_s3_bucket_server_side_encryption_configuration.this.rule).apply_server_side_encryption_by_default).sse_algorithm == "aws:kms" &&
      one(one(aws_s3_bucket_server_side_encryption_configuration.this.rule).apply_server_side_encryption_by_default).kms_master_key_id == var.kms_key_arn
    )
    error_message = "With a key the bucket uses SSE-KMS with that key."
  }
}

run "keeps_objects_without_expiration_days" {
  command = plan

  variables {
    expiration_days = null
  }

  assert {
    condition     = length(one(aws_s3_bucket_lifecycle_configuration.this.rule).expiration) == 0
    error_message = "Without expiration_days current objects are kept."
  }

  assert {
    condition     = output.expiration_days == null
    error_message = "Without an expiry the module reports none."
  }
}

run "each_refused_input_fails_its_own_validation" {
  command = plan

  variables {
    # rejects_an_invalid_bucket_name
    name = "Upper_Case"
    # rejects_zero_expiration_days
    expiration_days = 0
  }

  expect_failures = [
    var.name,
    var.expiration_days,
  ]
}
