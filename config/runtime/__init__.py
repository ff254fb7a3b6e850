"""What runs beside the apps: the embedded background pool, run heartbeats, warm-up and the start-up step."""
