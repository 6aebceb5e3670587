"""Test data factories shared across test packages."""
