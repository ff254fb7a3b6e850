"""VHRED (Serban et al. 2017) pre-training, whose hierarchical encoder ADEM reuses."""
