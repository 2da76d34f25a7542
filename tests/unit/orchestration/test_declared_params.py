"""A stage sees only the params it declares: with the strict switch on, an undeclared key is a
one-line error naming the stage and the key; declared keys, path inputs and the key picking an
input's partition read as usual; without the switch the params pass through unchanged."""

from __future__ import annotations

import pytest

from ragcourt.core.errors import ConfigError
from ragcourt.orchestration.declared_params import STRICT_ENV, declared_keys, declared_view
from ragcourt.orchestration.params import Params
from ragcourt.orchestration.stage_def import Dep, StageDef, art


def _stage() -> StageDef:
    return StageDef(
        "probe",
        "ragcourt.corpus.ingest:run",
        "A stage for this test.",
        deps=(Dep(param="corpus.dir"), art("chunks", chunking="@qagen.reference_chunking")),
        params=("judge.udcg", "chunkings.{chunking}.size"),
    )


def test_undeclared_reads_fail_and_declared_ones_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(STRICT_ENV, "1")
    params = Params()
    view = declared_view(params, _stage(), {"chunking": "c256"})
    assert view.judge.udcg == params.judge.udcg
    assert view.corpus.dir == params.corpus.dir  # a path input
    assert view.qagen.reference_chunking == params.qagen.reference_chunking  # picks a partition
    assert view.chunkings["c256"].size == params.chunkings["c256"].size
    with pytest.raises(ConfigError, match=r"stage 'probe' reads params 'judge\.judges"):
        _ = view.judge.judges["llm"]
    with pytest.raises(ConfigError, match=r"reads params 'qagen\.n_items'"):
        _ = view.qagen.n_items + 1
    with pytest.raises(ConfigError, match=r"reads params 'qagen\.method'"):
        _ = view.qagen.method == "answer_first"
    with pytest.raises(ConfigError, match=r"reads params 'failure\.max_error_rate'"):
        _ = view.failure.max_error_rate
    with pytest.raises(ConfigError, match=r"reads params 'systems_file'"):
        str(view.systems_file)
    assert params.judge.judges  # the original is untouched


def test_keys_include_inputs_and_the_view_is_the_params_when_not_strict(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    keys = declared_keys(_stage(), {"chunking": "c512"})
    assert keys == {"judge.udcg", "chunkings.c512.size", "corpus.dir", "qagen.reference_chunking"}
    monkeypatch.delenv(STRICT_ENV, raising=False)
    params = Params()
    assert declared_view(params, _stage(), {"chunking": "c256"}) is params
