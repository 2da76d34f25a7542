"""Model registry (``configs/models.yaml``): embedders and local LLMs by name.

Users add a model here without code. Embedders resolve to a sentence-transformers folder;
local LLMs resolve to a GGUF file whose sha256 is checked before loading. The file is
``llm.models_file`` (default :data:`ragcourt.core.catalog.DEFAULT_MODELS_FILE`), found by
:func:`registry_path`.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import ConfigDict, Field, ValidationError

from ragcourt.core import catalog
from ragcourt.core.errors import ConfigError
from ragcourt.core.fixed_model import FixedModel
from ragcourt.core.user_yaml import read_user_yaml


def registry_path(models_file: str | Path | None = None) -> Path:
    """The registry file: ``models_file`` (default ``configs/models.yaml``) as given, relative
    to the cwd; a relative path missing there is looked up in the ragcourt source tree, so
    stages run in a scratch folder still find the shipped ``configs/models.yaml``."""
    p = Path(models_file or catalog.DEFAULT_MODELS_FILE)
    if p.is_file() or p.is_absolute():
        return p
    shipped = catalog.SOURCE_ROOT / p
    return shipped if shipped.is_file() else p


class EmbedderEntry(FixedModel):
    """Where an embedding model lives and how it is run.

    ``source``: ``package`` (a folder inside an installed package: ``package`` + ``subdir``),
    ``zip_parts`` (a zip split over several packages: its ``subdir`` folder, or its one file
    ``member``, extracted once into a cache folder), or ``path`` (a local folder or file).
    ``backend``: ``sentence_transformers`` (a model folder) or ``llama_cpp`` (a GGUF file run in
    llama.cpp's embedding mode, ``window`` tokens of context). ``query_prefix`` and
    ``document_prefix`` are prepended to queries and chunk texts (e.g. nomic's task prefixes).
    """

    model_config = ConfigDict(strict=False)  # models.yaml is written by people

    source: Literal["package", "zip_parts", "path"]
    package: str | None = None
    subdir: str | None = None
    parts: list[str] = Field(default_factory=list)
    path: str | None = None
    dim: int = Field(gt=0)
    optional: bool = False
    install_hint: str | None = None
    # ISO 639-1 codes the model was trained on; null = multilingual / not stated. The embed
    # stage and `ragcourt doctor` warn when the corpus holds a language not in this list.
    languages: list[str] | None = None
    backend: Literal["sentence_transformers", "llama_cpp"] = "sentence_transformers"
    member: str | None = None  # zip_parts: one file of the zip (a GGUF) instead of a folder
    window: int | None = Field(default=None, gt=8)  # tokens read per text; None: the model's
    query_prefix: str = ""
    document_prefix: str = ""


class LLMEntry(FixedModel):
    """A local GGUF model served in-process by llama-cpp-python.

    ``source``: ``package`` (file ``filename`` inside installed package ``package``),
    ``parts`` (a file split over several packages, concatenated once into a cache folder),
    or ``path``. ``sha256`` of the assembled GGUF is verified before first load.
    """

    model_config = ConfigDict(strict=False)  # models.yaml is written by people

    source: Literal["package", "parts", "path"]
    package: str | None = None
    parts: list[str] = Field(default_factory=list)
    filename: str | None = None
    path: str | None = None
    sha256: str
    chat_template: str = "gguf"  # "gguf": the template stored in the file's metadata
    n_ctx: int = Field(default=4096, gt=0)
    optional: bool = False
    install_hint: str | None = None
    license: str | None = None


class ModelRegistry(FixedModel):
    embedders: dict[str, EmbedderEntry] = Field(default_factory=dict)
    llms: dict[str, LLMEntry] = Field(default_factory=dict)

    def embedder(self, name: str) -> EmbedderEntry:
        if name not in self.embedders:
            raise ConfigError(
                f"embedder model '{name}' is not in the model registry "
                f"(known: {sorted(self.embedders)})"
            )
        return self.embedders[name]

    def llm(self, name: str) -> LLMEntry:
        if name not in self.llms:
            raise ConfigError(
                f"local model '{name}' is not in the model registry (known: {sorted(self.llms)})"
            )
        return self.llms[name]


@cache
def _load(path: str) -> ModelRegistry:
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"{p}: model registry not found")
    data = read_user_yaml(p, ConfigError, empty={})
    try:
        return ModelRegistry.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        loc = ".".join(str(x) for x in first["loc"])
        raise ConfigError(f"{p}: key '{loc}': {first['msg']}") from None


def load_registry(path: Path | str = catalog.DEFAULT_MODELS_FILE) -> ModelRegistry:
    """Load (and memoise per path) the model registry."""
    return _load(str(Path(path).resolve()))
