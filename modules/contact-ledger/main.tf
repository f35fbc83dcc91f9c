# The contact ledger: one record per normalised address (`address#<address>`) and per blocked domain
# (`domain#<domain>`) saying whether the pipeline may write to it: its state (ok, blocked, bounced,
# unsubscribed, complained) and rank, since when, why, who said so, and when it was last contacted.
# The email worker reads it before every send, the SES event consumer and the unsubscribe endpoint
# raise its states, the operator's `outreach contacts` reads and writes it.
#
# The records are few and small and written when something happens to an address, so the table bills
# on demand and has no stream (nothing reacts to a change: the writer itself cancels the address's
# open emails). It is kept as long as the pipeline is: point-in-time recovery, encryption at rest
# with KMS and deletion protection.
# https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/PointInTimeRecovery.html
# https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/EncryptionAtRest.html
#
# The same table keeps the inbound processor's receipts (`inbound#<sha256>`, no address), each with an
# `expires_at` a year after its message: TTL deletes an item only when it carries that attribute as
# a number of epoch seconds, and no contact record carries it, so an opt-out never expires. The email
# worker's counts of the sending identity's emails per UTC day (`identity#<domain>#<YYYY-MM-DD>`, the
# warm-up ramp) carry it too, a week after their day.
# https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/TTL.html

locals {
  # The partition key and the kinds of record it holds, as dynamodb:LeadingKeys patterns: the
  # functions' IAM statements name them (output key_patterns) so each reaches only the kinds it uses.
  # https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/specifying-conditions.html
  hash_key      = "contact_key"
  ttl_attribute = "expires_at"
  key_patterns = {
    address  = "address#*"
    domain   = "domain#*"
    identity = "identity#*"
  }
}

resource "aws_dynamodb_table" "this" {
  name                        = var.name
  billing_mode                = "PAY_PER_REQUEST"
  hash_key                    = local.hash_key
  stream_enabled              = false
  deletion_protection_enabled = var.deletion_protection

  attribute {
    name = local.hash_key
    type = "S"
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
