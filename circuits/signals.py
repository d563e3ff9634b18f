"""Signals the circuits layer sends, for the layers above it that keep rows about circuits."""
from django.dispatch import Signal

#: Sent by services.delete_circuit inside its transaction, before the circuit and its
#: versions are deleted (`sender` = Circuit, `circuit` = the circuit): receivers delete
#: what protects the versions (runs) and schedule their own clean-up on commit.
circuit_deleting = Signal()

#: Sent after a commit that may have narrowed who can read a circuit: its visibility
#: changed, its grants changed, or its share token was rotated (`sender` = Circuit,
#: `circuit_id`). Receivers recheck the access they handed out (open websockets).
circuit_access_changed = Signal()
