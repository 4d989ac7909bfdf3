"""Stored chats as the engine reads them: the storage protocol, the library, search, import and export."""
