"""Helpers shared by the tests: ``from tests.support.<module> import ...``."""
