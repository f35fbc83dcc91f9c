# A private, encrypted bucket: public access blocked, bucket-owner-enforced ownership, TLS-only
# access and a lifecycle that bounds what it keeps. Used for scrape results and for the stream
# mapping's on-failure records.

resource "aws_s3_bucket" "this" {
  #checkov:skip=CKV_AWS_18:Private bucket written only by the pipeline's roles; server access logs would need a further bucket, and CloudTrail records the API calls
  #checkov:skip=CKV2_AWS_62:Notifications are the caller's choice: the stream failure bucket notifies the alarm topic (stream-dispatch); results are read by key
  #checkov:skip=CKV_AWS_144:Scrape results can be rebuilt by scraping again and failure records expire with the lifecycle rule; a replica would double storage without a recovery need
  bucket        = var.name
  force_destroy = var.force_destroy
}

resource "aws_s3_bucket_public_access_block" "this" {
  bucket = aws_s3_bucket.this.id

  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_ownership_controls" "this" {
  bucket = aws_s3_bucket.this.id

  rule {
    object_ownership = "BucketOwnerEnforced"
  }
}

resource "aws_s3_bucket_server_side_encryption_configuration" "this" {
  bucket = aws_s3_bucket.this.id

  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm     = var.kms_key_arn == null ? "AES256" : "aws:kms"
      kms_master_key_id = var.kms_key_arn
    }
    bucket_key_enabled = var.kms_key_arn != null
  }
}

resource "aws_s3_bucket_versioning" "this" {
  count  = var.versioning ? 1 : 0
  bucket = aws_s3_bucket.this.id

  versioning_configuration {
    status = "Enabled"
  }
}

resource "aws_s3_bucket_lifecycle_configuration" "this" {
  bucket = aws_s3_bucket.this.id

  rule {
    id     = "bounded-retention"
    status = "Enabled"

    filter {}

    dynamic "expiration" {
      for_each = var.expiration_days == null ? [] : [var.expiration_days]
      content {
        days = expiration.value
      }
    }

    dynamic "noncurrent_version_expiration" {
      for_each = var.versioning ? [var.noncurrent_version_expiration_days] : []
      content {
        noncurrent_days = noncurrent_version_expiration.value
      }
    }

    abort_incomplete_multipart_upload {
      days_after_initiation = 7
    }
  }

  # The rule refers to versions; apply it after versioning is configured.
  depends_on = [aws_s3_bucket_versioning.this]
}

# The one wildcard action in the project is this Deny: it refuses every S3 action over plain HTTP,
# so it narrows access and grants nothing.
resource "aws_s3_bucket_policy" "this" {
  bucket = aws_s3_bucket.this.id
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Sid       = "DenyInsecureTransport"
      Effect    = "Deny"
      Principal = "*"
      Action    = "s3:*"
      Resource  = [aws_s3_bucket.this.arn, "${aws_s3_bucket.this.arn}/*"]
      Condition = { Bool = { "aws:SecureTransport" = "false" } }
    }]
  })

  # A bucket policy put before the public access block could be judged public; order them.
  depends_on = [aws_s3_bucket_public_access_block.this]
}
