"""The project's own defences: login and password-reset throttles, bounded JSON input, no-store headers,
the demo's secret key."""
