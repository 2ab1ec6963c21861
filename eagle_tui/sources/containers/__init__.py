"""Container engines (docker, podman): their CLI, and a container's log as a source."""
