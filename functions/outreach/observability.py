"""Module-level Powertools Logger and Metrics shared by every handler.

The logger writes through ``log_redaction.RedactingFormatter``: no log line carries an e-mail address
or an international phone number, only their hashes (``personal_data``).
"""

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

from outreach.log_redaction import RedactingFormatter

logger = Logger(logger_formatter=RedactingFormatter())
metrics = Metrics()

__all__ = ["MetricUnit", "logger", "metrics"]
