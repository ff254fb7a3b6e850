"""ADEM at work: training and experiments, scoring with a trained model, VHRED pre-training and its checkpoints,
queueing the background runs, progress and deletion. The pure engine is scoring.adem."""
