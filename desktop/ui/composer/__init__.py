"""The composer: typing, sending, attachment chips and slash commands."""
