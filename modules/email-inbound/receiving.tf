# The receiving side, in the receiving Region (aws.receiving): the reply domain's identity, the receipt
# rule set and rule, the inbound bucket the S3 action saves each message to, and the topic it
# announces it on, subscribed by the inbound queue of the pipeline's Region (main.tf).
# https://docs.aws.amazon.com/ses/latest/dg/receiving-email-concepts.html

# ---- the reply domain's SES identity: receiving Region, and the pipeline's for the forwards --------

# SES receives only for verified domains (https://docs.aws.amazon.com/ses/latest/dg/verify-addresses-and-domains.html);
# verify it by publishing the DKIM records its output lists (docs/deploying.md, "Receiving replies").
resource "aws_sesv2_email_identity" "receiving" {
  provider = aws.receiving
  count    = var.create_identity ? 1 : 0

  email_identity = var.reply_domain
}

resource "aws_sesv2_email_identity" "forwarding" {
  count = var.create_identity && !local.same_region ? 1 : 0

  email_identity = var.reply_domain
}

# ---- the receipt rule set and the rule --------------------------------------------------------------

resource "aws_ses_receipt_rule_set" "this" {
  provider = aws.receiving
  count    = local.create_rule_set ? 1 : 0

  rule_set_name = local.rule_set_name
}

# One rule set per Region and account is active; this one, unless rule_set_name names another's.
# https://docs.aws.amazon.com/ses/latest/APIReference/API_SetActiveReceiptRuleSet.html
resource "aws_ses_active_receipt_rule_set" "this" {
  provider = aws.receiving
  count    = local.create_rule_set ? 1 : 0

  rule_set_name = aws_ses_receipt_rule_set.this[0].rule_set_name
}

# Every message to an address of the reply domain (a domain recipient matches all its addresses,
# https://docs.aws.amazon.com/ses/latest/dg/receiving-email-receipt-rules-console-walkthrough.html),
# accepted over TLS only, scanned for spam and viruses (the verdicts are in the notification), saved
# to the bucket and then announced on the topic. SES receives at most 40 MB, headers included
# (https://docs.aws.amazon.com/ses/latest/APIReference/API_S3Action.html).
resource "aws_ses_receipt_rule" "replies" {
  provider = aws.receiving

  name          = local.rule_name
  rule_set_name = local.create_rule_set ? aws_ses_receipt_rule_set.this[0].rule_set_name : local.rule_set_name
  recipients    = [var.reply_domain]
  enabled       = true
  scan_enabled  = true
  tls_policy    = "Require"

  s3_action {
    bucket_name       = aws_s3_bucket.inbound.bucket
    object_key_prefix = local.object_key_prefix
    topic_arn         = aws_sns_topic.inbound.arn
    position          = 1
  }

  # SES tries its permissions when the rule is created: the bucket's and topic's policies and the
  # key's first (https://docs.aws.amazon.com/ses/latest/dg/receiving-email-permissions.html).
  depends_on = [
    aws_s3_bucket_policy.inbound,
    aws_sns_topic_policy.inbound,
    aws_s3_bucket_server_side_encryption_configuration.inbound,
  ]

  lifecycle {
    precondition {
      condition     = data.aws_region.receiving.name == var.receiving_region
      error_message = "The aws.receiving provider's Region must be receiving_region: the rule, the bucket and the topic are created there."
    }
  }
}

# ---- the inbound bucket: the raw messages, private, encrypted, kept retention_days ------------------

resource "aws_s3_bucket" "inbound" {
  #checkov:skip=CKV_AWS_18:Written only by SES for this account's rule and read by the processor; server access logs would need a further bucket, and CloudTrail records the API calls
  #checkov:skip=CKV2_AWS_62:The receipt rule announces each message on the inbound topic itself (the S3 action's topic_arn); a bucket notification would announce it twice
  #checkov:skip=CKV_AWS_144:Received mail expires after retention_days; a replica in another Region would keep personal data in a second place for no recovery need
  #checkov:skip=CKV_AWS_21:SES writes each message once under its own message id; versions would only keep personal data past retention_days
  provider = aws.receiving

  bucket        = var.bucket_name
  force_destroy = var.force_destroy_bucket
}

resource "aws_s3_bucket_public_access_block" "inbound" {
  provider = aws.receiving
  bucket   = aws_s3_bucket.inbound.bucket

  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_ownership_controls" "inbound" {
  provider = aws.receiving
  bucket   = aws_s3_bucket.inbound.bucket

  rule {
    object_ownership = "BucketOwnerEnforced"
  }
}

