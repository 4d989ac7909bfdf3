"""Précis: a desktop chat client for Claude and Anthropic-compatible models."""

__version__ = "0.1.0"
APP_NAME = "Précis"
APP_ID = "io.github.precis.Precis"
