"""Reconciliation: exported entries against billing records, entry by entry."""

from toolkit.reconciliation.reconciliation import COMPARISONS, Reconciliation, reconcile

__all__ = ["COMPARISONS", "Reconciliation", "reconcile"]
