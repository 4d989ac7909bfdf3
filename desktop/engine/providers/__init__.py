"""Providers: the protocol the engine asks of one, the SDK's side of it, routes, errors and overflows."""
