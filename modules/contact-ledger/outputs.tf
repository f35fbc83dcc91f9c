output "name" {
  description = "Table name (the functions' CONTACTS_TABLE)."
  value       = aws_dynamodb_table.this.name
}

output "arn" {
  description = "Table ARN."
  value       = aws_dynamodb_table.this.arn
}

output "hash_key" {
  description = "The partition key attribute (contact_key): address#<normalised address> or domain#<domain>."
  value       = local.hash_key
}

output "key_patterns" {
  description = "dynamodb:LeadingKeys patterns of the kinds of record ({address = \"address#*\", domain = \"domain#*\", identity = \"identity#*\"}: the sending identity's counts per UTC day), for the IAM conditions of the functions that read or write them."
  value       = local.key_patterns
}

output "ttl_attribute" {
  description = "Attribute whose epoch-seconds value expires an item: the inbound receipts and the identity's daily counts carry it, never a contact record."
  value       = local.ttl_attribute
}
