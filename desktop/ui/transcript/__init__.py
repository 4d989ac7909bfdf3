"""The transcript: the list model, painted bubbles, Markdown and math, selection, find, actions and cards."""
