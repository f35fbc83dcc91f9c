"""outreach: the asynchronous scrape and outreach pipeline's Lambda handlers and their shared core."""
