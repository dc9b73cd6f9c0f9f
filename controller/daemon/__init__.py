"""The service and its process plumbing: the service's threads and wiring, systemd notification,
the state directory's owner."""
