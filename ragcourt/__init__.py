"""ragcourt. Importing it redacts URL secrets in every log record of the process
(:func:`ragcourt.core.redact.install_log_redaction`)."""

from ragcourt.core.redact import install_log_redaction

install_log_redaction()
