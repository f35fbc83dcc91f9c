# The root's one output; the names every environment shows at its top level (alarm_topic_arn,
# email_*) are the module's root_outputs, which scripts/outreach_dev/terraform_outputs.py lifts.
output "pipeline" {
  description = "Names, URLs and ARNs of the environment's pipeline (modules/outreach-pipeline's outputs)."
  value       = module.pipeline
}
