"""Writing tasks: annotators write the next turn of each conversation; the replies join a system."""
