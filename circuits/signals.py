"""Signals the circuits layer sends, for the layers above it that keep rows about circuits."""
from django.dispatch import Signal

#: Sent by services.delete_circuit inside its transaction, before the circuit and its
#: versions are deleted (`sender` = Circuit, `circuit` = the circuit): receivers delete
#: what protects the versions (runs) and schedule their own clean-up on commit.
circuit_deleting = Signal()
