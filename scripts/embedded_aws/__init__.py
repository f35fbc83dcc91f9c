"""The embedded AWS: moto server on loopback plus pollers that deliver like AWS does."""
