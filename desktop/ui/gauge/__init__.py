"""The context gauge: the painted ring, its line of figures and its hover card."""
