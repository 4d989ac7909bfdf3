"""Projects: chats grouped under shared instructions and knowledge, sent once per project in a cached prefix."""
