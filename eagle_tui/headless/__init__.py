"""The headless presenter: progress lines, the crash diagnosis and the verdict, for a terminal
without the dashboard, a pipe or a script (``wait``, ``watch --headless``, ``replay --json``)."""
