"""Module-level Powertools Logger and Metrics shared by every handler."""

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

logger = Logger()
metrics = Metrics()

__all__ = ["MetricUnit", "logger", "metrics"]
