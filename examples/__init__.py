"""Example external systems for ragcourt (importable as ``examples.<module>`` from the project
root). See examples/README.md."""
