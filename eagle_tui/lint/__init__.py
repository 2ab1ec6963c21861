"""``eagle-tui lint``'s I/O half: the engines' flag tables and the facts about the host.

The checks themselves are pure (``eagle_tui.model.cmdline`` parses, ``eagle_tui.model.lint``
judges); this package reads what they need through a :class:`~eagle_tui.transport.base.Transport`
so a remote host is linted exactly like the local one.
"""
