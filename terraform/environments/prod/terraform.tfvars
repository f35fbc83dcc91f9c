region              = "eu-central-1"
dispatch_mode       = "lambda"
scraper_concurrency = 140
log_retention_days  = 90