resource "aws_s3_bucket_server_side_encryption_configuration" "inbound" {
  provider = aws.receiving
  bucket   = aws_s3_bucket.inbound.bucket

  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm     = var.bucket_kms_key_arn == null ? "AES256" : "aws:kms"
      kms_master_key_id = var.bucket_kms_key_arn
    }
    bucket_key_enabled = var.bucket_kms_key_arn != null
  }
}

resource "aws_s3_bucket_lifecycle_configuration" "inbound" {
  provider = aws.receiving
  bucket   = aws_s3_bucket.inbound.bucket

  rule {
    id     = "bounded-retention"
    status = "Enabled"

    filter {}

    expiration {
      days = var.retention_days
    }

    abort_incomplete_multipart_upload {
      days_after_initiation = 7
    }
  }
}

# TLS only (the one wildcard action: a Deny that narrows), and SES may put this rule's messages under
# inbound/, for this account's rule only (aws:SourceAccount, aws:SourceArn as the SES guide gives).
# https://docs.aws.amazon.com/ses/latest/dg/receiving-email-permissions.html
resource "aws_s3_bucket_policy" "inbound" {
  provider = aws.receiving
  bucket   = aws_s3_bucket.inbound.bucket
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [
      {
        Sid       = "DenyInsecureTransport"
        Effect    = "Deny"
        Principal = "*"
        Action    = "s3:*"
        Resource  = [aws_s3_bucket.inbound.arn, "${aws_s3_bucket.inbound.arn}/*"]
        Condition = { Bool = { "aws:SecureTransport" = "false" } }
      },
      {
        Sid       = "SesPutsReceivedMessages"
        Effect    = "Allow"
        Principal = { Service = "ses.amazonaws.com" }
        Action    = "s3:PutObject"
        Resource  = "${aws_s3_bucket.inbound.arn}/${local.object_key_prefix}*"
        Condition = local.ses_for_this_rule
      },
    ]
  })

  # A bucket policy put before the public access block could be judged public; order them.
  depends_on = [aws_s3_bucket_public_access_block.inbound]
}

# ---- the inbound topic and its key (receiving Region) ------------------------------------------------

# SNS topics are encrypted with a KMS key; the AWS managed alias/aws/sns cannot admit SES, so the
# topic has its own, whose policy lets SES encrypt for this rule only.
# https://docs.aws.amazon.com/sns/latest/dg/sns-key-management.html#compatibility-with-aws-services
resource "aws_kms_key" "topic" {
  provider = aws.receiving

  description             = "Encrypts the ${local.topic_name} topic (SES's notifications of received replies)."
  enable_key_rotation     = true
  deletion_window_in_days = var.topic_key_deletion_window_days
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [
      {
        Sid       = "AccountAdministersKey"
        Effect    = "Allow"
        Principal = { AWS = local.account_root }
        Action    = local.key_admin_actions
        Resource  = "*" # In a key policy "*" means this key.
      },
      {
        Sid       = "SesPublishesEncryptedForThisRule"
        Effect    = "Allow"
        Principal = { Service = "ses.amazonaws.com" }
        Action    = ["kms:GenerateDataKey*", "kms:Decrypt"]
        Resource  = "*"
        Condition = local.ses_for_this_rule
      },
    ]
  })
}

resource "aws_kms_alias" "topic" {
  provider = aws.receiving

  name          = local.topic_key_alias
  target_key_id = aws_kms_key.topic.key_id
}

resource "aws_sns_topic" "inbound" {
  provider = aws.receiving

  name              = local.topic_name
  kms_master_key_id = aws_kms_key.topic.arn
}

# SES publishes this rule's notifications; nothing else may.
# https://docs.aws.amazon.com/ses/latest/dg/receiving-email-permissions.html
resource "aws_sns_topic_policy" "inbound" {
  provider = aws.receiving

  arn = aws_sns_topic.inbound.arn
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Sid       = "SesPublishesThisRulesNotifications"
      Effect    = "Allow"
      Principal = { Service = "ses.amazonaws.com" }
      Action    = "sns:Publish"
      Resource  = aws_sns_topic.inbound.arn
      Condition = local.ses_for_this_rule
    }]
  })
}

# The queue in the pipeline's Region, subscribed across Regions; the envelope is kept (no raw
# delivery): the processor reads SES's notification from its Message.
# https://docs.aws.amazon.com/sns/latest/dg/sns-send-message-to-sqs-cross-region.html
# https://docs.aws.amazon.com/sns/latest/dg/sns-large-payload-raw-message-delivery.html
resource "aws_sns_topic_subscription" "queue" {
  provider = aws.receiving

  topic_arn            = aws_sns_topic.inbound.arn
  protocol             = "sqs"
  endpoint             = aws_sqs_queue.inbound.arn
  raw_message_delivery = false

  # SNS delivers only once the queue admits it.
  depends_on = [aws_sqs_queue_policy.inbound]
}
