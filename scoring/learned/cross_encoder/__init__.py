"""The `cross-encoder` kind: all-MiniLM-L6-v2 read as one sequence (context, response, [reference])
with a regression head, fine-tuned end to end on a study's ratings (`trainer.py`)."""
