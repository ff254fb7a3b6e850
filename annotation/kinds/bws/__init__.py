"""Best-worst scaling: the annotator picks the best and the worst of a few replies to one context."""
