"""Planning: hardware probe, Plan types, fit arithmetic, downgrade ladder, history of what worked."""
