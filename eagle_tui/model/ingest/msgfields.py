"""What both engines' message parsers share: ``key: value`` fields and merged spec settings."""

from __future__ import annotations

from dataclasses import dataclass, field

from eagle_tui.model.events import SpecConfig

MAX_MODELS = 16  # distinct architectures remembered (bounded state on adversarial input)


def fields(rest: str) -> dict[str, str]:
    """``"a: 1, b c: 2, "`` → ``{"a": "1", "b c": "2"}``; first occurrence of a key wins."""
    out: dict[str, str] = {}
    for part in rest.rstrip().rstrip(",").split(", "):
        key, sep, value = part.partition(": ")
        if sep:
            out.setdefault(key.strip(), value.strip())
    return out


@dataclass(slots=True)
class SpecFields:
    """Speculative settings merged from every line that mentions them."""

    values: dict[str, object] = field(default_factory=dict)

    def merge(self, found: dict[str, object]) -> SpecConfig | None:
        changed = False
        for key, value in found.items():
            if value is not None and self.values.get(key) != value:
                self.values[key] = value
                changed = True
        if not changed or not (self.values.get("algorithm") or self.values.get("draft_model")):
            return None
        v = self.values
        return SpecConfig(
            algorithm=_opt_str(v.get("algorithm")),
            draft_model=_opt_str(v.get("draft_model")),
            num_steps=_opt_int(v.get("num_steps")),
            eagle_topk=_opt_int(v.get("eagle_topk")),
            num_draft_tokens=_opt_int(v.get("num_draft_tokens")),
        )


def _opt_str(v: object) -> str | None:
    return v if isinstance(v, str) and v else None


def _opt_int(v: object) -> int | None:
    return v if isinstance(v, int) else None


__all__ = ["MAX_MODELS", "SpecFields", "fields"]
