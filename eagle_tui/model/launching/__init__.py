"""The launch side: engine command lines, pre-launch lint, discovery, run control."""
