"""The reader's network (torch; training and export only): a BERT encoder, a span head (start
and end logits per token) and an answerability head on ``[CLS]`` (one logit).

P(answerable) = sigmoid(answerability logit); the span is the best (start <= end) pair of
passage tokens, SQuAD 2.0 style, read only where the pair is answerable.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from torch import nn


class ReaderNet(nn.Module):
    """Encoder + span head + answerability head (module doc)."""

    def __init__(self, encoder: Any) -> None:
        super().__init__()
        self.encoder = encoder
        hidden = int(encoder.config.hidden_size)
        self.span = nn.Linear(hidden, 2)
        self.answerable = nn.Linear(hidden, 1)

    def forward(
        self, input_ids: torch.Tensor, token_type_ids: torch.Tensor, attention_mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        h = self.encoder(
            input_ids=input_ids, token_type_ids=token_type_ids, attention_mask=attention_mask
        ).last_hidden_state
        logits = self.span(h)
        return logits[..., 0], logits[..., 1], self.answerable(h[:, 0]).squeeze(-1)


def load_base(folder: Path) -> ReaderNet:
    """A fresh reader on the BERT encoder saved in ``folder`` (transformers format)."""
    from transformers import BertModel

    encoder = BertModel.from_pretrained(str(folder), add_pooling_layer=False)
    return ReaderNet(encoder).float()  # fp16 base weights (a carried copy) train in fp32
