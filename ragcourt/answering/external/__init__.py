"""External candidate systems: answers files, Python callables and HTTP endpoints.

Syntax: :mod:`.specs`; answering: :mod:`.answer` (dispatch), :mod:`.answers_file`,
:mod:`.python_callable`, :mod:`.http_endpoint`; freshness inputs: :mod:`.inputs`.
"""
