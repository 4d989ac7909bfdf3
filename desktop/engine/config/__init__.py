"""Configuration and prices: settings, provider profiles, keys, the model catalog and private files."""
