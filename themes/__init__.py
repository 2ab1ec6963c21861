"""Theme data for eagle-tui, installed as the package ``eagle_tui.themes``.

Only data lives here (``*.toml`` theme definitions, ``*.tcss`` stylesheets); the loader is
``eagle_tui.ui.theme``. Keeping colours in data files is what lets the Python code stay free of
hex colours and lets users add a theme by dropping a TOML file next to their config.
"""
