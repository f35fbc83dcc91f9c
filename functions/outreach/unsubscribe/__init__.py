"""One-click unsubscribe (RFC 8058): the token a link carries, the pages it shows, and the endpoint.

- ``token``: which address, campaign and step a link is for, proved by a KMS HMAC.
- ``pages``: the confirmation, done and error pages, small static HTML with everything escaped.
- ``endpoint``: the Lambda function URL handler (``GET`` shows the page, ``POST`` records the stop).
"""
