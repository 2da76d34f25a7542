"""Building blocks of the report stage: artifact loading, tables, plots, sections, templates.

``ragcourt.reporting.stage`` assembles them; every section degrades to a clear note when the
artifact it needs is missing, so a partial pipeline still gives a readable page.
"""
