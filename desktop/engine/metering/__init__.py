"""Measurement: token estimates and their calibration, the one context number, bills and the cache clock."""
