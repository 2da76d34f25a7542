"""Human labels and prediction-powered inference.

A small stratified, seeded sample of answer items (question, references, one system's answer)
and passage items (question, one retrieved passage) is labelled by a person on a local page
(``ragcourt label serve``) or in a spreadsheet (``ragcourt label export`` / ``import``). The
labels (``data/labels/*.jsonl``, append-only) measure how well each judge agrees with people
on this data (:mod:`~ragcourt.calibration.agreement`) and correct the judges' system scores by
prediction-powered inference (:mod:`~ragcourt.calibration.ppi`, ``ppi_py``):
θ̂ = mean(f(X̃)) − mean(f(X) − Y), with a CLT interval that accounts for the judge's errors.
"""
