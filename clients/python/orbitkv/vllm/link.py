"""The attachment of one connector part to the Manager on this host, kept through the Manager's absence: attach when
first needed, again at most every `retry_attach_s` after a failure, and let go when the Manager died or restarted."""

from __future__ import annotations

import logging
import os
import time
from typing import Callable

from .. import Client, OrbitKVError
from .config import Settings
from .stats import OrbitKVStats

logger = logging.getLogger(__name__)

# Library statuses that mean the attachment is gone (docs/clients.md): no Manager, an incompatible or stale one, one
# that died, detached this client or stopped answering in the protocol.
_GONE = frozenset((-2, -3, -4, -7, -8, -9, -11))


class ManagerLink:
    def __init__(self, settings: Settings, role: str, region_bytes: int, stats: OrbitKVStats,
                 on_attach: Callable[[Client], None] | None = None,
                 on_detach: Callable[[], None] | None = None) -> None:
        self._settings = settings
        self._name = f"vllm-{role}-{os.getpid()}"
        self._region_bytes = region_bytes
        self._stats = stats
        self._on_attach = on_attach
        self._on_detach = on_detach
        self._client: Client | None = None
        self._next_attempt = 0.0
        self._warned = False
        # attachments so far: leases belong to the attachment that took them
        self.epoch = 0

    def client(self) -> Client | None:
        """The attached client, attaching first when it is time to try; None while the Manager is unavailable."""
        if self._client is not None:
            return self._client
        now = time.monotonic()
        if now < self._next_attempt:
            return None
        self._next_attempt = now + self._settings.retry_attach_s
        try:
            client = Client(dir=self._settings.dir, name=self._name, data_region_bytes=self._region_bytes,
                            attach_timeout_ms=1000, response_timeout_ms=self._settings.load_timeout_ms)
        except (OrbitKVError, OSError) as error:
            self._stats.add("manager_unavailable")
            if not self._warned:
                logger.warning("OrbitKV: no Manager at %s (%s); vLLM runs on without it and tries again every %.0f s",
                               self._settings.dir, error, self._settings.retry_attach_s)
                self._warned = True
            return None
        self._client = client
        self.epoch += 1
        if self._warned:
            logger.warning("OrbitKV: attached to the Manager at %s again", self._settings.dir)
        self._warned = False
        if self._on_attach is not None:
            try:
                self._on_attach(client)
            except Exception:
                self.close()
                raise
        return client

    @property
    def attached(self) -> Client | None:
        """The client if attached now (never attaches)."""
        return self._client

    def failed(self, error: Exception) -> None:
        """A call failed: count it, and let the client go when the Manager is gone (the next use attaches anew)."""
        self._stats.add("errors")
        if isinstance(error, OrbitKVError) and error.code in _GONE:
            self._stats.add("manager_unavailable")
            logger.warning("OrbitKV: the Manager at %s is gone (%s); vLLM runs on without it", self._settings.dir,
                           error)
            self._warned = True
            self.close()
            self._next_attempt = time.monotonic() + self._settings.retry_attach_s
        else:
            logger.warning("OrbitKV: %s", error)

    def close(self) -> None:
        client, self._client = self._client, None
        if client is None:
            return
        if self._on_detach is not None:
            self._on_detach()
        try:
            client.close()
        except OrbitKVError as error:
            logger.warning("OrbitKV: detach: %s", error)
