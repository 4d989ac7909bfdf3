"""Projects in the window: the project page (its instructions, defaults and knowledge) and what the window does
with projects (new, a new chat in one, move a chat, delete)."""
