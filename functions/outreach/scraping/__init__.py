"""Fetching and extracting company websites without reaching internal addresses.

``scrape_site`` is the entry point used by the scraper Lambda; ``SiteScrape`` is its result.
"""

from outreach.scraping.site_crawl import scrape_site
from outreach.scraping.site_scrape import SiteScrape

__all__ = ["SiteScrape", "scrape_site"]
