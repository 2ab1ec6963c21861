"""OpenAI-compatible request parsing and response bodies, plus SGLang's ``/server_info``.

Kept apart from the socket code so the JSON shapes (what bench and real clients parse) can be read
and tested on their own. Streaming follows vLLM/SGLang: a first chat chunk carrying the role, one
chunk per verify step (several tokens when drafts are accepted: the burst pattern a client can
measure), a final chunk with ``finish_reason``, an optional usage chunk, then ``[DONE]``.
"""

from __future__ import annotations

import itertools
import json
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from eagle_tui.errors import EagleError
from eagle_tui.model.boundary.loaders import LoadError, load_json

from . import sglang_log
from .scenario import ServerConfig

if TYPE_CHECKING:
    from .engine import Request, ServingEngine

_IDS = itertools.count(0x5EED)


class ApiError(EagleError):
    def __init__(self, status: int, message: str, kind: str = "BadRequestError") -> None:
        super().__init__(message)
        self.status, self.message, self.kind = status, message, kind

    def payload(self, engine: str) -> dict[str, Any]:
        if engine == "vllm":
            return {"error": {"message": self.message, "type": self.kind, "param": None,
                              "code": self.status}}
        return {"object": "error", "message": self.message, "type": self.kind, "param": None,
                "code": self.status}


def _count_tokens(text: str) -> int:
    """≈4 characters per token: only used for usage numbers and prefill time."""
    return max(1, round(len(text) / 4))


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    raise ApiError(400, "message content must be a string or a list of parts")


@dataclass(frozen=True, slots=True)
class ChatOrCompletion:
    chat: bool
    model: str
    prompt_tokens: int
    max_tokens: int
    stream: bool
    include_usage: bool
    rid: str
    created: int

    def _base(self) -> dict[str, Any]:
        return {"id": self.rid, "object": "chat.completion.chunk" if self.chat else
                "text_completion", "created": self.created, "model": self.model}

    def _choice(self, text: str, finish: str | None) -> dict[str, Any]:
        if self.chat:
            delta = {"content": text} if text or finish is None else {}
            return {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return {"index": 0, "text": text, "logprobs": None, "finish_reason": finish,
                "stop_reason": None}

    def opening(self) -> list[str]:
        if not self.chat:
            return []
        first = self._base() | {"choices": [{"index": 0, "delta": {"role": "assistant",
                                                                    "content": ""},
                                             "logprobs": None, "finish_reason": None}]}
        return [json.dumps(first)]

    def delta(self, text: str) -> str:
        return json.dumps(self._base() | {"choices": [self._choice(text, None)]})

    def _usage(self, req: Request) -> dict[str, int]:
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": req.generated,
                "total_tokens": self.prompt_tokens + req.generated}

    def closing(self, req: Request) -> list[str]:
        out = [json.dumps(self._base() | {"choices": [self._choice("", req.finish_reason)]})]
        if self.include_usage:
            out.append(json.dumps(self._base() | {"choices": [], "usage": self._usage(req)}))
        return out

    def final(self, req: Request, text: str) -> dict[str, Any]:
        base = self._base() | {"object": "chat.completion" if self.chat else "text_completion"}
        if self.chat:
            choice: dict[str, Any] = {"index": 0, "message": {"role": "assistant",
                                                              "content": text},
                                      "logprobs": None, "finish_reason": req.finish_reason}
        else:
            choice = self._choice(text, req.finish_reason)
        return base | {"choices": [choice], "usage": self._usage(req)}


def parse_request(cfg: ServerConfig, path: str, body: bytes) -> ChatOrCompletion:
    """Validate a completions/chat request the way the engines do (400/404 with a message)."""
    try:
        data = load_json(body or b"{}", "the request body")
    except LoadError as e:
        raise ApiError(400, f"invalid JSON body: {e.reason}") from e
    if not isinstance(data, dict):
        raise ApiError(400, "request body must be a JSON object")
    chat = path.endswith("/chat/completions")
    model = data.get("model") or cfg.served_name
    if cfg.engine == "vllm" and model != cfg.served_name:
        raise ApiError(404, f"The model `{model}` does not exist.", "NotFoundError")
    if chat:
        messages = data.get("messages")
        if not isinstance(messages, list) or not messages:
            raise ApiError(400, "'messages' must be a non-empty list")
        prompt = sum(_count_tokens(_text_of(m.get("content", ""))) + 4 for m in messages
                     if isinstance(m, dict))
    else:
        raw = data.get("prompt")
        if isinstance(raw, str):
            prompt = _count_tokens(raw)
        elif isinstance(raw, list) and raw and all(isinstance(x, int) for x in raw):
            prompt = len(raw)
        else:
            raise ApiError(400, "'prompt' must be a string or a list of token ids")
    max_tokens = data.get("max_completion_tokens", data.get("max_tokens", 128))
    if not isinstance(max_tokens, int) or max_tokens < 1:
        raise ApiError(400, "'max_tokens' must be a positive integer")
    if prompt + max_tokens > cfg.model.context_len:
        raise ApiError(400, f"'max_tokens' is too large: {max_tokens}. This model's maximum "
                       f"context length is {cfg.model.context_len} tokens and your request has "
                       f"{prompt} input tokens")
    options = data.get("stream_options") or {}
    prefix = "chatcmpl" if chat else "cmpl"
    return ChatOrCompletion(chat, model, prompt, max_tokens, bool(data.get("stream", False)),
                            bool(isinstance(options, dict) and options.get("include_usage")),
                            f"{prefix}-{next(_IDS):016x}", int(time.time()))


def sglang_server_info(engine: ServingEngine) -> dict[str, Any]:
    """``GET /server_info``: server args, scheduler info, one internal state per DP rank."""
    cfg = engine.cfg
    args = sglang_log.server_args_fields(cfg)
    state: dict[str, Any] = {
        "last_gen_throughput": round(engine.last_gen_throughput, 2),
        "memory_usage": {"weight": round(cfg.weights_gib, 2), "kvcache": round(cfg.kv_gib, 2),
                         "token_capacity": cfg.kv_tokens, "graph": 1.87},
        "load": len(engine.running) + len(engine.waiting),
        "waiting_queue_size": len(engine.waiting), "running_batch_size": len(engine.running),
        "speculative_num_steps": engine.modes.steps if engine.modes.reported else cfg.num_steps,
        "speculative_num_draft_tokens": engine.modes.draft_tokens,
    }
    if engine.avg_accept_len is not None:
        state["avg_spec_accept_length"] = round(engine.avg_accept_len, 4)
    # 0.5.23 puts the engine's startup_time beside the args (http_server.py get_server_info)
    startup = {"startup_time": engine.startup_time} if engine.startup_time is not None else {}
    return args | {"max_total_num_tokens": cfg.kv_tokens, "max_req_input_len":
                   cfg.model.context_len - 5, **startup, "internal_states": [state],
                   "version": "0.5.18"}


__all__ = ["ApiError", "ChatOrCompletion", "parse_request", "sglang_server_info"]
