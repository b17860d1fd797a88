"""Supervision of a submitted run: the attempts kept on the run's own storage, the steps each attempt logged, and
the one decision after every attempt: done, resubmit through the resume gate, or give up with a named reason."""
