"""The Herdr worker fleet, pure: omp-conductor 0.19.7's worker-pane management on real herdr 0.8.2.

* ``parse``    — herdr CLI answers (one-line sorted-key JSON envelopes) → typed facts, total.
* ``liveness`` — ``followerPulseFromProcessInfo``: alive / dead / unknown (with reasons) from a
  pane's foreground process table; the follower is ``panefleet herdr follow RUN_ID``.
* ``records``  — the durable run / workspace records and the ``Store`` step protocol (action names
  and payloads) the shell's SQLite store answers.
* ``fleet``    — ownership discovery, ensure-workspace, open-pane, release / retire and reconcile as
  generator programs; outcome kinds and field names are the seed's. Its docstring lists every
  deliberate deviation from the seed (notably how a workspace herdr already closed with its last
  pane is reported: ``workspace-removed`` with ``reason``, and no ``workspace close`` call). Its
  ``programs`` module registers them in ``pure.operations`` (``herdr.reconcile``, ``herdr.open``,
  ``herdr.retire``, ``herdr.release``, ``herdr.ensure``, ``herdr.status``) for replay, ``panefleet
  decide`` and the golden runner.
"""
