"""Containers (docker, podman) as the model reads them: their ``inspect`` and ``ps`` JSON read
with bounds (:mod:`.inspect`, :mod:`.listing`), the server a container runs and its URL
(:mod:`.server`), and its state as the user sees it and as dashboard events (:mod:`.states`).
Pure: the JSON comes from the container CLI runner in ``sources/containers``."""
