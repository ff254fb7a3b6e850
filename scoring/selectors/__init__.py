"""Reads that several places share: metric scores (also read by analysis), judges, the pipeline bar's states."""
