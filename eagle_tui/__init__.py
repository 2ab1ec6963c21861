"""eagle-tui: a terminal dashboard for speculative-decoding LLM servers (SGLang, vLLM)."""

__version__ = "0.1.0"
