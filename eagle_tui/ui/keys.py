"""Every key of the dashboard, in one table.

The app's bindings, the footer, the help screen and the command palette are all generated from
:data:`KEYS`, so a key cannot exist without a help line and a palette entry (a test checks that
each entry's action exists on the app).

A key that only means something in some runs (``h``: hosts of a multi-node log) is hidden from
the footer by the app's ``check_action`` while it has nothing to do; its ``unavailable`` text is
what the palette says then, so choosing it there is never silently ignored.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding


@dataclass(frozen=True, slots=True)
class KeySpec:
    keys: str  # Textual key names, comma separated
    display: str  # as shown in the footer and help
    action: str  # app action (``action_<name>``), optionally with arguments
    label: str  # short footer / palette title
    help: str  # one sentence for the help screen and the palette
    footer: bool = False
    unavailable: str = ""  # why the action does nothing right now (palette), when it can't


CONTROL_OFF = ("K/R/E are off: this run was not launched by eagle-tui here (watched or attached), "
        "or the dashboard is --read-only.")

KEYS: tuple[KeySpec, ...] = (
    KeySpec("question_mark", "?", "help", "Help", "Show this help: every key and action.", True),
    KeySpec("q", "q", "quit", "Quit", "Quit eagle-tui (the watched server keeps running).", True),
    KeySpec("slash", "/", "filter", "Filter",
            "Filter the log live: only lines matching the text or regex stay visible.", True),
    KeySpec("ctrl+f", "ctrl+f", "search", "Search",
            "Search the log; Enter jumps to the first match, then n / N.", False),
    KeySpec("n", "n", "find(True)", "Next match", "Jump to the next search (or filter) match."),
    KeySpec("N", "N", "find(False)", "Previous match",
            "Jump to the previous search (or filter) match."),
    KeySpec("e", "e", "first_error", "First error",
            "Jump to the first error or traceback line in the log.", True),
    KeySpec("c", "c", "crash_line", "Crash line", "Jump to the crash's root-cause line."),
    KeySpec("f,end", "f/End", "follow", "Follow",
            "Follow the log again (scrolling up pauses it).", True),
    KeySpec("m", "m", "marker", "Marker", "Insert a numbered marker line into the log."),
    KeySpec("w", "w", "wrap", "Wrap", "Toggle wrapping of long log lines."),
    KeySpec("o", "o", "own_polls", "Own polls",
            "Show / fold eagle-tui's own /health, /metrics and /server_info lines in the log "
            "(folded by default; the log's status line counts them)."),
    KeySpec("h", "h", "cycle_host", "Host",
            "Multi-node log: cycle all hosts → each host in turn → all hosts.", True,
            "This log has lines of one host only; h switches hosts on a multi-node run."),
    KeySpec("K", "K", "kill_run", "Kill",
            "Kill the launched run's process group (TERM, then KILL), after a confirmation.",
            True, CONTROL_OFF),
    KeySpec("R", "R", "restart_run", "Restart",
            "Restart the launched run with the same command, as a new run (asks first).", True,
            CONTROL_OFF),
    KeySpec("E", "E", "edit_run", "Edit",
            "Edit the launched run's command, lint it and relaunch it as a new run.", True,
            CONTROL_OFF),
    KeySpec("F", "F", "fix_run", "Fix",
            "Relaunch with the fix eagle-tui knows (an alert's or the lint's): the relaunch "
            "dialog opens on the fixed command, the change shown; Enter lints and relaunches.",
            True, "F is off: no known fix for this run (or it was not launched by eagle-tui "
            "here, or the dashboard is --read-only)."),
    KeySpec("ctrl+s", "ctrl+s", "save_log", "Save log",
            "Save the log buffer to a text file (the notification names it)."),
    KeySpec("t", "t", "cycle_theme", "Theme", "Cycle dark → light → high-contrast themes.", True),
    KeySpec("s", "s", "screenshot", "Screenshot",
            "Export an SVG screenshot (the notification names the file).", True),
    KeySpec("1", "1", "show_pane('startup')", "Startup pane", "Show / focus the startup pane."),
    KeySpec("2", "2", "show_pane('log')", "Log pane", "Show / focus the log."),
    KeySpec("3", "3", "show_pane('gpus')", "GPU pane",
            "Show / focus the GPUs; ↑/↓ select a GPU to list its processes."),
    KeySpec("4", "4", "show_pane('metrics')", "Metrics pane", "Show / focus the metrics."),
    KeySpec("5", "5", "show_pane('alerts')", "Alerts pane", "Show / focus the alerts."),
)

# Keys handled by a focused widget rather than the app (listed in help only).
LOCAL_KEYS: tuple[tuple[str, str, str], ...] = (
    ("Log", "↑ ↓ PgUp PgDn Home", "scroll (scrolling up pauses following); past the oldest "
     "line in memory it goes on into the file, Home goes to line 1"),
    ("Log", "← →", "scroll long lines sideways (when not wrapping)"),
    ("Filter / search box", "Enter", "keep the filter / jump to the first match"),
    ("Filter / search box", "Esc", "clear the query and close the box"),
    ("Filter / search box", "← → Home End", "move in the query (Backspace / Del delete)"),
    ("Filter / search box", "ctrl+u / ctrl+k", "delete to the start / to the end of the query"),
    ("Filter / search box", "ctrl+w", "delete the word before the cursor"),
    ("Filter / search box", "↑ ↓ PgUp PgDn", "scroll the log while typing"),
    ("GPUs", "↑ ↓ / click", "select a GPU and list its processes"),
    ("GPUs", "Esc", "clear the selection"),
    ("Crash banner", "Enter / click", "jump the log to the root-cause line"),
    ("K / R confirmation", "y / Enter · n / Esc", "go ahead · cancel"),
    ("E command editor", "Enter", "lint the line; with errors shown, Enter again launches"),
    ("E command editor", "Esc", "cancel (nothing is stopped)"),
    ("F fix dialog", "ctrl+r", "switch the line between the fix and the running command"),
    ("Anywhere", "Tab / Shift+Tab", "move focus between panes"),
    ("Anywhere", "ctrl+p", "command palette: every action by name"),
)


def bindings() -> list[Binding]:
    return [
        Binding(k.keys, k.action, k.label, show=k.footer, key_display=k.display) for k in KEYS
    ]


__all__ = ["CONTROL_OFF", "KEYS", "LOCAL_KEYS", "KeySpec", "bindings"]
