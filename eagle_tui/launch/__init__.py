"""Launching and stopping servers: lint first, start detached, record, stop only our groups."""
