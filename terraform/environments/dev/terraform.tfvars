region              = "eu-central-1"
dispatch_mode       = "lambda"
scraper_concurrency = 20
log_retention_days  = 14
