output "name" {
  description = "Dashboard name."
  value       = aws_cloudwatch_dashboard.this.dashboard_name
}

output "arn" {
  description = "Dashboard ARN."
  value       = aws_cloudwatch_dashboard.this.dashboard_arn
}

output "body" {
  description = "The dashboard's body (JSON): its widgets and the metrics each charts."
  value       = aws_cloudwatch_dashboard.this.dashboard_body
}
