"""Reconcilers: scheduled functions that heal open tasks the retry machinery can no longer reach."""
