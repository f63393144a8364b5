"""The office: sessions with manifests, a mailbox between them, and task reports.

- ``sessions``: who is at work (``.ai/maestro/sessions/<id>/manifest.json``), their
  liveness, and the functions the run engine calls around a dispatch.
- ``mailbox``: messages between sessions (``.ai/maestro/mail/mail.db``), receipts,
  threads, and the per-session doorbell files that wake ``mail wait``.
- ``waiting``: ``mail wait``, woken by file-system notification, never by a sleep loop.
- ``door``: a confined spoke's one way into the office, as its own session.
"""
