region              = "eu-central-1"
dispatch_mode       = "lambda"
scraper_concurrency = 20
log_retention_days  = 14
# Days scrape results (e-mails, phones, page text) are kept: docs/security.md, Retention.
results_expiration_days = 30
