"""Secrets never reach a stored or shown command line."""

from __future__ import annotations

from eagle_tui.model.launching.redact import MASK, redact_text, redact_words


def test_secret_flags_env_words_and_token_shapes() -> None:
    words = ["HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz", "CUDA_VISIBLE_DEVICES=0", "vllm", "serve",
             "/m", "--api-key", "k1", "k2", "--port", "8000", "--hf-token=hf_x",
             "--served-model-name", "sk-abcdefghijklmnopqrstuv"]
    out = redact_words(words)
    assert out == ["HF_TOKEN=***", "CUDA_VISIBLE_DEVICES=0", "vllm", "serve", "/m", "--api-key",
                   MASK, MASK, "--port", "8000", "--hf-token=***", "--served-model-name", MASK]
    joined = " ".join(out)
    assert "k1" not in joined and "hf_abc" not in joined and "sk-abc" not in joined


def test_text_form_and_unsplittable() -> None:
    assert redact_text("python -m sglang.launch_server --api-key 'my key' --port 1") == \
        "python -m sglang.launch_server --api-key '***' --port 1"
    assert redact_text("vllm serve 'unclosed") == MASK


def test_plain_command_untouched() -> None:
    words = ["python", "-m", "sglang.launch_server", "--model-path", "/m",
             "--speculative-algorithm", "EAGLE3"]
    assert redact_words(words) == words


def test_secret_flags_of_the_real_tables_are_named_by_their_last_word() -> None:
    """Which of the engines' own flags are secrets: a flag counting tokens never is."""
    from eagle_tui.model.launching.redact import is_secret_name
    from eagle_tui.probe.tables import load_tables

    found = {e: sorted(o for o in t.long_opts() if is_secret_name(o))
             for e, t in load_tables().items()}
    assert found == {
        # (two false positives that end in "token": their values are hidden, never leaked)
        "sglang": ["--admin-api-key", "--api-key", "--bucket-time-to-first-token",
                   "--kt-max-deferred-experts-per-token", "--ssl-keyfile-password"],
        "vllm": ["--api-key", "--hf-token"],
    }
    for name in ("HF_TOKEN", "OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD",
                 "HUGGING_FACE_HUB_TOKEN", "--auth-token"):
        assert is_secret_name(name), name
    for name in ("--max-total-tokens", "--speculative-num-draft-tokens", "--tokenizer",
                 "MAX_TOKENS", "--speculative-token-map", "--allow-credentials"):
        assert not is_secret_name(name), name
