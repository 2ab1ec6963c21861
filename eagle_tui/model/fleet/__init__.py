"""The fleet view's model: Prometheus answers to rows, flags, hosts and probes."""
