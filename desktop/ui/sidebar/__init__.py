"""The chats sidebar: the list, its groups, search across chats and organising."""
