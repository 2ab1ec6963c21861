"""What eagle-tui reads on a host before it watches or launches anything.

The engines' flag tables (``tables``), the facts a launch command is linted against (``facts``:
checkpoint configs, listening ports, GPUs) and the servers already running there
(``discover``). Everything goes through a :class:`~eagle_tui.transport.base.Transport`, so a
remote host is probed exactly like the local one, with nothing installed on it; the judging
itself is pure (``eagle_tui.model.launching.cmdline``, ``.lint``, ``.discovery``).
"""
