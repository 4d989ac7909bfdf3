"""The Précis engine: pure Python + asyncio. It must never import Qt (tests/test_architecture.py checks)."""
