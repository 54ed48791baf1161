"""The published contract: a fixture derived from the service's OpenAPI documents, its checks."""
