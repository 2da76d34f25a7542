"""System kinds, one module each, registered in
:data:`~ragcourt.answering.system_registry.SYSTEM_KINDS` (imported on its first lookup: a new
kind is one new module here)."""
