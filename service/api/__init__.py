"""HTTP layer: thin route handlers over the orchestration module."""
