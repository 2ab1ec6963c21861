"""The engines' home: one package per engine (its profile), the registry that finds them.

Nothing outside this package (the simulator and the CLI's choices aside) names an engine in
code: it asks :func:`profile_of` or iterates :func:`profiles`.
"""

from eagle_tui.model.engines.profile import UNKNOWN, EngineProfile
from eagle_tui.model.engines.registry import (
    generation,
    names,
    profile_of,
    profiles,
    register,
    run_first,
    unregister,
)

__all__ = ["UNKNOWN", "EngineProfile", "generation", "names", "profile_of", "profiles",
           "register", "run_first", "unregister"]
