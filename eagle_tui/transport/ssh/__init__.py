"""The SSH transport, one module per concern; callers need only :class:`SshTransport`.

- :mod:`.transport`: :class:`SshTransport`, the :class:`~eagle_tui.transport.base.Transport`
  for one host (one connection, many channels).
- :mod:`.config`: destinations (``user@host:port``) resolved with ``~/.ssh/config``.
- :mod:`.conn`: the kept-alive connection, reconnect with backoff, connection-state events.
- :mod:`.link`: one paramiko client and its authentication (paramiko is imported lazily here).
- :mod:`.hostkeys`: ``known_hosts`` checks and the accept-new policy.
- :mod:`.stream`: a remote command's output as an asyncio stream.
- :mod:`.tail`: the remote ``tail -F`` command and its byte-exact resume.
- :mod:`.http`: HTTP (``/metrics``, ``/server_info``) tunnelled through ``direct-tcpip``.

Importing this package does not import paramiko (a slow import); the first connection does.
"""

from __future__ import annotations

from eagle_tui.transport.ssh.link import SshOptions
from eagle_tui.transport.ssh.transport import SshTransport, backoff_delay

__all__ = ["SshOptions", "SshTransport", "backoff_delay"]
