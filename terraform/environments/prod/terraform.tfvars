region              = "eu-central-1"
dispatch_mode       = "lambda"
scraper_concurrency = 140
log_retention_days  = 90
# Days scrape results (e-mails, phones, page text) are kept: docs/security.md, Retention.
results_expiration_days = 90
