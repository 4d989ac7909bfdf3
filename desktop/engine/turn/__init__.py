"""A chat's turn: the registry of open chats, one conversation's request, stream, tools and reply."""
