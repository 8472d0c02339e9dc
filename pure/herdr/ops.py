"""Registration of the Herdr fleet operations in the operation registry (for replay and goldens)."""

from __future__ import annotations

from pure import ops
from pure.herdr import fleet

ops.register("herdr.reconcile", fleet.ReconcileRequest, fleet.reconcile_program)
ops.register("herdr.open", fleet.OpenRequest, fleet.open_program)
ops.register("herdr.retire", fleet.RetireRequest, fleet.retire_program)
ops.register("herdr.release", fleet.ReleaseRequest, fleet.release_program)
ops.register("herdr.ensure", fleet.EnsureRequest, fleet.ensure_program)
ops.register("herdr.status", fleet.StatusRequest, fleet.status_program)
