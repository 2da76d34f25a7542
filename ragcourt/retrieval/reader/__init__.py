"""The trained reading model: P(a question is answerable from a passage alone) and its answer
span (:mod:`.model`), its training data (:mod:`.examples`, :mod:`.question_edits`), training
and export (:mod:`.training`, :mod:`.build`) and measurement (:mod:`.evaluation`)."""
