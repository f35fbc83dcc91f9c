# Same settings as prod; only the endpoint, credentials and state differ (see main.tf).
dispatch_mode       = "lambda"
scraper_concurrency = 140
log_retention_days  = 90
# Days scrape results (e-mails, phones, page text) are kept: docs/security.md, Retention.
results_expiration_days = 90
